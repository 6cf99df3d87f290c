// The replay's setup: each rank's GPU and host, the per-op run state (a stream's next op, the counts of unmet
// predecessors and the partners of the ops that have them, the dependents besides stream order), and the static
// matching of collective calls and messages.
#include "sim/replay/replay_engine.h"

#include <algorithm>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/huge_pages.h"
#include "engine/page_warmer.h"

namespace clustersim::sim {

using engine::Time;
using traces::OpId;
using traces::OpKind;

ReplayEngine::ReplayEngine(const traces::OpGraph& graph, const topo::Cluster& cluster, const ReplayOptions& options)
    : g_(graph),
      cluster_(cluster),
      options_(options),
      net_(cluster, sim_, options.network),
      gemm_efficiencies_(graph.gemm_shapes.size(), cluster.gpu_specs().size()) {
    setup();
    run_as_flows({}, {}, false);
}

void ReplayEngine::setup() {
    const auto& gpus = cluster_.gpus();
    if (g_.job_size() > gpus.size())
        throw engine::InputError(
            engine::SourceLocation{g_.source},
            g_.job_ranks.empty()
                ? fmt::format("the trace has {} ranks but the topology '{}' has only {} GPUs (a larger topology, "
                              "e.g. --set nodes=N)",
                              g_.rank_count, cluster_.description, gpus.size())
                : fmt::format("the job has {} ranks ({} simulated) but the topology '{}' has only {} GPUs (a larger "
                              "topology, e.g. --set nodes=N)",
                              g_.job_size(), g_.rank_count, cluster_.description, gpus.size()));
    if (!options_.rank_to_gpu.empty() && !g_.job_ranks.empty())
        throw engine::InputError(
            engine::SourceLocation{g_.source},
            "a rank mapping cannot be combined with symmetry reduction: job rank j runs on GPU j (folded "
            "communicators name their members by job rank)");
    if (!options_.rank_to_gpu.empty() && options_.rank_to_gpu.size() != g_.rank_count)
        throw engine::InputError(
            engine::SourceLocation{g_.source},
            fmt::format("rank_to_gpu lists {} GPUs for {} ranks", options_.rank_to_gpu.size(), g_.rank_count));
    std::vector<std::uint8_t> used(gpus.size(), 0);
    std::vector<std::uint8_t> node_has_cpu;  // nodes without a CPU (GPU rings, tori) need no host search
    for (const topo::Device& d : cluster_.devices()) {
        if (d.kind != topo::DeviceKind::cpu || d.node < 0) continue;
        if (static_cast<std::size_t>(d.node) >= node_has_cpu.size()) node_has_cpu.resize(d.node + 1, 0);
        node_has_cpu[d.node] = 1;
    }
    for (std::uint32_t r = 0; r < g_.rank_count; ++r) {
        const std::uint32_t gpu =
            options_.rank_to_gpu.empty() ? g_.job_rank(traces::RankId{r}) : options_.rank_to_gpu[r];
        if (gpu >= gpus.size())
            throw engine::InputError(
                engine::SourceLocation{g_.source},
                fmt::format("rank_to_gpu: rank {} mapped to GPU {}, but there are {} GPUs", r, gpu, gpus.size()));
        if (used[gpu]++)
            throw engine::InputError(engine::SourceLocation{g_.source},
                                     fmt::format("rank_to_gpu: GPU {} is given to two ranks", gpu));
        rank_gpu_.push_back(gpus[gpu]);
        rank_gpu_spec_.push_back(static_cast<std::uint32_t>(cluster_.device(gpus[gpu]).gpu_spec));
        // The host of a rank: the CPU of its node nearest to its GPU (for host<->device copies), found within the
        // node (a search over every device per rank was quadratic in the cluster).
        const int node = cluster_.device(gpus[gpu]).node;
        const bool has_cpu = node >= 0 && static_cast<std::size_t>(node) < node_has_cpu.size() && node_has_cpu[node];
        rank_host_.push_back(has_cpu ? net_.router().nearest_in_node(gpus[gpu], topo::DeviceKind::cpu)
                                     : topo::DeviceId{});
    }
    const std::size_t n = g_.ops.size();
    // Per-op state: on huge pages where the system gives them (engine/huge_pages.h). The arrays written last (at
    // the end of the setup) are faulted in on another thread meanwhile (engine/page_warmer.h).
    engine::PageWarmer warmer;
    engine::reserve_huge_fresh(timeline_.ends, n);
    engine::reserve_huge_fresh(timeline_.critical_preds, n);
    warmer.warm(timeline_.ends.data(), n * sizeof(Time));
    warmer.warm(timeline_.critical_preds.data(), n * sizeof(OpId));
    engine::assign_huge(next_gap_, n, std::uint16_t{0});
    far_next_.clear();
    std::vector<OpId> last_on_stream(g_.streams.size(), OpId::invalid());
    // Dependents besides stream order (CSR over the ops that have some): the ops with some marked, each one's count
    // at the next one's offset, summed into offsets, filled with the offsets as cursors (each ends at the next
    // list's start), shifted back. Each list in op order, as the ops are visited.
    dependents_of_.reset(n);
    dep_waiting_.assign(g_.op_deps.owner_count(), 0);
    initially_ready_.clear();
    for (std::size_t i = 0; i < n; ++i) {
        const OpId id = OpId::from_index(i);
        OpId& last = last_on_stream[g_.ops[i].stream.index()];
        const auto deps = g_.deps(id);
        // Its unmet predecessors: its dependencies, and its stream predecessor if it has one.
        if (!deps.empty())
            dep_waiting_[g_.op_deps.owner_index(id)] = static_cast<std::uint32_t>(deps.size() + (last.valid() ? 1 : 0));
        if (last.valid()) {
            const std::size_t gap = i - last.index();
            next_gap_[last.index()] = static_cast<std::uint16_t>(std::min<std::size_t>(gap, far_gap));
            if (gap >= far_gap) {
                bool inserted = false;
                far_next_.find_or_insert(last.value, inserted) = id.value;
            }
        } else if (deps.empty()) {
            initially_ready_.push_back(id);
        }
        last = id;
        for (const OpId d : deps) dependents_of_.insert(d.index());
    }
    dependents_of_.finish();
    owner_offsets_.assign(std::size_t{dependents_of_.size()} + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        for (const OpId d : g_.deps(OpId::from_index(i))) ++owner_offsets_[dependents_of_.rank(d.index()) + 1];
    }
    for (std::size_t k = 0; k + 1 < owner_offsets_.size(); ++k) owner_offsets_[k + 1] += owner_offsets_[k];
    engine::assign_huge(dependents_, owner_offsets_.back(), OpId::invalid());
    for (std::size_t i = 0; i < n; ++i) {
        for (const OpId d : g_.deps(OpId::from_index(i)))
            dependents_[owner_offsets_[dependents_of_.rank(d.index())]++] = OpId::from_index(i);
    }
    for (std::size_t k = owner_offsets_.size() - 1; k > 0; --k) owner_offsets_[k] = owner_offsets_[k - 1];
    owner_offsets_[0] = 0;
    // Static matching: the k-th collective of each member of a communicator forms instance k of it; the k-th
    // send from a to b on a communicator meets the k-th recv at b from a.
    std::vector<std::vector<std::uint32_t>> comm_instances(g_.comms.size());
    std::vector<std::vector<std::uint32_t>> member_issued(g_.comms.size());
    index_rank_comms();
    for (std::size_t c = 0; c < g_.comms.size(); ++c) member_issued[c].assign(g_.comms[c].ranks.size(), 0);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> p2p_keys;  // (key, op) in op order
    {
        // The calls expected: each communicator's collective ops over its members (exact when every member issues
        // the same calls; fewer when folded), reserved so that the records are not copied as they are added.
        std::vector<std::uint64_t> collective_ops(g_.comms.size(), 0);
        std::size_t transfer_ops = 0;  // communication and copies: the ops that may wait or meet contention
        comm_ops_.reset(n);
        for (std::size_t i = 0; i < n; ++i) {
            const traces::Op& op = g_.ops[i];
            if (op.kind == OpKind::collective) ++collective_ops[op.comm().index()];
            if (op.is_communication()) comm_ops_.insert(i);
            transfer_ops += op.is_communication() || op.kind == OpKind::memcpy_h2d || op.kind == OpKind::memcpy_d2h;
        }
        comm_ops_.finish();
        engine::assign_huge(partners_, comm_ops_.size(), UINT32_MAX);
        // The sparse lists of the timeline at most one entry per such op, on huge pages: grown by doubling from
        // nothing, they were 18 k faults of 4 KiB pages at 16,384 GPUs. (Only what is written is faulted in.)
        engine::reserve_huge(timeline_.waits, transfer_ops);
        engine::reserve_huge(timeline_.contentions, transfer_ops);
        std::size_t expected_calls = 0;
        for (std::size_t c = 0; c < g_.comms.size(); ++c) {
            const std::size_t members = std::max<std::size_t>(1, g_.comms[c].ranks.size());
            expected_calls += static_cast<std::size_t>((collective_ops[c] + members - 1) / members);
        }
        engine::reserve_huge(calls_, expected_calls);  // (a million calls in a GPT-3 step)
        engine::reserve_huge(call_records_, expected_calls);
    }
    for (std::size_t i = 0; i < n; ++i) {
        const traces::Op& op = g_.ops[i];
        if (op.kind == OpKind::collective) {
            const auto& ranks = g_.comms[op.comm().index()].ranks;
            const std::uint32_t member = member_of(g_.rank_of(op), op.comm());
            const std::uint32_t k = member_issued[op.comm().index()][member]++;
            auto& list = comm_instances[op.comm().index()];
            if (k == list.size()) {
                list.push_back(static_cast<std::uint32_t>(calls_.size()));
                calls_.emplace_back();
                CollectiveRecord& record = call_records_.emplace_back();
                record.comm = op.comm();
                record.bytes = op.bytes();
            }
            partner(OpId::from_index(i)) = list[k];
            // Per-member sizes (all_gather, all_to_all), kept only when they differ.
            Call& call = calls_[list[k]];
            const std::uint64_t bytes = call_records_[list[k]].bytes;
            if (op.bytes() != bytes && call.member_bytes.empty()) call.member_bytes.assign(ranks.size(), bytes);
            if (!call.member_bytes.empty()) call.member_bytes[member] = op.bytes();
        } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
            const std::uint32_t rank = g_.rank_of(op).value;
            const std::uint32_t src = op.kind == OpKind::send ? rank : op.peer().value;
            const std::uint32_t dst = op.kind == OpKind::send ? op.peer().value : rank;
            const std::uint64_t key =
                (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 20) ^ op.comm().value;
            p2p_keys.emplace_back(key * 2 + (op.kind == OpKind::recv ? 1 : 0), static_cast<std::uint32_t>(i));
        }
    }
    std::stable_sort(p2p_keys.begin(), p2p_keys.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < p2p_keys.size();) {
        std::size_t sends_end = i;
        while (sends_end < p2p_keys.size() && p2p_keys[sends_end].first == p2p_keys[i].first) ++sends_end;
        std::size_t recvs_end = sends_end;
        const bool has_recvs = (p2p_keys[i].first & 1) == 0 && sends_end < p2p_keys.size() &&
                               p2p_keys[sends_end].first == p2p_keys[i].first + 1;
        if (has_recvs) {
            while (recvs_end < p2p_keys.size() && p2p_keys[recvs_end].first == p2p_keys[i].first + 1) ++recvs_end;
            for (std::size_t k = 0; k < std::min(sends_end - i, recvs_end - sends_end); ++k) {
                partner(OpId{p2p_keys[i + k].second}) = p2p_keys[sends_end + k].second;
                partner(OpId{p2p_keys[sends_end + k].second}) = p2p_keys[i + k].second;
            }
        }
        i = recvs_end;
    }
    rank_stream_offsets_.assign(g_.rank_count + 1, 0);
    for (const auto& s : g_.streams) ++rank_stream_offsets_[s.rank.index() + 1];
    for (std::size_t r = 0; r < g_.rank_count; ++r) rank_stream_offsets_[r + 1] += rank_stream_offsets_[r];
    rank_streams_.resize(g_.streams.size());
    std::vector<std::uint32_t> at(rank_stream_offsets_.begin(), rank_stream_offsets_.end() - 1);
    for (std::size_t s = 0; s < g_.streams.size(); ++s)
        rank_streams_[at[g_.streams[s].rank.index()]++] = traces::StreamId::from_index(s);
    stream_run_.assign(g_.streams.size(), StreamRun{});
    for (std::size_t s = 0; s < g_.streams.size(); ++s) {
        stream_run_[s].rank = g_.streams[s].rank;
        const engine::TimerId timer = sim_.make_timer();
        if (s == 0) first_stream_timer_ = timer;
        CLUSTERSIM_CHECK(timer == timer_of(s), "stream timers made out of order");
    }
    rank_kernels_.assign(g_.rank_count, 0);
    comm_active_.assign(g_.rank_count, 0);
    engine::assign_huge(timeline_.ends, n, Time{-1});
    engine::assign_huge(ended_, (n + 63) / 64, std::uint64_t{0});
    engine::assign_huge(timeline_.critical_preds, n, OpId::invalid());
    setup_stragglers();
    for (std::uint32_t k = 0; k < options_.cluster_events.size(); ++k)
        sim_.schedule_at(options_.cluster_events[k].at, to_u16(EventKind::cluster_event), k);
    net_.set_owner_names({[](const void* self, std::uint32_t owner) {
                              return static_cast<const ReplayEngine*>(self)->describe_owner(owner);
                          },
                          this});
}

}  // namespace clustersim::sim
