// Federated rounds with a deadline (the layers generator's round_deadline): the clients that miss it, found by a
// probe run of the plan with every client in every round's average.
#pragma once

#include <string>

#include "sim/replay/replay.h"
#include "topologies/cluster.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

struct LateClients {
    std::string late;                    // "ROUND:RANK, ...", or "" when every client made it
    double median_s = 0, slowest_s = 0;  // of the clients' round work in the probe
};
/// The clients whose round work (TrainingFacts::client_rounds: from the model's download or the first kernel to the
/// last local step's optimizer) takes longer than the graph's round_deadline_s when `graph` is replayed with
/// `options`.
LateClients late_clients(const traces::OpGraph& graph, const topo::Cluster& cluster, const ReplayOptions& options);

}  // namespace clustersim::sim
