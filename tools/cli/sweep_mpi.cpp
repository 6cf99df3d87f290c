// `clustersim sweep SWEEP.yaml --mpi` under mpirun: rank 0 prepares the folder, hands out points one at a time to
// whichever worker thread asks, receives each point's row and summary and writes them; workers (ranks 1..K-1) run
// points on their own threads (-j). The folder and results are the same as a local run's. Built when CMake finds
// MPI (CLUSTERSIM_HAVE_MPI); otherwise --mpi is an input error.
#include "tools/cli/sweep_mpi.h"

#include <fmt/format.h>

#include "engine/error.h"

#ifdef CLUSTERSIM_HAVE_MPI
#include <mpi.h>

#include <map>
#include <mutex>
#include <thread>

namespace clustersim::cli {

namespace {

constexpr int tag_request = 1, tag_result = 2, tag_assign = 100;  // assignments: tag_assign + worker thread
constexpr long long no_more = -1;

std::string receive_text(int source, int tag, MPI_Status* status) {
    MPI_Status probe;
    MPI_Probe(source, tag, MPI_COMM_WORLD, &probe);
    int count = 0;
    MPI_Get_count(&probe, MPI_CHAR, &count);
    std::string text(static_cast<std::size_t>(count), '\0');
    MPI_Recv(text.data(), count, MPI_CHAR, probe.MPI_SOURCE, probe.MPI_TAG, MPI_COMM_WORLD, status);
    return text;
}

/// Rank 0: serves requests until every point's result is in and every worker thread has been told to stop. A point
/// is handed out by its grid index.
sim::SweepOutcome serve(const sim::SweepSpec& spec, const sim::SweepOptions& options, int ranks,
                        const std::vector<std::pair<std::uint64_t, sim::SweepPoint>>& todo,
                        std::vector<sim::SweepRow> rows) {
    sim::SweepOutcome outcome;
    outcome.skipped = rows.size();
    outcome.points = rows.size() + todo.size();
    outcome.ran = todo.size();
    const std::size_t threads = static_cast<std::size_t>(ranks - 1) * options.threads;
    std::size_t next = 0, received = 0, stopped = 0, failed = 0;
    while (received < todo.size() || stopped < threads) {
        MPI_Status status;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        if (status.MPI_TAG == tag_request) {
            int thread = 0;
            MPI_Recv(&thread, 1, MPI_INT, status.MPI_SOURCE, tag_request, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            const long long index = next < todo.size() ? static_cast<long long>(todo[next++].first) : no_more;
            if (index == no_more) ++stopped;
            MPI_Send(&index, 1, MPI_LONG_LONG, status.MPI_SOURCE, tag_assign + thread, MPI_COMM_WORLD);
        } else {
            const std::string text = receive_text(status.MPI_SOURCE, tag_result, MPI_STATUS_IGNORE);
            // The row's JSON line, then the summary.
            const std::size_t cut = text.find('\n');
            sim::PointResult result{sim::parse_sweep_row(text.substr(0, cut + 1), "an MPI worker's row"),
                                    text.substr(cut + 1)};
            sim::store_point(options.out_dir, result);
            failed += result.row.status != "ok";
            if (options.progress)
                options.progress(options.progress_context, outcome.skipped + received + 1, failed, outcome.points);
            rows.push_back(std::move(result.row));
            ++received;
        }
    }
    for (const sim::SweepRow& r : rows) outcome.failed += r.status != "ok";
    sim::finish_sweep(spec, options, rows);
    return outcome;
}

/// A worker rank: its threads ask rank 0 for points, run them and send back what they found. The points' list is
/// the same on every rank (the same sweep file), so an index is all a request needs.
void work(const sim::SweepSpec& spec, const sim::SweepOptions& options) {
    std::map<std::uint64_t, sim::SweepPoint> points;
    for (auto& [index, point] : sim::sweep_points(spec)) points.emplace(index, std::move(point));
    std::mutex mpi;
    auto thread_main = [&](int thread) {
        while (true) {
            long long index = no_more;
            {
                const std::lock_guard<std::mutex> lock(mpi);
                MPI_Send(&thread, 1, MPI_INT, 0, tag_request, MPI_COMM_WORLD);
                MPI_Recv(&index, 1, MPI_LONG_LONG, 0, tag_assign + thread, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            if (index == no_more) return;
            const auto grid_index = static_cast<std::uint64_t>(index);
            const sim::PointResult result = sim::compute_point(spec, grid_index, points.at(grid_index));
            const std::string text = sim::sweep_row_json(result.row) + result.summary_json;
            const std::lock_guard<std::mutex> lock(mpi);
            MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, tag_result, MPI_COMM_WORLD);
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < options.threads; ++t) pool.emplace_back(thread_main, static_cast<int>(t));
    thread_main(0);
    for (std::thread& t : pool) t.join();
}

}  // namespace

std::optional<sim::SweepOutcome> run_sweep_mpi(const sim::SweepSpec& spec, sim::SweepOptions options) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    int rank = 0, ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    std::optional<sim::SweepOutcome> outcome;
    // Rank 0 checks the sweep and its folder first and tells the workers whether to go on.
    std::optional<engine::InputError> refused;
    std::vector<sim::SweepRow> done;
    std::vector<std::pair<std::uint64_t, sim::SweepPoint>> todo;
    if (rank == 0 && ranks > 1) {
        try {
            todo = sim::prepare_sweep(spec, options, done);
        } catch (const engine::InputError& e) {
            refused = e;
        }
    }
    int go = refused ? 0 : 1;
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    try {
        if (ranks == 1)
            outcome = sim::run_sweep(spec, options);
        else if (rank == 0 && go)
            outcome = serve(spec, options, ranks, todo, std::move(done));
        else if (go)
            work(spec, options);
    } catch (...) {
        // A failure outside the points (they record theirs): the other ranks cannot finish without this one.
        MPI_Abort(MPI_COMM_WORLD, 3);
        throw;
    }
    MPI_Finalize();
    if (refused) throw *refused;
    return outcome;
}

}  // namespace clustersim::cli

#else

namespace clustersim::cli {

std::optional<sim::SweepOutcome> run_sweep_mpi(const sim::SweepSpec&, sim::SweepOptions) {
    throw engine::InputError(
        engine::SourceLocation{"--mpi"},
        "this clustersim was built without MPI (install libopenmpi-dev: tools/setup, and rebuild)");
}

}  // namespace clustersim::cli

#endif
