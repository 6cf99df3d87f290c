// Records of collective calls, kept so that a later call like one of them is timed from its record instead of
// being simulated again (models.md "Repeated calls"): calls run as flows (replay_repeats.cpp) and calls timed in
// closed form (replay_closed_records.cpp). Times are from the call's first arrival.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/time.h"
#include "sim/collectives/nccl_tuner.h"
#include "sim/network/flow_network.h"
#include "traces/op_graph.h"

namespace clustersim::sim {

/// What a call's timing depends on besides its arrivals and its routes (which its communicator fixes).
struct RepeatKey {
    std::uint32_t comm = 0;
    traces::CollectiveKind kind{};
    traces::DataType dtype{};
    std::uint64_t bytes = 0;
    std::uint32_t chunks = 0;
    std::size_t algorithm = 0;
    NcclProtocol protocol{};
    bool modelled_protocol = false;
    bool operator==(const RepeatKey&) const = default;
};

/// A call recorded as it ran as flows alone on its links.
struct RepeatRecord {
    RepeatKey key;
    std::vector<engine::Time> arrival;  // by member: when it arrived
    engine::Time last_arrival{};
    bool recorded = false;    // false: a call with this key was seen, not recorded (a key seen once is not)
    bool confirmed = false;   // the call recorded before it with this key had the same arrivals
    std::uint32_t users = 0;  // calls timed from it, not yet committed (it is not replaced meanwhile)
    engine::Time first_start{}, end{}, ideal{};
    std::vector<engine::Time> member_end, member_busy, member_ideal;
    FlowNetwork::TapRecord net;
    [[nodiscard]] std::size_t bytes() const {
        return arrival.size() * 4 * sizeof(engine::Time) + net.links.size() * sizeof(topo::LinkId) +
               net.steps.size() * sizeof(FlowNetwork::TapStep) + net.delays.size() * sizeof(network::DelayUnits);
    }
};

/// A ring call timed in closed form whose members all arrived at one instant: what its commit did, in order.
struct ClosedRecord {
    /// One transfer as committed: its route (in the replay's route pool), bytes, rate, start and drain.
    struct Transfer {
        std::uint32_t route_offset = 0, route_length = 0;
        std::uint64_t bytes = 0;
        double rate = 0;
        engine::Time start{}, drained{};
    };
    /// A link the commit claimed, in the order it first did, and its transfers' spans in commit order (`spans` from
    /// `first`, `count` of them: the first one's start and the last one's drain are what the claims check and leave).
    struct LinkGroup {
        topo::LinkId link;
        std::uint32_t first = 0, count = 0;
    };
    RepeatKey key;
    std::vector<Transfer> transfers;  // in commit order
    std::vector<LinkGroup> links;
    std::vector<network::TimedSpan> spans;                     // by link, in commit order
    std::uint64_t transfer_bytes = 0;                          // over the transfers
    engine::Time last_drained{};                               // the latest drain
    std::vector<std::pair<std::uint32_t, engine::Time>> ends;  // (member, end) in the order they were scheduled
    std::vector<engine::Time> member_busy, member_ideal;       // by member
    std::vector<topo::LinkId> held;                            // the links the call held, in the order it took them
    engine::Time first_start{}, end{}, ideal{};
    /// FlowNetwork::links_attached() when `held` was last found unused (no need to look again while it is the same).
    std::uint64_t unused_at = UINT64_MAX;
    [[nodiscard]] std::size_t bytes() const {
        return transfers.size() * sizeof(Transfer) + links.size() * sizeof(LinkGroup) +
               spans.size() * sizeof(network::TimedSpan) + ends.size() * sizeof(ends[0]) +
               (member_busy.size() + member_ideal.size()) * sizeof(engine::Time) + held.size() * sizeof(topo::LinkId);
    }
};

}  // namespace clustersim::sim
