// Text workload expansion. Ranks are laid out with tensor parallelism fastest, then data, then pipeline
// (Megatron's order): rank = stage x (dp x tp) + replica x tp + t. Each iteration, per micro-batch (ga of them):
// forward through the layers (pipeline stages receive activations first and send them on after), then backward
// in reverse (input gradient, then weight gradient); the weight-gradient collectives of the last micro-batch run
// on their own stream, overlapping the rest of the backward, and each layer's update waits for its collective.
#include "traces/formats/text_workload_reader.h"

#include <array>
#include <charconv>
#include <sstream>

#include <fmt/format.h>

#include "engine/error.h"
#include "traces/text_file.h"

namespace clustersim::traces {

namespace {

struct Phase {
    engine::Time compute{};
    std::string comm = "NONE";
    std::uint64_t bytes = 0;
    int column = 0;  // of the comm type, for messages
};

struct Layer {
    std::string name;
    std::array<Phase, 3> phases;  // forward, input gradient, weight gradient
    engine::Time update{};
    int line = 0;
};

struct Header {
    std::string kind;
    std::uint32_t tp = 0, ep = 1, pp = 1, ga = 1, all_gpus = 0;
    std::uint64_t pp_comm = 0;
};

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

}  // namespace

bool looks_like_text_workload(const std::string& text) {
    const auto first = words(text.substr(0, text.find('\n')));
    if (first.empty()) return false;
    for (const char* k : kinds) {
        if (first[0] == k) return true;
    }
    return false;
}

OpGraph read_text_workload(const std::string& path, const TextWorkloadOptions& options) {
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
    if (lines.size() < 2) fail(1, "expected a parallelism header line and a layer count");
    Header h;
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
        const std::uint64_t v = unsigned_at(head[i + 1], 1, key.c_str());
        if (key == "model_parallel_NPU_group:")
            h.tp = static_cast<std::uint32_t>(v);
        else if (key == "ep:")
            h.ep = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, v));
        else if (key == "pp:")
            h.pp = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, v));
        else if (key == "ga:")
            h.ga = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, v));
        else if (key == "all_gpus:")
            h.all_gpus = static_cast<std::uint32_t>(v);
        else if (key == "pp_comm")
            h.pp_comm = v;
    }
    for (std::size_t i = 1; i + 1 < head.size(); ++i) {
        if (head[i] == "pp_comm") h.pp_comm = unsigned_at(head[i + 1], 1, "pp_comm");
    }
    const auto count_words = words(lines[1]);
    if (count_words.empty()) fail(2, "expected the number of layers");
    const std::uint64_t layer_count = unsigned_at(count_words[0], 2, "layer count");
    if (lines.size() < 2 + layer_count)
        fail(static_cast<int>(lines.size()),
             fmt::format("expected {} layer lines, the file has {}", layer_count, lines.size() - 2));
    std::vector<Layer> layers;
    for (std::uint64_t k = 0; k < layer_count; ++k) {
        const int line = static_cast<int>(k + 3);
        const auto w = words(lines[k + 2]);
        if (w.size() < 12)
            fail(line,
                 fmt::format(
                     "expected 12 fields (name, dep, then compute/comm/size for forward, input and weight gradient, "
                     "and update time), got {}",
                     w.size()));
        Layer layer;
        layer.name = w[0];
        layer.line = line;
        for (std::size_t p = 0; p < 3; ++p) {
            Phase& phase = layer.phases[p];
            phase.compute =
                options.time_unit * static_cast<std::int64_t>(unsigned_at(w[2 + 3 * p], line, "compute time"));
            phase.comm = w[3 + 3 * p];
            phase.bytes = unsigned_at(w[4 + 3 * p], line, "communication size");
        }
        layer.update = options.time_unit * static_cast<std::int64_t>(unsigned_at(w[11], line, "update time"));
        layers.push_back(std::move(layer));
    }
    const std::uint32_t world = options.world_size ? options.world_size : h.all_gpus;
    if (world == 0) fail(1, "the header has no all_gpus: give the world size (--world-size)");
    const bool hybrid =
        h.kind.rfind("HYBRID_TRANSFORMER", 0) == 0 || h.kind == "HYBRID_DATA_MODEL" || h.kind == "HYBRID_MODEL_DATA";
    const std::uint32_t tp = hybrid ? std::max<std::uint32_t>(1, h.tp) : h.kind == "MODEL" ? world : 1;
    if (world % (tp * h.pp) != 0)
        fail(1, fmt::format("{} ranks do not split into tensor groups of {} and {} pipeline stages", world, tp, h.pp));
    const std::uint32_t dp = world / (tp * h.pp);
    const std::uint32_t ep = dp % h.ep == 0 ? h.ep : 1;

    OpGraph g;
    g.rank_count = world;
    g.source = path;
    auto rank_of = [&](std::uint32_t stage, std::uint32_t replica, std::uint32_t t) {
        return RankId{stage * dp * tp + replica * tp + t};
    };
    // The communicator of a collective type for rank (stage, replica, t): its suffix or the phase picks the group.
    auto group = [&](const std::string& type, std::size_t phase, std::uint32_t stage, std::uint32_t replica,
                     std::uint32_t t) {
        std::vector<RankId> members;
        std::string name;
        const bool dp_ep = type.find("_DP_EP") != std::string::npos;
        const bool ep_only = !dp_ep && type.find("_EP") != std::string::npos;
        const bool model = (phase < 2 && hybrid) || h.kind == "MODEL";
        if (ep_only) {
            const std::uint32_t block = replica / ep;
            for (std::uint32_t d = block * ep; d < (block + 1) * ep; ++d) members.push_back(rank_of(stage, d, t));
            name = fmt::format("ep.s{}.b{}.t{}", stage, block, t);
        } else if (dp_ep) {
            for (std::uint32_t d = replica % ep; d < dp; d += ep) members.push_back(rank_of(stage, d, t));
            name = fmt::format("dp_ep.s{}.r{}.t{}", stage, replica % ep, t);
        } else if (model) {
            for (std::uint32_t k = 0; k < tp; ++k) members.push_back(rank_of(stage, replica, k));
            name = fmt::format("tp.s{}.d{}", stage, replica);
        } else if (h.kind == "DATA" || h.kind == "MICRO" || h.kind == "HYBRID_DLRM" || h.kind == "MODEL") {
            for (std::uint32_t r = 0; r < world; ++r) members.push_back(RankId{r});
            name = "world";
        } else {
            for (std::uint32_t d = 0; d < dp; ++d) members.push_back(rank_of(stage, d, t));
            name = fmt::format("dp.s{}.t{}", stage, t);
        }
        return g.communicator(name, members);
    };
    auto collective_kind = [&](const std::string& type, int line) -> std::optional<CollectiveKind> {
        if (type == "NONE") return std::nullopt;
        const std::string base = type.substr(0, type.find('_'));
        if (base == "ALLREDUCE") return CollectiveKind::all_reduce;
        if (base == "ALLGATHER") return CollectiveKind::all_gather;
        if (base == "REDUCESCATTER") return CollectiveKind::reduce_scatter;
        if (base == "ALLTOALL") return CollectiveKind::all_to_all;
        if (base == "BROADCAST") return CollectiveKind::broadcast;
        fail(line, fmt::format("unknown communication type \"{}\" (known: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, "
                               "ALLTOALL, BROADCAST, "
                               "with _EP or _DP_EP suffixes)",
                               type));
        return std::nullopt;
    };
    for (std::uint32_t stage = 0; stage < h.pp; ++stage) {
        for (std::uint32_t replica = 0; replica < dp; ++replica) {
            for (std::uint32_t t = 0; t < tp; ++t) {
                const RankId r = rank_of(stage, replica, t);
                const StreamId compute = g.stream(r, "compute"), comm = g.stream(r, "dp");
                const StreamId pp_stream = h.pp > 1 ? g.stream(r, "pp") : StreamId::invalid();
                auto add_compute = [&](const std::string& name, engine::Time duration, std::vector<OpId> deps = {}) {
                    Op op{r, compute, g.intern(name), OpKind::compute, KernelClass::other};
                    op.duration = duration;
                    return g.add(op, deps);
                };
                auto add_collective = [&](const Layer& l, std::size_t p, StreamId stream,
                                          std::vector<OpId> deps) -> OpId {
                    const Phase& ph = l.phases[p];
                    const auto kind = collective_kind(ph.comm, l.line);
                    if (!kind) return OpId::invalid();
                    static constexpr std::array<const char*, 3> phase_names = {"fwd", "ig", "wg"};
                    Op op{r, stream, g.intern(fmt::format("{} {} {}", l.name, phase_names[p], ph.comm)),
                          OpKind::collective, KernelClass::communication};
                    op.collective = *kind;
                    op.bytes = ph.bytes;
                    op.comm = group(ph.comm, p, stage, replica, t);
                    return g.add(op, deps);
                };
                auto pipeline_transfer = [&](OpKind kind, std::uint32_t peer_stage, const std::string& name,
                                             std::vector<OpId> deps) {
                    const std::uint32_t lo = std::min(stage, peer_stage);
                    Op op{r, pp_stream, g.intern(name), kind, KernelClass::communication};
                    op.bytes = h.pp_comm;
                    op.peer = rank_of(peer_stage, replica, t);
                    op.comm = g.communicator(fmt::format("pp.{}-{}.d{}.t{}", lo, lo + 1, replica, t),
                                             {rank_of(lo, replica, t), rank_of(lo + 1, replica, t)});
                    return g.add(op, deps);
                };
                std::vector<OpId> wg_comm(layers.size(), OpId::invalid());
                for (std::uint32_t mb = 0; mb < h.ga; ++mb) {
                    std::vector<OpId> before;
                    if (stage > 0)
                        before.push_back(
                            pipeline_transfer(OpKind::recv, stage - 1, fmt::format("recv act mb{}", mb), {}));
                    OpId last;
                    for (const Layer& l : layers) {
                        last = add_compute(l.name + " fwd", l.phases[0].compute, before);
                        before.clear();
                        if (const OpId c = add_collective(l, 0, compute, {}); c.valid()) last = c;
                    }
                    if (stage + 1 < h.pp)
                        pipeline_transfer(OpKind::send, stage + 1, fmt::format("send act mb{}", mb), {last});
                }
                for (std::uint32_t mb = 0; mb < h.ga; ++mb) {
                    std::vector<OpId> before;
                    if (stage + 1 < h.pp)
                        before.push_back(
                            pipeline_transfer(OpKind::recv, stage + 1, fmt::format("recv grad mb{}", mb), {}));
                    OpId last;
                    for (std::size_t k = layers.size(); k-- > 0;) {
                        const Layer& l = layers[k];
                        last = add_compute(l.name + " ig", l.phases[1].compute, before);
                        before.clear();
                        if (const OpId c = add_collective(l, 1, compute, {}); c.valid()) last = c;
                        last = add_compute(l.name + " wg", l.phases[2].compute);
                        if (mb + 1 == h.ga) wg_comm[k] = add_collective(l, 2, comm, {last});
                    }
                    if (stage > 0)
                        pipeline_transfer(OpKind::send, stage - 1, fmt::format("send grad mb{}", mb), {last});
                }
                for (std::size_t k = 0; k < layers.size(); ++k) {
                    if (layers[k].update.count() == 0) continue;
                    std::vector<OpId> deps;
                    if (wg_comm[k].valid()) deps.push_back(wg_comm[k]);
                    add_compute(layers[k].name + " update", layers[k].update, deps);
                }
            }
        }
    }
    validate(g);
    return g;
}

}  // namespace clustersim::traces
