#include "sim/network/link_utilization.h"

#include <algorithm>
#include <cstdlib>

#include "engine/error.h"

namespace clustersim::sim {

using engine::Time;

LinkUtilization::LinkUtilization(std::size_t links, std::uint32_t max_bins)
    : max_bins_(std::max<std::uint32_t>(2, max_bins)), state_(links), rows_(links, nullptr) {}

void LinkUtilization::out_of_order(Time now, Time since) {
    CLUSTERSIM_CHECK(now >= since, "link utilization set at {} ps before {} ps", now.count(), since.count());
    std::abort();  // (unreachable: the check fails)
}

double* LinkUtilization::new_row() {
    if (rows_in_last_block_ == rows_per_block) {
        row_blocks_.push_back(std::make_unique_for_overwrite<double[]>(rows_per_block * max_bins_));
        rows_in_last_block_ = 0;
    }
    return row_blocks_.back().get() + rows_in_last_block_++ * max_bins_;
}

void LinkUtilization::accumulate(std::uint32_t link, Time from, Time to, double rate) {
    LinkState& s = state_[link];
    // Bins by nanosecond then by shift (floor(t / (1000 << k)) = floor(t / 1000) >> k for t >= 0).
    const std::int64_t to_ns = (to.count() - 1) / 1000, from_ns = from.count() / 1000;
    while (bin_of_ns(to_ns) >= max_bins_) double_width();
    const auto first = static_cast<std::uint32_t>(bin_of_ns(from_ns)),
               last = static_cast<std::uint32_t>(bin_of_ns(to_ns));
    const std::int64_t w = std::int64_t{1000} << shift_;
    // The span's part in bin b.
    const auto part = [&](std::uint32_t b) {
        const std::int64_t start = std::max<std::int64_t>(from.count(), static_cast<std::int64_t>(b) * w);
        const std::int64_t end = std::min<std::int64_t>(to.count(), static_cast<std::int64_t>(b + 1) * w);
        return rate * static_cast<double>(end - start) * 1e-12;
    };
    // A span starts in the open bin or later (it starts where the link's last one ended: times only move on).
    std::uint32_t b = first;
    double*& row = rows_[link];
    if (row == nullptr) {
        row = new_row();
        used_.push_back(link);
        std::fill(row, row + first, 0.0);
    } else {
        const std::uint32_t open = open_bin(s);
        if (first == open && last == open) {  // (the loop's one term, held open)
            s.open_bytes += part(open);
            return;
        }
        // The bins it leaves, with their final sums (the sums a row of zeros would have: 0 + x is x for x >= 0).
        if (first == open) {
            row[open] = s.open_bytes + part(b++);
        } else {
            row[open] = s.open_bytes;
            std::fill(row + open + 1, row + first, 0.0);
        }
    }
    for (; b < last; ++b) row[b] = part(b);
    // The bin it ends in is the open one: its entry is written when it is flushed.
    s.open_end = static_cast<std::int64_t>(last + 1) * w;
    s.open_bytes = part(last);
}

void LinkUtilization::double_width() {
    // Bin i of the wider grid is bins 2i and 2i + 1 of the narrower one.
    for (const std::uint32_t link : used_) {
        flush(link);
        const std::size_t count = bin_count(link);
        const std::size_t merged = (count + 1) / 2;
        double* const row = rows_[link];
        for (std::size_t i = 0; i < merged; ++i) row[i] = row[2 * i] + (2 * i + 1 < count ? row[2 * i + 1] : 0);
        LinkState& s = state_[link];
        s.open_end = static_cast<std::int64_t>(merged) * (bin_width().count() * 2);
        s.open_bytes = row[merged - 1];
    }
    ++shift_;
}

std::vector<std::pair<Time, double>> LinkUtilization::binned_steps(std::uint32_t link) const {
    std::vector<std::pair<Time, double>> steps;
    const std::span<const double> bins = this->bins(link);
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
