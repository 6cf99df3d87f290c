#include "sim/network/link_utilization.h"

#include <array>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

using namespace clustersim;
using namespace std::chrono_literals;
using engine::Time;

TEST_CASE("link utilization keeps exact totals and bins that widen as the run grows", "[sim][network]") {
    sim::LinkUtilization used(2, 4);
    // Link 0: 2 GB/s over [0, 1 us), idle, 1 GB/s over [5 us, 6 us). Link 1 never carries anything.
    used.set_rate(0, Time{0}, 2e9);
    used.set_rate(0, 1us, 0);
    REQUIRE(used.bin_width() == Time{256'000});  // 1 ns doubled until 4 bins cover 1 us
    used.set_rate(0, 5us, 5e8);
    used.set_rate(0, 5us, 1e9);  // the last change of an instant holds
    used.set_rate(0, 6us, 0);
    REQUIRE(used.bin_width() == Time{2'048'000});  // 4 bins cover 6 us
    CHECK(used.bytes(0) == Approx(3000).epsilon(1e-12));
    CHECK(used.peak_rate(0) == 2e9);
    CHECK(used.rate(0) == 0);
    CHECK_FALSE(used.carried(1));
    // Bins: [0, 2.048 us) 2000 bytes, [2.048, 4.096 us) none, [4.096, 6.144 us) 1000 bytes.
    const auto bins = used.bins(0);
    REQUIRE(bins.size() == 3);
    CHECK(bins[0] == Approx(2000).epsilon(1e-12));
    CHECK(bins[1] == 0);
    CHECK(bins[2] == Approx(1000).epsilon(1e-12));
    // As a counter track: each bin's average rate, then 0 after the last.
    const auto steps = used.binned_steps(0);
    REQUIRE(steps.size() == 4);
    CHECK(steps[0].first == Time{0});
    CHECK(steps[0].second == Approx(2000 / 2.048e-6).epsilon(1e-12));
    CHECK(steps[1] == std::pair{Time{2'048'000}, 0.0});
    CHECK(steps[2].first == Time{4'096'000});
    CHECK(steps[3] == std::pair{Time{6'144'000}, 0.0});
}

TEST_CASE("a span over several bins is split by their overlaps", "[sim][network]") {
    sim::LinkUtilization used(1, 4);
    used.set_rate(0, Time{0}, 1e9);
    used.set_rate(0, 10us, 0);
    // 10 us in at most 4 bins: 4.096 us wide; 4096, 4096 and 1808 bytes.
    REQUIRE(used.bin_width() == Time{4'096'000});
    const auto bins = used.bins(0);
    REQUIRE(bins.size() == 3);
    CHECK(bins[0] == Approx(4096).epsilon(1e-12));
    CHECK(bins[1] == Approx(4096).epsilon(1e-12));
    CHECK(bins[2] == Approx(1808).epsilon(1e-12));
    CHECK(used.bytes(0) == Approx(10'000).epsilon(1e-12));
}

namespace {
// The bins as a plain model keeps them: a row of bins per link, each span added bin by bin to the bins it overlaps
// (rows grown with zeros), the width doubled (pairs merged) before a span would end past the last bin.
struct PlainBins {
    std::uint32_t max_bins;
    int shift = 0;
    std::vector<std::vector<double>> rows;
    std::vector<Time> since;
    std::vector<double> rate;

    PlainBins(std::size_t links, std::uint32_t bins) : max_bins(bins), rows(links), since(links), rate(links, 0) {}
    void set_rate(std::uint32_t link, Time now, double r) {
        if (r == rate[link]) return;
        if (now > since[link] && rate[link] != 0) add(link, since[link], now, rate[link]);
        since[link] = now;
        rate[link] = r;
    }
    void add(std::uint32_t link, Time from, Time to, double r) {
        const std::int64_t to_ns = (to.count() - 1) / 1000;
        while ((to_ns >> shift) >= max_bins) {
            for (auto& row : rows) {
                std::vector<double> merged((row.size() + 1) / 2);
                for (std::size_t i = 0; i < merged.size(); ++i)
                    merged[i] = row[2 * i] + (2 * i + 1 < row.size() ? row[2 * i + 1] : 0);
                row = merged;
            }
            ++shift;
        }
        const std::int64_t w = std::int64_t{1000} << shift;
        const auto first = static_cast<std::size_t>((from.count() / 1000) >> shift);
        const auto last = static_cast<std::size_t>(to_ns >> shift);
        auto& row = rows[link];
        if (row.size() <= last) row.resize(last + 1, 0.0);
        for (std::size_t b = first; b <= last; ++b) {
            const std::int64_t start = std::max<std::int64_t>(from.count(), static_cast<std::int64_t>(b) * w);
            const std::int64_t end = std::min<std::int64_t>(to.count(), static_cast<std::int64_t>(b + 1) * w);
            row[b] += r * static_cast<double>(end - start) * 1e-12;
        }
    }
};
}  // namespace

TEST_CASE("the bins equal, to the bit, a row per link filled span by span", "[sim][network]") {
    // Random rate changes on 6 links (idle gaps, several changes at one instant, spans within one bin and over
    // many, widenings in the middle), against the plain model above; every bin compared with ==.
    std::mt19937_64 rng(7);
    for (int run = 0; run < 40; ++run) {
        const std::uint32_t max_bins = std::array<std::uint32_t, 4>{2, 4, 16, 256}[run % 4];
        const std::size_t links = 6;
        sim::LinkUtilization used(links, max_bins);
        PlainBins plain(links, max_bins);
        Time now{0};
        for (int step = 0; step < 400; ++step) {
            const std::uint64_t pick = rng() % 10;
            // Mostly short steps (within a bin), sometimes long ones (across bins), sometimes none.
            now += Time{static_cast<std::int64_t>(pick < 2 ? 0 : pick < 8 ? rng() % 3000 : rng() % 4'000'000)};
            const auto link = static_cast<std::uint32_t>(rng() % links);
            const double rate = rng() % 4 == 0 ? 0.0 : static_cast<double>(rng() % 100'000) * 1e5 / 7;
            used.set_rate(link, now, rate);
            plain.set_rate(link, now, rate);
        }
        now += Time{1'000'000};
        for (std::uint32_t l = 0; l < links; ++l) {
            used.set_rate(l, now, 0);
            plain.set_rate(l, now, 0);
        }
        REQUIRE(used.bin_width() == Time{std::int64_t{1000} << plain.shift});
        for (std::uint32_t l = 0; l < links; ++l) {
            const auto bins = used.bins(l);
            const auto& row = plain.rows[l];
            REQUIRE(used.carried(l) == !row.empty());
            REQUIRE(bins.size() == row.size());
            for (std::size_t b = 0; b < row.size(); ++b) {
                INFO("run " << run << " link " << l << " bin " << b);
                REQUIRE(bins[b] == row[b]);
            }
        }
    }
}
