// Parsing of text workload files and the grouping of their lines into micro-batches and model chunks.
#include "traces/formats/text_workload_file.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "engine/error.h"
#include "traces/op_graph.h"
#include "traces/text_file.h"

namespace clustersim::traces {

namespace {

constexpr std::array<const char*, 8> kinds = {"DATA",
                                              "MODEL",
                                              "HYBRID_TRANSFORMER",
                                              "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
                                              "HYBRID_DLRM",
                                              "HYBRID_DATA_MODEL",
                                              "HYBRID_MODEL_DATA",
                                              "MICRO"};

std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// Same layer and communication (compute times may differ between micro-batches: AICB's first one does).
bool same_layer(const TextLayer& a, const TextLayer& b) {
    for (std::size_t p = 0; p < 3; ++p) {
        if (a.phases[p].comm != b.phases[p].comm || a.phases[p].bytes != b.phases[p].bytes) return false;
    }
    return a.name == b.name;
}

}  // namespace

bool looks_like_text_workload(const std::string& text) {
    const auto first = words(text.substr(0, text.find('\n')));
    if (first.empty()) return false;
    for (const char* k : kinds) {
        if (first[0] == k) return true;
    }
    return false;
}

bool looks_like_simai_workload(const std::string& text) {
    if (!looks_like_text_workload(text)) return false;
    for (const std::string& w : words(text.substr(0, text.find('\n')))) {
        for (const char* key : {"all_gpus:", "ep:", "pp:", "vpp:", "ga:", "pp_comm"}) {
            if (w == key) return true;
        }
    }
    return false;
}

MicroBatchLayout micro_batch_layout(const std::vector<TextLayer>& layers, std::uint32_t ga) {
    const std::size_t n = layers.size();
    MicroBatchLayout best{0, n, n, ga, false};
    // The leading iteration-level lines are few (AICB writes up to 7): searching 256 keeps this O(n) per block size.
    constexpr std::size_t longest_prefix = 256;
    for (std::size_t prefix = 0; ga > 1 && prefix < std::min(n, longest_prefix); ++prefix) {
        for (std::size_t block = (n - prefix) / ga; block > 0 && block * ga > best.block * ga * best.unrolled;
             --block) {
            bool repeats = true;
            for (std::size_t k = prefix + block; k < prefix + ga * block && repeats; ++k)
                repeats = same_layer(layers[k], layers[k - block]);
            if (repeats) {
                best = MicroBatchLayout{prefix, block, prefix + ga * block, ga, true};
                break;
            }
        }
    }
    return best;
}

std::vector<std::size_t> chunk_starts(const std::vector<TextLayer>& layers, const MicroBatchLayout& layout,
                                      std::uint32_t chunks) {
    std::vector<std::size_t> starts(chunks + 1, 0);
    const std::size_t size = layout.last(0) - layout.first(0);
    std::map<std::string, std::size_t> occurrences;
    for (std::size_t k = layout.first(0); k < layout.last(0); ++k) ++occurrences[layers[k].name];
    std::string marker;
    for (std::size_t k = layout.first(0) + 1; k < layout.last(0) && marker.empty() && chunks > 1; ++k) {
        const std::size_t n = occurrences[layers[k].name];
        if (n >= chunks && n % chunks == 0) marker = layers[k].name;
    }
    std::size_t seen = 0, next = 1;
    const std::size_t every = marker.empty() ? 0 : occurrences[marker] / chunks;
    for (std::size_t k = 0; k < size && !marker.empty(); ++k) {
        if (layers[layout.first(0) + k].name != marker) continue;
        if (seen > 0 && seen % every == 0 && next < chunks) starts[next++] = k;
        ++seen;
    }
    if (marker.empty()) {
        for (std::uint32_t c = 1; c < chunks; ++c)
            starts[c] = c * (size / chunks) + std::min<std::size_t>(c, size % chunks);
    }
    starts[chunks] = size;
    return starts;
}

TextWorkloadFile parse_text_workload_file(const std::string& path, engine::Time time_unit) {
    const std::string text = read_text_file(path);
    std::vector<std::string> lines;
    {
        std::istringstream in(text);
        for (std::string l; std::getline(in, l);) lines.push_back(l);
    }
    auto fail = [&](int line, const std::string& message) -> void {
        throw engine::InputError(engine::SourceLocation{path, line, 0, ""}, message);
    };
    auto unsigned_at = [&](const std::string& w, int line, const char* what) {
        std::uint64_t v = 0;
        const auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
        if (ec != std::errc() || p != w.data() + w.size())
            fail(line, fmt::format("{}: expected a non-negative integer, got \"{}\"", what, w));
        return v;
    };
    // A size: at most what an op holds (traces::Op::max_op_bytes).
    auto bytes_at = [&](const std::string& w, int line, const char* what) {
        const std::uint64_t v = unsigned_at(w, line, what);
        if (v > Op::max_op_bytes)
            fail(line, fmt::format("{}: {} bytes is more than an op holds (at most 2^48 - 2)", what, v));
        return v;
    };
    // A time in the file's unit, in range: beyond about 28 hours (1e17 ps) a run's times cannot be represented.
    auto time_at = [&](const std::string& w, int line, const char* what) {
        const std::uint64_t v = unsigned_at(w, line, what);
        const auto most =
            static_cast<std::uint64_t>(100'000'000'000'000'000LL / std::max<std::int64_t>(1, time_unit.count()));
        if (v > most)
            fail(line, fmt::format("{} {} is out of range (at most {} in this format's unit)", what, v, most));
        return time_unit * static_cast<std::int64_t>(v);
    };
    if (lines.size() < 2) fail(1, "expected a parallelism header line and a layer count");
    TextWorkloadFile file;
    TextHeader& h = file.header;
    const auto head = words(lines[0]);
    if (head.empty() || !looks_like_text_workload(lines[0])) {
        std::string known;
        for (const char* k : kinds) known += (known.empty() ? "" : ", ") + std::string(k);
        fail(1, fmt::format("expected a parallelism ({}), got \"{}\"", known, head.empty() ? "" : head[0]));
    }
    h.kind = head[0];
    for (std::size_t i = 1; i + 1 < head.size(); ++i) {
        const std::string& key = head[i];
        if (key.back() != ':') continue;
        static const char* const known_keys[] = {
            "model_parallel_NPU_group:", "ep:", "pp:", "vpp:", "ga:", "all_gpus:", "checkpoints:",
            "checkpoint_initiates:"};
        if (std::find(std::begin(known_keys), std::end(known_keys), key) == std::end(known_keys)) {
            std::string known;
            for (const char* k : known_keys) known += (known.empty() ? "" : ", ") + std::string(k);
            fail(1, fmt::format("unknown header key '{}' (known: {}, pp_comm)", key, known));
        }
        const std::uint64_t v = unsigned_at(head[i + 1], 1, key.c_str());
        if (v > UINT32_MAX && key != "pp_comm")
            fail(1, fmt::format("{} {} is out of range (at most {})", key, v, UINT32_MAX));
        if (key == "model_parallel_NPU_group:")
            h.tp = static_cast<std::uint32_t>(v);
        else if (key == "ep:")
            h.ep = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, v));
        else if (key == "pp:")
            h.pp = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, v));
        else if (key == "vpp:")
            h.vpp = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, v));
        else if (key == "ga:")
            h.ga = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, v));
        else if (key == "all_gpus:")
            h.all_gpus = static_cast<std::uint32_t>(v);
        else if (key == "pp_comm")
            h.pp_comm = v;
    }
    for (std::size_t i = 1; i + 1 < head.size(); ++i) {
        if (head[i] == "pp_comm") h.pp_comm = bytes_at(head[i + 1], 1, "pp_comm");
    }
    const auto count_words = words(lines[1]);
    if (count_words.empty()) fail(2, "expected the number of layers");
    const std::uint64_t layer_count = unsigned_at(count_words[0], 2, "layer count");
    if (lines.size() < 2 + layer_count)
        fail(static_cast<int>(lines.size()),
             fmt::format("expected {} layer lines, the file has {}", layer_count, lines.size() - 2));
    std::vector<TextLayer>& layers = file.layers;
    for (std::uint64_t k = 0; k < layer_count; ++k) {
        const int line = static_cast<int>(k + 3);
        const auto w = words(lines[k + 2]);
        if (w.size() < 12)
            fail(line,
                 fmt::format(
                     "expected 12 fields (name, dep, then compute/comm/size for forward, input and weight gradient, "
                     "and update time), got {}",
                     w.size()));
        TextLayer layer;
        layer.name = w[0];
        layer.line = line;
        for (std::size_t p = 0; p < 3; ++p) {
            TextPhase& phase = layer.phases[p];
            phase.compute = time_at(w[2 + 3 * p], line, "compute time");
            phase.comm = w[3 + 3 * p];
            phase.bytes = bytes_at(w[4 + 3 * p], line, "communication size");
        }
        layer.update = time_at(w[11], line, "update time");
        layers.push_back(std::move(layer));
    }
    return file;
}

}  // namespace clustersim::traces
