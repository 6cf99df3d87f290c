// Reconciling the sizes that several ranks' files give for one collective call.
#pragma once

#include <string>

#include "traces/op_graph.h"

namespace clustersim::traces {

/// Members of one reducing or copying call (all-reduce, reduce-scatter, broadcast, reduce) must move one size,
/// but files profiled on different ranks can recover different sizes for it (from the CPU op's tensors): the call
/// takes the largest, and the import says how many calls it reconciled. all_gather and all_to_all keep their
/// per-member sizes.
void reconcile_member_sizes(OpGraph& g, const std::string& file);

}  // namespace clustersim::traces
