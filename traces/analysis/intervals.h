// Sets of time intervals as sorted, disjoint [start, end) lists: union, intersection, difference and length, for the
// trace analysis' breakdowns (each instant counted once however many kernels run at it).
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/time.h"

namespace clustersim::traces::analysis {

using Interval = std::pair<engine::Time, engine::Time>;
using IntervalSet = std::vector<Interval>;  // sorted, disjoint, non-empty intervals

/// The union of any intervals (empty ones dropped).
inline IntervalSet unite(std::vector<Interval> intervals) {
    std::sort(intervals.begin(), intervals.end());
    IntervalSet out;
    for (const auto& [a, b] : intervals) {
        if (b <= a) continue;
        if (!out.empty() && a <= out.back().second)
            out.back().second = std::max(out.back().second, b);
        else
            out.emplace_back(a, b);
    }
    return out;
}

inline engine::Time length(const IntervalSet& s) {
    engine::Time total{0};
    for (const auto& [a, b] : s) total += b - a;
    return total;
}

inline IntervalSet intersect(const IntervalSet& x, const IntervalSet& y) {
    IntervalSet out;
    for (std::size_t i = 0, j = 0; i < x.size() && j < y.size();) {
        const engine::Time a = std::max(x[i].first, y[j].first), b = std::min(x[i].second, y[j].second);
        if (a < b) out.emplace_back(a, b);
        if (x[i].second < y[j].second)
            ++i;
        else
            ++j;
    }
    return out;
}

/// x without y.
inline IntervalSet subtract(const IntervalSet& x, const IntervalSet& y) {
    IntervalSet out;
    std::size_t j = 0;
    for (const auto& [start, end] : x) {
        engine::Time at = start;
        while (j < y.size() && y[j].second <= at) ++j;
        for (std::size_t k = j; k < y.size() && y[k].first < end; ++k) {
            if (y[k].first > at) out.emplace_back(at, y[k].first);
            at = std::max(at, y[k].second);
        }
        if (at < end) out.emplace_back(at, end);
    }
    return out;
}

inline IntervalSet join(const IntervalSet& x, const IntervalSet& y) {
    IntervalSet all(x);
    all.insert(all.end(), y.begin(), y.end());
    return unite(std::move(all));
}

}  // namespace clustersim::traces::analysis
