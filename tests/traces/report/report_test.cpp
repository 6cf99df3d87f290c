#include <algorithm>

#include <catch2/catch.hpp>

#include "tests/traces/report/report_checks.h"
#include "traces/report/categories.h"
#include "traces/report/collective_report.h"
#include "traces/report/html_report.h"
#include "traces/report/svg.h"

using namespace clustersim;
using engine::Time;

namespace clustersim::testing {

std::size_t count_in(const std::string& text, const std::string& needle, const std::string& from,
                     const std::string& until) {
    std::size_t begin = 0, end = text.size();
    if (!from.empty()) {
        begin = text.find(from);
        if (begin == std::string::npos) return 0;
        end = std::min(text.size(), text.find(until, begin));
    }
    std::size_t n = 0;
    for (std::size_t at = text.find(needle, begin); at != std::string::npos && at < end; at = text.find(needle, at + 1))
        ++n;
    return n;
}

void check_report(const std::string& html, const traces::RunSummary& summary, const traces::Timeline& timeline) {
    for (const char* id : {"run", "ranks", "critical-path", "links", "communicators"})
        REQUIRE(html.find(std::string("<section id=\"") + id + "\"") != std::string::npos);
    REQUIRE((html.find("<section id=\"memory-section\"") != std::string::npos) == !summary.memory.empty());
    // One bar per group of ranks, each the whole iteration.
    const auto groups = traces::report::rank_groups(summary, traces::report::ReportOptions{}.max_rank_groups);
    REQUIRE(count_in(html, "<g class=\"bar\"", "<svg id=\"rank-bars\"") == groups.size());
    const double makespan = static_cast<double>(summary.makespan.count());
    const std::string total = "data-total=\"" +
                              traces::report::short_number(makespan / traces::report::time_axis_unit(makespan).first) +
                              "\"";
    REQUIRE(count_in(html, total, "<svg id=\"rank-bars\"") == groups.size());
    // A cell per non-empty bin of the links that carried the most bytes.
    std::vector<const traces::CounterSeries*> links;
    for (const auto& c : timeline.counters) links.push_back(&c);
    std::stable_sort(links.begin(), links.end(), [](const auto* a, const auto* b) { return a->bytes > b->bytes; });
    links.resize(std::min(links.size(), traces::report::ReportOptions{}.heatmap_links));
    std::size_t cells = 0;
    for (const auto* c : links) cells += std::count_if(c->bins.begin(), c->bins.end(), [](double b) { return b > 0; });
    REQUIRE(count_in(html, "<rect class=\"cell\"", "<svg id=\"link-heatmap\"") == cells);
    // The cluster's events: a row of the run table each, and a dashed line on the heatmap when it is drawn.
    for (const auto& m : summary.cluster_events) REQUIRE(html.find(m.label) != std::string::npos);
    if (!links.empty())
        REQUIRE(count_in(html, "<line class=\"marker\"", "<svg id=\"link-heatmap\"") == summary.cluster_events.size());
    // Self-contained: nothing loaded from elsewhere.
    for (const char* fetch : {"src=", "href=", "@import", "url(", "<link", "<script"})
        REQUIRE(html.find(fetch) == std::string::npos);
}

}  // namespace clustersim::testing

namespace {

/// A rank's breakdown in microseconds.
traces::RankBreakdown breakdown(std::uint32_t rank, std::int64_t compute, std::int64_t overlap, std::int64_t peer) {
    const auto us = [](std::int64_t v) { return Time{v * 1'000'000}; };
    traces::RankBreakdown r;
    r.rank = rank;
    r.iteration = us(1000);
    r.compute = us(compute);
    r.overlap = us(overlap);
    r.communication = us(overlap + 100);
    r.exposed_communication = us(100);
    r.network_wait = us(40);
    r.peer_wait = us(peer);
    r.idle_other = us(1000 - compute - 100 - peer);
    return r;
}

}  // namespace

TEST_CASE("the report's partition adds up to the iteration, in the terminal table's order", "[report]") {
    const auto r = breakdown(0, 600, 200, 100);
    const auto parts = traces::report::partition(r);
    Time sum{0};
    for (const Time t : parts) sum += t;
    REQUIRE(sum == r.iteration);
    REQUIRE(parts[0] == Time{400'000'000});  // compute without a transfer beside it
    REQUIRE(parts[1] == Time{200'000'000});  // overlap
    REQUIRE(parts[2] == Time{60'000'000});   // exposed communication not lost to contention
    REQUIRE(parts[3] == Time{40'000'000});   // network wait
    REQUIRE(parts[4] == Time{100'000'000});  // peer wait
    REQUIRE(traces::report::partition_categories[0].name == "compute");
    REQUIRE(traces::report::partition_categories[7].name == "other");
}

TEST_CASE("ranks with identical breakdowns share a bar; over the limit the outliers stay", "[report]") {
    traces::RunSummary s;
    s.makespan = Time{1'000'000'000};
    // Ranks 0-5 alike, 6 and 7 alike, 8 an outlier with the most peer wait.
    for (std::uint32_t r = 0; r < 6; ++r) s.ranks.push_back(breakdown(r, 600, 200, 100));
    for (std::uint32_t r = 6; r < 8; ++r) s.ranks.push_back(breakdown(r, 500, 200, 100));
    s.ranks.push_back(breakdown(8, 300, 100, 500));
    const auto groups = traces::report::rank_groups(s, 48);
    REQUIRE(groups.size() == 3);
    REQUIRE(groups[0].ranks == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
    REQUIRE(groups[1].ranks == std::vector<std::uint32_t>{6, 7});
    REQUIRE(groups[2].ranks == std::vector<std::uint32_t>{8});
    // With room for two bars: the extremes of every category come first (rank 8 holds the most peer wait and the
    // least compute; ranks 0-5 the most compute), in rank order.
    const auto two = traces::report::rank_groups(s, 2);
    REQUIRE(two.size() == 2);
    REQUIRE(two[0].ranks.front() == 0);
    REQUIRE(two[1].ranks.front() == 8);

    const std::string html = traces::report::html_report({}, {{"faithful", &s, nullptr}}, {"a test"});
    testing::check_report(html, s, traces::Timeline{});
    // Hover text names the category and its value in microseconds.
    REQUIRE(html.find("<title>peer wait: 500 us (50.0%); 1 rank: 8</title>") != std::string::npos);
}

TEST_CASE("text in the report is escaped", "[report]") {
    REQUIRE(traces::report::escape("a<b & \"c\">") == "a&lt;b &amp; &quot;c&quot;&gt;");
    traces::RunSummary s;
    s.scenario = "<script>alert(1)</script>";
    const std::string html = traces::report::html_report({}, {{"faithful", &s, nullptr}}, {"t"});
    REQUIRE(html.find("<script>") == std::string::npos);
    REQUIRE(html.find("&lt;script&gt;") != std::string::npos);
}

TEST_CASE("collective outputs: a CSV and JSON row and a plotted point per size", "[report]") {
    traces::report::CollectiveRun run{"all_reduce on a test", {}};
    for (std::uint64_t bytes : {1024ULL, 1ULL << 20, 1ULL << 30})
        run.rows.push_back({bytes, bytes / 4, "float", 10.0 * static_cast<double>(bytes >> 10), 1, 2, "ring", "Simple",
                            5.0 * static_cast<double>(bytes >> 10)});
    const std::string csv = traces::report::collective_csv(run);
    REQUIRE(std::count(csv.begin(), csv.end(), '\n') == 4);
    REQUIRE(csv.find("1073741824,268435456,float,10485760,1,2,ring,Simple,5242880\n") != std::string::npos);
    const std::string json = traces::report::collective_json(run);
    REQUIRE(testing::count_in(json, "\"size_bytes\"") == 3);
    const std::string html = traces::report::collective_report(run);
    // Simulated and NCCL's model: three points each; the model's bus bandwidth is busbw x time / model time = 4.
    REQUIRE(testing::count_in(html, "<circle class=\"point\"", "<svg id=\"busbw-plot\"") == 6);
    REQUIRE(html.find("<title>NCCL&#39;s model") == std::string::npos);
    REQUIRE(html.find("<title>NCCL's model: 4 at 1024</title>") != std::string::npos);
    REQUIRE(testing::count_in(html, "<tr><td>", "<table id=\"collective-rows\"", "</table>") == 3);
}
