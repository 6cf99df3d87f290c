// Every reader, fed every prefix of a valid input, either reads it or says why with an InputError: never a
// crash, a hang or another kind of error (a deterministic cousin of fuzzing).
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "engine/error.h"
#include "tests/test_support.h"
#include "traces/formats/trace_import.h"
#include "traces/text_file.h"

using namespace clustersim;

TEST_CASE("truncated inputs give input errors, never crashes", "[traces][input]") {
    const auto dir = std::filesystem::temp_directory_path() / "clustersim_truncation";
    std::filesystem::create_directories(dir);
    struct Input {
        const char* fixture;
        const char* format;
        const char* name;
    };
    const Input inputs[] = {{"traces/two_ranks.json", "native", "t.json"},
                            {"traces/kineto_tiny.json", "kineto", "k.json"},
                            {"traces/text_short_line.txt", "simai", "w.txt"}};
    for (const Input& in : inputs) {
        const std::string whole = traces::read_text_file(testing::test_data(in.fixture));
        for (std::size_t length = 0; length < whole.size(); length += 3) {
            INFO(in.fixture << " cut at " << length);
            const auto path = (dir / in.name).string();
            std::ofstream(path, std::ios::binary).write(whole.data(), static_cast<std::streamsize>(length));
            traces::ImportOptions options;
            options.format = in.format;
            options.world_size = 4;
            try {
                (void)traces::import_traces({path}, options);
            } catch (const engine::InputError& e) {
                REQUIRE(std::string(e.what()).find(path) != std::string::npos);  // names the file
            }
        }
    }
    std::filesystem::remove_all(dir);
}
