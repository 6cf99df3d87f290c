// What each link carried over a run, in memory bounded by the number of links, not by the number of rate changes:
// exact totals (bytes, peak rate) and the rate over time in equal time bins (their average rate), which double in
// width as the run grows so that no link ever keeps more than `max_bins`. A 28 M-flow replay kept 1.8 GB of rate
// steps; its bins take a few MB (docs/performance.md).
//
// Bins are shared by all links (one width, bin i covers [i w, (i + 1) w)), so that they line up in a heatmap.
// The width starts at 1 ns and doubles (merging pairs) whenever a rate change falls past the last bin.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/time.h"

namespace clustersim::sim {

class LinkUtilization {
public:
    static constexpr std::uint32_t default_max_bins = 256;

    explicit LinkUtilization(std::size_t links = 0, std::uint32_t max_bins = default_max_bins);

    /// From `now` on, `rate_bytes_per_s` flows through `link` (in non-decreasing time; several changes at one
    /// instant keep the last).
    void set_rate(std::uint32_t link, engine::Time now, double rate_bytes_per_s) {
        LinkState& s = state_[link];
        if (rate_bytes_per_s == s.rate) return;  // the span goes on (summed as one step, as the rate steps were)
        if (now < s.since) [[unlikely]]
            out_of_order(now, s.since);
        if (now > s.since && s.rate != 0) {
            // The same product as summing the steps afterwards: rate x ps x 1e-12.
            const double added = s.rate * static_cast<double>((now - s.since).count()) * 1e-12;
            s.bytes += added;
            s.peak = std::max(s.peak, s.rate);
            // Within the open bin (it starts at or before `since`: times only move on), the bin's one term;
            // otherwise the span is spread over its bins.
            if (now.count() <= s.open_end) {
                s.open_bytes += added;
            } else {
                accumulate(link, s.since, now, s.rate);
            }
        }
        s.since = now;
        s.rate = rate_bytes_per_s;
    }

    /// Whether spans ending by `end` fit in the bins as they are (no widening: the links' changes up to then may be
    /// made in any order across links).
    [[nodiscard]] bool fits(engine::Time end) const {
        return end.count() <= 0 || bin_of_ns((end.count() - 1) / 1000) < max_bins_;
    }
    /// Whether the link ever carried traffic.
    [[nodiscard]] bool carried(std::uint32_t link) const { return rows_[link] != nullptr; }
    /// Bytes the link carried up to its last rate change (all of them once its rate is back to 0).
    [[nodiscard]] double bytes(std::uint32_t link) const { return state_[link].bytes; }
    /// The rate set last.
    [[nodiscard]] double rate(std::uint32_t link) const { return state_[link].rate; }
    /// The highest rate held for a positive time (up to the last change).
    [[nodiscard]] double peak_rate(std::uint32_t link) const { return state_[link].peak; }
    /// Width of every bin.
    [[nodiscard]] engine::Time bin_width() const { return engine::Time{std::int64_t{1000} << shift_}; }
    /// Bytes carried in each bin, from bin 0 to the link's last non-empty one.
    [[nodiscard]] std::span<const double> bins(std::uint32_t link) const {
        flush(link);
        return {rows_[link], bin_count(link)};
    }
    /// The rate steps of the bins (their average rates, from each bin's start; consecutive equal ones merged), ending
    /// with a step to 0 after the last non-empty bin. What a counter track shows.
    [[nodiscard]] std::vector<std::pair<engine::Time, double>> binned_steps(std::uint32_t link) const;

private:
    static constexpr std::int64_t no_bin = INT64_MIN;
    // What a rate change reads, flat by link: the totals, and the bytes of the bin the link is in now (the open
    // bin), held here until it moves on to a later bin. A rate change then touches one record; the link's row of
    // bins (cold: a few KB per link, 200 MB over the links of a 1,024-node replay) only when it moves on, and then
    // only with stores: the bins it leaves get their final sums, computed here.
    struct LinkState {
        engine::Time since{};
        double rate = 0;
        double bytes = 0;
        double peak = 0;
        double open_bytes = 0;           // the open bin's bytes (its row entry is stale until flushed)
        std::int64_t open_end = no_bin;  // the open bin's end in ps (no_bin: none yet): a span ending by it is in it
    };
    static_assert(sizeof(LinkState) == 48);  // (a row pointer more made the records a line each: more misses)

    /// Adds `rate` over [from, to) to the link's bins (the open one in its record), widening them first if `to`
    /// falls past the last one.
    void accumulate(std::uint32_t link, engine::Time from, engine::Time to, double rate);
    void double_width();
    [[noreturn, gnu::noinline, gnu::cold]] static void out_of_order(engine::Time now, engine::Time since);
    /// The open bin's index (s.open_end != no_bin; the end is a whole number of bins of whole nanoseconds).
    [[nodiscard]] std::uint32_t open_bin(const LinkState& s) const {
        return static_cast<std::uint32_t>(bin_of_ns(s.open_end / 1000) - 1);
    }
    /// The link's bins in use: up to its open one (the row's entries past it are not written yet).
    [[nodiscard]] std::size_t bin_count(std::uint32_t link) const {
        return rows_[link] ? open_bin(state_[link]) + 1 : 0;
    }
    /// Writes the open bin's bytes into the link's row (they stay open: the row entry and `open_bytes` agree).
    void flush(std::uint32_t link) const {
        if (rows_[link]) rows_[link][open_bin(state_[link])] = state_[link].open_bytes;
    }
    /// A row of max_bins_ bins for a link that starts carrying traffic (contents unset).
    double* new_row();
    /// The bin of nanosecond `ns` (the width is 1 ns << shift_: a division by a constant, then a shift).
    [[nodiscard]] std::int64_t bin_of_ns(std::int64_t ns) const { return ns >> shift_; }

    std::uint32_t max_bins_;
    int shift_ = 0;  // bin width 1 ns << shift_
    std::vector<LinkState> state_;
    std::vector<double*> rows_;  // by link: its bins, max_bins_ of them (null until it first carries traffic)
    // The rows, allocated rows_per_block at a time (a row never moves: the link's record points to it).
    static constexpr std::size_t rows_per_block = 64;
    std::vector<std::unique_ptr<double[]>> row_blocks_;
    std::size_t rows_in_last_block_ = rows_per_block;
    std::vector<std::uint32_t> used_;  // links with bins, in first-use order
};

}  // namespace clustersim::sim
