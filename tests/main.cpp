// The one translation unit that compiles Catch2's main (about 15 s on two cores: keep it alone).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
