// engine::split_list: the items between separators, untrimmed, empty items kept for the callers' checks.
#include <catch2/catch.hpp>

#include "engine/split_list.h"

using clustersim::engine::split_list;

TEST_CASE("split_list gives the items between separators as written", "[engine]") {
    REQUIRE(split_list("a,b,c") == std::vector<std::string>{"a", "b", "c"});
    REQUIRE(split_list("ring, torus") == std::vector<std::string>{"ring", " torus"});
    REQUIRE(split_list("") == std::vector<std::string>{""});
    REQUIRE(split_list("a,") == std::vector<std::string>{"a", ""});
    REQUIRE(split_list(",,") == std::vector<std::string>{"", "", ""});
    REQUIRE(split_list("0:3;1:4", ';') == std::vector<std::string>{"0:3", "1:4"});
}
