#include "sim/network/link_utilization.h"

#include <algorithm>
#include <cstdlib>

#include "engine/error.h"

namespace clustersim::sim {

using engine::Time;

LinkUtilization::LinkUtilization(std::size_t links, std::uint32_t max_bins)
    : max_bins_(std::max<std::uint32_t>(2, max_bins)), state_(links), rows_(links) {}

void LinkUtilization::out_of_order(Time now, Time since) {
    CLUSTERSIM_CHECK(now >= since, "link utilization set at {} ps before {} ps", now.count(), since.count());
    std::abort();  // (unreachable: the check fails)
}

void LinkUtilization::accumulate(std::uint32_t link, Time from, Time to, double rate) {
    LinkState& s = state_[link];
    // Bins by nanosecond then by shift (floor(t / (1000 << k)) = floor(t / 1000) >> k for t >= 0).
    const std::int64_t to_ns = (to.count() - 1) / 1000, from_ns = from.count() / 1000;
    while (bin_of_ns(to_ns) >= max_bins_) double_width();
    const auto first = static_cast<std::uint32_t>(bin_of_ns(from_ns)),
               last = static_cast<std::uint32_t>(bin_of_ns(to_ns));
    const std::int64_t w = std::int64_t{1000} << shift_;
    if (s.open_end != no_bin && first == last && first == open_bin(s)) {  // (the loop's one term, held open)
        s.open_bytes += rate * static_cast<double>(to.count() - from.count()) * 1e-12;
        return;
    }
    auto& bins = rows_[link];
    if (bins.empty()) {
        used_.push_back(link);
        bins.reserve(max_bins_);  // (it never holds more: no copies as it grows bin by bin)
    }
    if (bins.size() <= last) bins.resize(last + 1, 0.0);
    flush(link);
    for (std::uint32_t b = first; b <= last; ++b) {
        const std::int64_t start = std::max<std::int64_t>(from.count(), static_cast<std::int64_t>(b) * w);
        const std::int64_t end = std::min<std::int64_t>(to.count(), static_cast<std::int64_t>(b + 1) * w);
        bins[b] += rate * static_cast<double>(end - start) * 1e-12;
    }
    // (The same additions, in the same order, on the same value: the bins are unchanged.)
    s.open_end = static_cast<std::int64_t>(last + 1) * w;
    s.open_bytes = bins[last];
}

void LinkUtilization::double_width() {
    // Bin i of the wider grid is bins 2i and 2i + 1 of the narrower one.
    for (const std::uint32_t link : used_) {
        flush(link);
        auto& bins = rows_[link];
        const std::size_t merged = (bins.size() + 1) / 2;
        for (std::size_t i = 0; i < merged; ++i)
            bins[i] = bins[2 * i] + (2 * i + 1 < bins.size() ? bins[2 * i + 1] : 0);
        bins.resize(merged);
        LinkState& s = state_[link];
        if (s.open_end != no_bin) {
            const std::size_t open = open_bin(s) / 2;
            s.open_end = static_cast<std::int64_t>(open + 1) * (bin_width().count() * 2);
            s.open_bytes = bins[open];
        }
    }
    ++shift_;
}

std::vector<std::pair<Time, double>> LinkUtilization::binned_steps(std::uint32_t link) const {
    std::vector<std::pair<Time, double>> steps;
    flush(link);
    const auto& bins = rows_[link];
    const Time width = bin_width();
    const double seconds = static_cast<double>(width.count()) * 1e-12;
    for (std::size_t b = 0; b < bins.size(); ++b) {
        const double rate = bins[b] / seconds;
        if (steps.empty() ? rate != 0 : steps.back().second != rate)
            steps.emplace_back(width * static_cast<std::int64_t>(b), rate);
    }
    if (!steps.empty() && steps.back().second != 0)
        steps.emplace_back(width * static_cast<std::int64_t>(bins.size()), 0.0);
    return steps;
}

}  // namespace clustersim::sim
