// The project's history on the peers' workload (issue 21, docs/performance.md, "Peers"): SERIES run
// metrics x STEPS steps through History::ingest in batches of BATCH samples, then every series
// read back whole through History::querySeries (a bucket count high enough that nothing is
// decimated). Only the public History API is used, so the figure follows whatever storage
// db/history has. Prints one "RESULT key=value ..." line for bench/peers/run.py.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "db/history/history.h"

namespace {

using runplane::db::History;
using runplane::db::IngestBatch;
using runplane::db::IngestSample;
using runplane::db::NodeId;
using runplane::db::RunId;
using runplane::db::SeriesQuery;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct PeerArgs {
    std::string db;
    long series = 32, steps = 31250, batch = 1000;
};

// The same flags as sqlite_peer; nullopt (after a message naming the flag) on bad input.
std::optional<PeerArgs> parseArgs(int argc, char** argv) {
    PeerArgs args;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        long* target = flag == "--series"  ? &args.series
                       : flag == "--steps" ? &args.steps
                       : flag == "--batch" ? &args.batch
                                           : nullptr;
        if (i + 1 >= argc || (target == nullptr && flag != "--db")) {
            std::cerr << "history_peer: unknown or incomplete argument '" << flag
                      << "'\nusage: history_peer --db FILE [--series N] [--steps N] [--batch N]\n";
            return std::nullopt;
        }
        const std::string value = argv[++i];
        if (target == nullptr) {
            args.db = value;
            continue;
        }
        std::size_t used = 0;
        try {
            *target = std::stol(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != value.size() || *target <= 0 || *target > 100'000'000) {
            std::cerr << "history_peer: " << flag << " wants a positive integer, got '" << value
                      << "'\n";
            return std::nullopt;
        }
    }
    if (args.db.empty()) {
        std::cerr << "history_peer: --db FILE is required\n";
        return std::nullopt;
    }
    return args;
}

std::string seriesName(long key) {
    char name[32];
    std::snprintf(name, sizeof name, "train/m%02ld", key);
    return name;
}

std::int64_t bytesOf(const fs::path& path) {
    std::int64_t total = 0;
    for (const char* suffix : {"", "-wal", "-shm"}) {
        std::error_code ec;
        const auto size = fs::file_size(path.string() + suffix, ec);
        total += ec ? 0 : static_cast<std::int64_t>(size);
    }
    return total;
}

int run(const PeerArgs& args) {
    const fs::path path = args.db;
    for (const char* suffix : {"", "-wal", "-shm"}) {
        fs::remove(path.string() + suffix);
    }
    constexpr std::int64_t kT0 = 1'700'000'000'000'000'000, kDt = 100'000'000;
    const std::int64_t total = static_cast<std::int64_t>(args.series) * args.steps;
    std::vector<std::string> names;
    for (long key = 0; key < args.series; ++key) {
        names.push_back(seriesName(key));
    }
    double ingestS = 0;
    {
        auto history = History::open(path.string());
        if (!history.ok()) {
            std::cerr << "history_peer: " << history.error() << "\n";
            return 1;
        }
        // The batches are built outside the timed loop: the peers get their rows ready-made too.
        std::vector<IngestBatch> batches;
        for (std::int64_t first = 0; first < total; first += args.batch) {
            IngestBatch batch;
            batch.nodeId = NodeId{"n1"};
            for (std::int64_t i = first; i < std::min(total, first + args.batch); ++i) {
                const std::int64_t step = i / args.series, key = i % args.series;
                const double v = 1.0 + 0.5 * std::sin(static_cast<double>(step) * 1e-3 +
                                                      static_cast<double>(key));
                batch.samples.push_back(IngestSample{
                    static_cast<std::uint64_t>(i + 1), kT0 + step * kDt, RunId{"peer-run"},
                    names[static_cast<std::size_t>(key)], "", v, v, v, step});
            }
            batch.throughSeq = batch.samples.back().seq;
            batches.push_back(std::move(batch));
        }
        const auto start = Clock::now();
        for (const auto& batch : batches) {
            if (auto result = (*history)->ingest(batch); !result.ok()) {
                std::cerr << "history_peer: ingest: " << result.error() << "\n";
                return 1;
            }
        }
        ingestS = std::chrono::duration<double>(Clock::now() - start).count();
    }
    // Reopened, as a reader would: the closed writer has checkpointed its WAL.
    const std::int64_t bytes = bytesOf(path);
    auto history = History::open(path.string());
    if (!history.ok()) {
        std::cerr << "history_peer: " << history.error() << "\n";
        return 1;
    }
    std::int64_t read = 0;
    const auto start = Clock::now();
    for (const auto& name : names) {
        auto id = (*history)->findSeries(runplane::NodeId{"n1"}, runplane::RunId{"peer-run"}, name);
        if (!id.ok() || !*id) {
            std::cerr << "history_peer: series " << name << " not found\n";
            return 1;
        }
        // 4 x maxBuckets above the series' length: querySeries returns every raw sample.
        auto points = (*history)->querySeries(
            SeriesQuery{**id, std::numeric_limits<std::int64_t>::min(),
                        std::numeric_limits<std::int64_t>::max(), static_cast<int>(args.steps)});
        if (!points.ok() || points->decimated) {
            std::cerr << "history_peer: query of " << name << " failed or was decimated\n";
            return 1;
        }
        read += static_cast<std::int64_t>(points->points.size());
    }
    const double readS = std::chrono::duration<double>(Clock::now() - start).count();
    history->reset();
    std::printf(
        "RESULT peer=runplane samples=%lld ingest_s=%.4f ingest_per_s=%.0f bytes=%lld "
        "bytes_per_sample=%.2f read_points=%lld read_s=%.4f read_per_s=%.0f\n",
        static_cast<long long>(total), ingestS, static_cast<double>(total) / ingestS,
        static_cast<long long>(bytes), static_cast<double>(bytes) / static_cast<double>(total),
        static_cast<long long>(read), readS, static_cast<double>(read) / readS);
    for (const char* suffix : {"", "-wal", "-shm"}) {
        fs::remove(path.string() + suffix);
    }
    return read == total ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        auto args = parseArgs(argc, argv);
        if (!args) {
            return 2;
        }
        return run(*args);
    } catch (const std::exception& e) {
        std::cerr << "history_peer: " << e.what() << "\n";
        return 1;
    }
}
