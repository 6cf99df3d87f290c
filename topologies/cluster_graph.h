// The Boost.Graph adjacency_list behind a Cluster: vertex i is DeviceId i, edge properties carry the LinkId.
// Include only in topologies/ .cpp files that run Boost graph algorithms.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include "topologies/link.h"

namespace clustersim::topo {

struct LinkProperty {
    LinkId link;
};

using BoostClusterGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, LinkProperty>;

struct ClusterGraph {
    BoostClusterGraph graph;
};

}  // namespace clustersim::topo
