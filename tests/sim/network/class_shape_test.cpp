// Class shapes (sim/network/class_shape.h): each shared link once with its members, by ascending id; found again
// for the same routes only (compared in full, not by their sampled hash); forgotten past the bound without harm.
#include <algorithm>

#include <catch2/catch.hpp>

#include "sim/network/class_shape.h"

using namespace clustersim;
using sim::network::ClassShape;
using sim::network::ClassShapes;

namespace {

std::vector<topo::LinkId> links_of(std::initializer_list<std::uint32_t> ids) {
    std::vector<topo::LinkId> out;
    for (const std::uint32_t id : ids) out.push_back(topo::LinkId{id});
    return out;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs(const std::vector<ClassShape::LinkCount>& v) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
    for (const auto& lc : v) out.emplace_back(lc.link, lc.count);
    return out;
}

}  // namespace

TEST_CASE("a class shape lists each shared link once, with the members crossing it, by ascending id",
          "[sim][network][classes]") {
    ClassShapes shapes(16);
    // Member 0 crosses 5, 2, 9; member 1 crosses 2, 7; member 2 crosses 9, 1.
    const auto route = links_of({5, 2, 9, 2, 7, 9, 1});
    const std::vector<std::uint32_t> offsets{0, 3, 5, 7};
    const auto shape = shapes.shape_of(route, offsets);
    REQUIRE(shape);
    using P = std::pair<std::uint32_t, std::uint32_t>;
    CHECK(pairs(shape->links) == std::vector<P>{{5, 1}, {2, 2}, {9, 2}, {7, 1}, {1, 1}});  // first crossed first
    // by_id: each link with where its members start in crossing.
    std::vector<P> by_id;
    for (const auto& [link, first] : shape->by_id) by_id.emplace_back(link, first);
    CHECK(by_id == std::vector<P>{{1, 0}, {2, 1}, {5, 3}, {7, 4}, {9, 5}});
    CHECK(shape->crossing == std::vector<std::uint32_t>{2, 0, 1, 0, 1, 0, 2});
    CHECK(shapes.built() == 1);
    CHECK(shapes.found() == 0);
}

TEST_CASE("a class shape's links by id are in ascending order across many words of ids, build after build",
          "[sim][network][classes]") {
    // Links spread over 1,000 ids (16 words of the bitmap that orders them), crossed in a scrambled order by 40
    // members of 6 hops, each member sharing its first hop with the next; built five times with other routes, so a
    // bit left set by one build would show in the next.
    ClassShapes shapes(1000);
    for (std::uint32_t round = 0; round < 5; ++round) {
        std::vector<topo::LinkId> route;
        std::vector<std::uint32_t> offsets{0};
        for (std::uint32_t m = 0; m < 40; ++m) {
            for (std::uint32_t h = 0; h < 6; ++h) {
                const std::uint32_t id = h == 0 ? (m / 2 * 37 + round) % 1000 : (m * 6 + h) * 131 % 997 + round;
                route.push_back(topo::LinkId{id});
            }
            offsets.push_back(static_cast<std::uint32_t>(route.size()));
        }
        const auto shape = shapes.shape_of(route, offsets);
        REQUIRE(shape);
        // The expected order and starts, by a comparison sort of the distinct links.
        std::vector<ClassShape::LinkCount> sorted = shape->links;
        std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.link < b.link; });
        REQUIRE(shape->by_id.size() == sorted.size());
        std::uint32_t at = 0;
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            CHECK(shape->by_id[i].link == sorted[i].link);
            CHECK(shape->by_id[i].first == at);
            at += sorted[i].count;
        }
        CHECK(at == route.size());
        // Each link's members are the members whose routes cross it, in members' order.
        for (std::size_t i = 0; i < shape->by_id.size(); ++i) {
            const std::uint32_t end =
                i + 1 < shape->by_id.size() ? shape->by_id[i + 1].first : static_cast<std::uint32_t>(route.size());
            std::vector<std::uint32_t> expected;
            for (std::uint32_t m = 0; m < 40; ++m)
                for (std::uint32_t h = offsets[m]; h < offsets[m + 1]; ++h)
                    if (route[h].value == shape->by_id[i].link) expected.push_back(m);
            CHECK(std::vector<std::uint32_t>(shape->crossing.begin() + shape->by_id[i].first,
                                             shape->crossing.begin() + end) == expected);
        }
    }
    CHECK(shapes.built() == 5);
}

TEST_CASE("members that share no link have no shape", "[sim][network][classes]") {
    ClassShapes shapes(16);
    const auto route = links_of({1, 2, 3, 4});
    const std::vector<std::uint32_t> offsets{0, 2, 4};
    CHECK_FALSE(shapes.shape_of(route, offsets));
    CHECK(shapes.built() == 0);
}

TEST_CASE("the same routes find the shape built for them; routes alike in every sampled hop do not",
          "[sim][network][classes]") {
    ClassShapes shapes(4096);
    // 300 members of 2 hops, every member's first hop link 0: the key samples every second hop of 600, so
    // changing hop 1 (the first member's second link) leaves the sampled hops and the sizes as they were.
    std::vector<topo::LinkId> route;
    std::vector<std::uint32_t> offsets;
    for (std::uint32_t k = 0; k < 300; ++k) {
        offsets.push_back(static_cast<std::uint32_t>(route.size()));
        route.push_back(topo::LinkId{0});
        route.push_back(topo::LinkId{1 + k});
    }
    offsets.push_back(static_cast<std::uint32_t>(route.size()));
    const auto first = shapes.shape_of(route, offsets);
    REQUIRE(first);
    CHECK(shapes.shape_of(route, offsets) == first);
    CHECK(shapes.found() == 1);
    auto other = route;
    other[1] = topo::LinkId{2};  // the first member's second link is now the second member's
    const auto second = shapes.shape_of(other, offsets);
    REQUIRE(second);
    CHECK(second != first);
    CHECK(shapes.built() == 2);
    CHECK(second->links.size() == first->links.size() - 1);
    CHECK(second->links[1].link == 2);
    CHECK(second->links[1].count == 2);
    CHECK(first->links[1].count == 1);  // (a shape handed out is never changed)
    // The first routes again: built anew (the second took the first's key), the same links.
    const auto again = shapes.shape_of(route, offsets);
    CHECK(shapes.built() == 3);
    CHECK(pairs(again->links) == pairs(first->links));
    CHECK(again->crossing == first->crossing);
}

TEST_CASE("shapes past the bound are forgotten, and those handed out stay whole", "[sim][network][classes]") {
    ClassShapes shapes(16, 6);  // at most 6 hops kept
    const auto a = links_of({1, 2, 1, 3});
    const auto b = links_of({4, 5, 4, 6});
    const std::vector<std::uint32_t> offsets{0, 2, 4};
    const auto shape_a = shapes.shape_of(a, offsets);
    CHECK(shapes.shape_of(a, offsets) == shape_a);
    const auto shape_b = shapes.shape_of(b, offsets);  // 8 hops: a is forgotten
    CHECK(shapes.shape_of(b, offsets) == shape_b);
    CHECK(shapes.shape_of(a, offsets) != shape_a);
    CHECK(shapes.built() == 3);
    CHECK(shapes.found() == 2);
    CHECK(pairs(shape_a->links) == std::vector<std::pair<std::uint32_t, std::uint32_t>>{{1, 2}, {2, 1}, {3, 1}});
    const auto long_route = links_of({7, 8, 7, 9, 7, 10, 7, 11});
    const std::vector<std::uint32_t> four{0, 2, 4, 6, 8};
    const auto shape_long = shapes.shape_of(long_route, four);  // longer than the bound: built, never kept
    CHECK(shapes.shape_of(long_route, four) != shape_long);
    CHECK(shape_long->links.front().count == 4);
}
