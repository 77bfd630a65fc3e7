// import_bench PATH HISTORY: imports the TensorBoard run at PATH (a file or a folder) into a new
// history file HISTORY and prints, as one JSON object, the points, the seconds spent reading and
// decoding the event files, and the seconds storing them (bench/imports/run.py).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "db/history/history.h"
#include "db/imports/run_import.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: import_bench PATH HISTORY\n";
        return 2;
    }
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point a, Clock::time_point b) {
        return std::chrono::duration<double>(b - a).count();
    };
    std::filesystem::remove(argv[2]);
    const auto t0 = Clock::now();
    auto sources = runplane::imports::findImportSources(argv[1]);
    if (!sources.ok()) {
        std::cerr << sources.error() << "\n";
        return 1;
    }
    std::size_t points = 0;
    std::size_t stored = 0;
    double readS = 0;
    double storeS = 0;
    auto history = runplane::db::History::open(argv[2]);
    if (!history.ok()) {
        std::cerr << history.error() << "\n";
        return 1;
    }
    for (const auto& source : *sources) {
        const auto r0 = Clock::now();
        auto run = runplane::imports::readImportSource(source);
        const auto r1 = Clock::now();
        if (!run.ok()) {
            std::cerr << run.error() << "\n";
            return 1;
        }
        auto result = runplane::imports::storeImportedRun(**history, *run, 1);
        const auto r2 = Clock::now();
        if (!result.ok()) {
            std::cerr << result.error() << "\n";
            return 1;
        }
        points += run->pointCount();
        stored += result->samplesInserted;
        readS += seconds(r0, r1);
        storeS += seconds(r1, r2);
    }
    history->reset();  // seals the open chunks: part of storing
    const auto t1 = Clock::now();
    std::cout << nlohmann::json{{"points", points},
                                {"stored", stored},
                                {"read_s", readS},
                                {"store_s", storeS},
                                {"total_s", seconds(t0, t1)}}
                     .dump()
              << "\n";
    return 0;
}
