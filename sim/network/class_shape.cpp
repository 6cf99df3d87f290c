// Class shapes (class_shape.h): built from the members' routes, kept by a hash of them and found by comparing them.
#include "sim/network/class_shape.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>
#include <utility>

namespace clustersim::sim::network {

namespace {

std::uint64_t hash_of(std::span<const topo::LinkId> route, std::span<const std::uint32_t> offsets) {
    // A cache key, not an identity (a shape found is compared in full): the sizes and up to 256 hops and 64
    // offsets spread evenly over them, so that a class of thousands of hops is not read twice to be keyed.
    constexpr std::uint64_t odd = 0x9e3779b97f4a7c15ULL;
    std::uint64_t h = (route.size() << 32 | offsets.size()) * odd;
    const auto mix = [&](std::uint64_t word) {
        h = (h ^ word) * odd;
        h ^= h >> 29;
    };
    const std::size_t hop_step = std::max<std::size_t>(1, route.size() / 256);
    for (std::size_t i = 0; i < route.size(); i += hop_step) mix(route[i].value);
    const std::size_t offset_step = std::max<std::size_t>(1, offsets.size() / 64);
    for (std::size_t i = 0; i < offsets.size(); i += offset_step) mix(offsets[i]);
    return h;
}

template <class T>
bool same(const std::vector<T>& kept, std::span<const T> now) {
    static_assert(std::is_trivially_copyable_v<T> && std::has_unique_object_representations_v<T>);
    return kept.size() == now.size() && std::memcmp(kept.data(), now.data(), now.size_bytes()) == 0;
}

}  // namespace

ClassShapes::ClassShapes(std::size_t link_count, std::size_t max_hops)
    : max_hops_(max_hops),
      link_slot_(link_count, UINT32_MAX),
      link_seen_(link_count, 0),
      link_bits_((link_count + 63) / 64, 0) {}

bool ClassShapes::shared(std::span<const topo::LinkId> route) {
    // (The first link two members share settles it: a class of a tree step finds one within its first members.)
    ++seen_stamp_;
    for (const topo::LinkId hop : route) {
        std::uint32_t& seen = link_seen_[hop.index()];
        if (seen == seen_stamp_) return true;
        seen = seen_stamp_;
    }
    return false;
}

std::shared_ptr<const ClassShape> ClassShapes::shape_of(std::span<const topo::LinkId> route,
                                                        std::span<const std::uint32_t> offsets) {
    if (!shared(route)) return nullptr;
    const std::uint64_t key = hash_of(route, offsets);
    auto it = kept_.find(key);
    if (it != kept_.end() && same(it->second->route, route) && same(it->second->offsets, offsets)) {
        ++found_;
        return it->second;
    }
    auto shape = build(route, offsets);
    if (route.size() <= max_hops_) {
        if (it != kept_.end()) {  // (another shape with the same hash: this one takes its place)
            kept_hops_ -= it->second->route.size();
            kept_.erase(it);
        }
        if (kept_hops_ + route.size() > max_hops_) {
            kept_.clear();
            kept_hops_ = 0;
        }
        kept_.emplace(key, shape);
        kept_hops_ += route.size();
    }
    return shape;
}

std::shared_ptr<const ClassShape> ClassShapes::build(std::span<const topo::LinkId> route,
                                                     std::span<const std::uint32_t> offsets) {
    ++built_;
    auto shape = std::make_shared<ClassShape>();
    shape->route.assign(route.begin(), route.end());
    shape->offsets.assign(offsets.begin(), offsets.end());
    // The distinct links, in the order first crossed, with their counts.
    std::vector<ClassShape::LinkCount>& links = shape->links;
    for (const topo::LinkId hop : route) {
        std::uint32_t& slot = link_slot_[hop.index()];
        if (slot == UINT32_MAX) {
            slot = static_cast<std::uint32_t>(links.size());
            links.push_back({hop.value, 0});
        }
        ++links[slot].count;
    }
    // By ascending id, each link's members (a counting sort of the hops: link_slot_ goes from each link's index in
    // `links` to its next place in crossing, and is reset after). The ids are put in order by a bitmap of them, read
    // word by word over the span they cover: no comparison sort.
    std::uint32_t lowest = UINT32_MAX, highest = 0;
    for (const ClassShape::LinkCount& lc : links) {
        link_bits_[lc.link >> 6] |= std::uint64_t{1} << (lc.link & 63);
        lowest = std::min(lowest, lc.link);
        highest = std::max(highest, lc.link);
    }
    shape->by_id.resize(links.size());
    std::uint32_t at = 0;
    std::size_t i = 0;
    for (std::uint32_t w = lowest >> 6; !links.empty() && w <= highest >> 6; ++w) {
        for (std::uint64_t bits = std::exchange(link_bits_[w], 0); bits != 0; bits &= bits - 1) {
            const std::uint32_t link = w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits));
            std::uint32_t& slot = link_slot_[link];
            const std::uint32_t count = links[slot].count;
            shape->by_id[i++] = {link, at};
            slot = at;
            at += count;
        }
    }
    shape->crossing.resize(route.size());
    for (std::size_t k = 0; k + 1 < offsets.size(); ++k)
        for (std::uint32_t h = offsets[k]; h < offsets[k + 1]; ++h)
            shape->crossing[link_slot_[route[h].index()]++] = static_cast<std::uint32_t>(k);
    for (const ClassShape::LinkCount& lc : links) link_slot_[lc.link] = UINT32_MAX;
    return shape;
}

}  // namespace clustersim::sim::network
