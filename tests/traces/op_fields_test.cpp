// An Op's kind-specific fields share storage (traces/op_graph.h): each reads back what was set for its own kinds,
// its default for the others, and setting one never changes another that the kind has.
#include <cstdint>

#include <catch2/catch.hpp>

#include "traces/op_graph.h"

using namespace clustersim::traces;

TEST_CASE("an op's shared fields read back as set for their kinds and as defaults for the others", "[traces]") {
    for (const OpKind kind : {OpKind::compute, OpKind::collective, OpKind::send, OpKind::recv, OpKind::memcpy_h2d,
                              OpKind::memcpy_d2h, OpKind::alloc, OpKind::free, OpKind::delay}) {
        INFO(op_kind_name(kind));
        Op op;
        op.kind = kind;
        REQUIRE(op.flops() == 0.0);
        REQUIRE(!op.comm().valid());
        REQUIRE(!op.peer().valid());
        REQUIRE(op.shape() == no_shape);
        REQUIRE(op.algorithm() == no_algorithm);
        REQUIRE(op.tag() == 0);
    }
    Op compute;
    compute.set_flops(1e20);
    compute.set_shape(0);
    REQUIRE(compute.flops() == 1e20);
    REQUIRE(compute.shape() == 0);
    REQUIRE(!compute.comm().valid());
    REQUIRE(!compute.peer().valid());
    REQUIRE(compute.algorithm() == no_algorithm);
    REQUIRE(compute.tag() == 0);

    Op collective;
    collective.kind = OpKind::collective;
    collective.set_comm(CommId{0});
    collective.set_algorithm(UINT32_MAX - 1);
    REQUIRE(collective.comm() == CommId{0});
    REQUIRE(collective.algorithm() == UINT32_MAX - 1);
    REQUIRE(!collective.peer().valid());  // a collective has no peer, whatever the storage holds
    REQUIRE(collective.flops() == 0.0);
    REQUIRE(collective.shape() == no_shape);

    // A send's three fields, set in either order, at the ends of their ranges.
    for (const bool peer_first : {false, true}) {
        Op send;
        send.kind = OpKind::send;
        if (peer_first) send.set_peer(RankId{UINT32_MAX - 1});
        send.set_comm(CommId{UINT32_MAX - 1});
        if (!peer_first) send.set_peer(RankId{UINT32_MAX - 1});
        send.set_tag(UINT32_MAX);
        REQUIRE(send.comm() == CommId{UINT32_MAX - 1});
        REQUIRE(send.peer() == RankId{UINT32_MAX - 1});
        REQUIRE(send.tag() == UINT32_MAX);
        send.set_comm(CommId{7});
        REQUIRE(send.peer() == RankId{UINT32_MAX - 1});
        send.set_peer(RankId{0});
        REQUIRE(send.comm() == CommId{7});
        REQUIRE(send.peer() == RankId{0});
        REQUIRE(send.flops() == 0.0);
        REQUIRE(send.algorithm() == no_algorithm);
    }
    // Equal ops compare equal; one field apart, they do not.
    Op a, b;
    a.kind = b.kind = OpKind::recv;
    a.set_peer(RankId{3});
    b.set_peer(RankId{3});
    REQUIRE(a == b);
    b.set_tag(1);
    REQUIRE(a != b);
}

TEST_CASE("an op's size and kinds share one word without touching each other", "[traces]") {
    // Every kind at its largest value with the largest size, then each field changed alone: the others stay.
    Op op;
    op.set_bytes(Op::max_op_bytes);
    op.kind = OpKind::delay;
    op.kernel_class = KernelClass::other;
    op.dtype = DataType::int64;
    op.collective = CollectiveKind::barrier;
    op.eager = true;
    REQUIRE(op.bytes() == Op::max_op_bytes);
    REQUIRE(op.kind == OpKind::delay);
    REQUIRE(op.kernel_class == KernelClass::other);
    REQUIRE(op.dtype == DataType::int64);
    REQUIRE(op.collective == CollectiveKind::barrier);
    REQUIRE(op.eager);
    op.set_bytes(0);
    REQUIRE(op.kind == OpKind::delay);
    REQUIRE(op.dtype == DataType::int64);
    REQUIRE(op.eager);
    op.eager = false;
    REQUIRE(op.collective == CollectiveKind::barrier);
    REQUIRE(op.bytes() == 0);
    // A size beyond what an op holds is kept as one mark, which readers and the generated graphs' check refuse;
    // never wrapped into a small one.
    for (const std::uint64_t beyond : {Op::max_op_bytes + 1, std::uint64_t{1} << 48, std::uint64_t{UINT64_MAX}}) {
        op.set_bytes(beyond);
        REQUIRE(op.bytes() == Op::too_large_bytes);
        REQUIRE(op.kind == OpKind::delay);
    }
    // What an alloc holds shares the collective kind's bits; other kinds read `other`.
    Op alloc;
    alloc.kind = OpKind::alloc;
    alloc.set_memory(MemoryUse::buffers);
    REQUIRE(alloc.memory() == MemoryUse::buffers);
    alloc.kind = OpKind::compute;
    REQUIRE(alloc.memory() == MemoryUse::other);
}
