// Placing jobs, merging their graphs, and each job's time alone and together.
#include "sim/scenario/jobs.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "engine/error.h"
#include "engine/hash.h"
#include "traces/iterations.h"

namespace clustersim::sim {

using engine::Time;

std::vector<std::uint32_t> place_job(const topo::Cluster& cluster, std::vector<std::uint8_t>& used, std::uint32_t count,
                                     Placement placement, std::uint64_t seed, const std::string& job) {
    const auto& gpus = cluster.gpus();
    std::vector<std::uint32_t> free;
    for (std::uint32_t g = 0; g < gpus.size(); ++g)
        if (!used[g]) free.push_back(g);
    if (free.size() < count)
        throw engine::InputError(fmt::format("job '{}' needs {} GPUs but only {} of the topology's {} are free", job,
                                             count, free.size(), gpus.size()));
    std::vector<std::uint32_t> chosen;
    if (placement == Placement::packed) {
        chosen.assign(free.begin(), free.begin() + count);
    } else if (placement == Placement::spread) {
        // By node, each node's free GPUs in order; then one from each node in turn.
        std::map<int, std::vector<std::uint32_t>> by_node;
        for (const std::uint32_t g : free) by_node[cluster.device(gpus[g]).node].push_back(g);
        for (std::size_t k = 0; chosen.size() < count; ++k)
            for (const auto& [node, list] : by_node)
                if (k < list.size() && chosen.size() < count) chosen.push_back(list[k]);
        std::sort(chosen.begin(), chosen.end());
    } else {
        // Fisher-Yates with a counter-based generator of (seed, job): reproducible.
        std::uint64_t state = engine::hash_combine(seed, engine::fnv1a(job));
        for (std::size_t i = free.size(); i > 1; --i) {
            state = engine::splitmix64(state);
            std::swap(free[i - 1], free[state % i]);
        }
        chosen.assign(free.begin(), free.begin() + count);
        std::sort(chosen.begin(), chosen.end());
    }
    for (const std::uint32_t g : chosen) used[g] = 1;
    return chosen;
}

traces::OpGraph merge_jobs(const std::vector<Job>& jobs, std::vector<JobSlice>& slices,
                           std::vector<std::uint32_t>& rank_to_gpu, std::vector<Time>& rank_start) {
    traces::OpGraph out;
    out.source = "jobs";
    for (const Job& job : jobs) {
        const traces::OpGraph& g = job.graph;
        if (!g.job_ranks.empty())
            throw engine::InputError(engine::SourceLocation{g.source},
                                     fmt::format("job '{}' is reduced by symmetry (only {} of its {} ranks simulated): "
                                                 "jobs sharing a cluster need every rank simulated",
                                                 job.name, g.rank_count, g.job_size()));
        const std::uint32_t rank0 = out.rank_count;
        const auto comm0 = static_cast<std::uint32_t>(out.comms.size());
        const auto op0 = static_cast<std::uint32_t>(out.ops.size());
        out.rank_count += g.rank_count;
        std::vector<traces::StreamId> streams;
        for (const traces::Stream& s : g.streams)
            streams.push_back(out.stream(traces::RankId{rank0 + s.rank.value}, s.name));
        for (const traces::Communicator& c : g.comms) {
            traces::Communicator copy{job.name + "/" + c.name, {}, {}};
            for (const traces::RankId r : c.ranks) copy.ranks.push_back(traces::RankId{rank0 + r.value});
            out.comms.push_back(std::move(copy));
        }
        std::vector<std::uint32_t> names, shapes;
        for (const std::string& n : g.names) names.push_back(out.intern(n));
        for (const traces::GemmShape& s : g.gemm_shapes) shapes.push_back(out.intern(s));
        std::vector<traces::OpId> deps;
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            traces::Op op = g.ops[i];
            op.stream = streams[op.stream.index()];
            op.name = names[op.name];
            if (op.shape() != traces::no_shape) op.set_shape(shapes[op.shape()]);
            if (op.algorithm() != traces::no_algorithm) op.set_algorithm(names[op.algorithm()]);
            if (op.comm().valid()) op.set_comm(traces::CommId{comm0 + op.comm().value});
            if (op.kind == traces::OpKind::send || op.kind == traces::OpKind::recv)
                op.set_peer(traces::RankId{rank0 + op.peer().value});
            deps.clear();
            for (const traces::OpId d : g.deps(traces::OpId::from_index(i)))
                deps.push_back(traces::OpId{op0 + d.value});
            out.add(op, deps, g.duration(traces::OpId::from_index(i)));
        }
        JobSlice slice{job.name, job.description, rank0, g.rank_count, job.gpus, job.start, g};
        rank_to_gpu.insert(rank_to_gpu.end(), job.gpus.begin(), job.gpus.end());
        rank_start.insert(rank_start.end(), g.rank_count, job.start);
        out.derived.push_back(
            fmt::format("job {}: ranks {}-{} on GPUs {}{}, from {}", job.name, rank0, rank0 + g.rank_count - 1,
                        fmt::join(job.gpus.begin(), job.gpus.begin() + std::min<std::size_t>(job.gpus.size(), 16), ","),
                        job.gpus.size() > 16 ? ",..." : "", engine::format_time(job.start)));
        slices.push_back(std::move(slice));
    }
    return out;
}

void job_reports(const std::vector<JobSlice>& slices, const traces::OpGraph& merged, const traces::Timeline& together,
                 const topo::Cluster& cluster, const ReplayOptions& options, traces::RunSummary& summary) {
    std::map<std::string, double> alone_delay;  // by link name, summed over the jobs alone
    std::vector<Time> ends(slices.size(), Time{0});
    std::vector<std::uint32_t> job_of(merged.rank_count, 0);  // by merged rank
    for (std::uint32_t j = 0; j < slices.size(); ++j)
        std::fill_n(job_of.begin() + slices[j].first_rank, slices[j].ranks, j);
    for (std::size_t i = 0; i < merged.ops.size(); ++i) {
        Time& end = ends[job_of[merged.rank_of(merged.ops[i]).index()]];
        end = std::max(end, together.ends[i]);
    }
    for (std::size_t j = 0; j < slices.size(); ++j) {
        const JobSlice& s = slices[j];
        ReplayOptions o = options;
        o.rank_to_gpu = s.gpus;
        o.rank_start.clear();
        o.progress = {};
        // Stragglers of the job's ranks, renumbered; the cluster's events stay (they are the fabric's).
        o.variability.stragglers.clear();
        for (Straggler st : options.variability.stragglers) {
            // By GPU: the job's ranks on them.
            for (const std::uint32_t gpu : st.gpus)
                for (std::uint32_t r = 0; r < s.ranks; ++r)
                    if (s.gpus[r] == gpu) st.ranks.push_back(s.first_rank + r);
            st.gpus.clear();
            std::vector<std::uint32_t> ranks;
            for (const std::uint32_t r : st.ranks)
                if (r >= s.first_rank && r < s.first_rank + s.ranks) ranks.push_back(r - s.first_rank);
            if (ranks.empty()) continue;
            st.ranks = std::move(ranks);
            o.variability.stragglers.push_back(std::move(st));
        }
        const traces::OpGraph graph = traces::repeat_iterations(s.alone, merged.iteration_count(), "job " + s.name);
        const ReplayResult alone = replay(graph, cluster, o);
        for (const traces::CounterSeries& c : alone.timeline.counters) alone_delay[c.name] += c.contention_delay_s;
        summary.jobs.push_back({s.name, s.description, s.ranks, s.start, ends[j] - s.start, alone.timeline.makespan});
    }
    for (const traces::CounterSeries& c : together.counters) {
        const auto it = alone_delay.find(c.name);
        const double alone = it == alone_delay.end() ? 0.0 : it->second;
        if (c.contention_delay_s > alone + 1e-12) summary.interference.push_back({c.name, c.contention_delay_s, alone});
    }
    std::stable_sort(summary.interference.begin(), summary.interference.end(),
                     [](const auto& a, const auto& b) { return a.together_s - a.alone_s > b.together_s - b.alone_s; });
    if (summary.interference.size() > 10) summary.interference.resize(10);
}

}  // namespace clustersim::sim
