// Log classification speed (issue 42), beside a reference in the same run.
//
// Corpus: every real paste in tests/agent/fixtures/logs (their `# source:` headers dropped),
// concatenated and repeated to 64 MiB, written to a temporary file. Measured, each `--reps` times
// on that same file, alternating:
//   classify: the file read into memory, then every line through one LogReader on one thread,
//             as the collector does (prefixes, the RE2::Set over every format's trigger, the
//             recognizers of the rows that matched, joins, tracebacks);
//   grep -c:  `LC_ALL=C grep -c -F -e <the formats' fixed words>` over the file (a process).
// Output: one line per measure with the median and best MB/s (corpus bytes / wall seconds) and
// the classifier's CPU-time MB/s, plus the lines that gave a metric or an event (the work is
// real). Plain C++ (no Google Benchmark) so that it also builds as one static executable for a
// quiet machine: g++ -std=c++20 -O2 -static -I. bench/daemon/log_classify_bench.cpp
// backend/agent/log_metrics.cpp backend/agent/log_formats.cpp backend/agent/log_formats/*.cpp
// backend/agent/log_trigger_filter.cpp backend/agent/log_event_folds.cpp
// backend/agent/python_literal.cpp -lre2 -pthread
// -DRUNPLANE_SOURCE_DIR='"."'
// `--mib N` makes the corpus N MiB (default 64); callgrind's instruction counts per MB (repeatable
// on a busy machine) come from `valgrind --tool=callgrind log_classify_bench --reps 1 --mib 4`.
// `--dump FILE` writes, untimed, every metric and event the corpus gave (one line each): two
// builds' dumps compared show that a speed change changed no result.
// Results: docs/results/log-classify-*.md.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backend/agent/log_metrics.h"

namespace {

std::string buildCorpus(const std::string& fixtures, std::size_t bytes) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(fixtures)) {
        files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    std::string pastes;
    for (const auto& p : files) {
        std::ifstream in(p, std::ios::binary);
        std::string line;
        while (std::getline(in, line)) {
            if (!line.starts_with("# source:")) {
                pastes += line + "\n";
            }
        }
    }
    std::string corpus;
    corpus.reserve(bytes + pastes.size());
    while (corpus.size() < bytes) {
        corpus += pastes;
    }
    return corpus;
}

// Calls f with every non-empty line of text (without its newline).
template <typename F>
void forEachLine(const std::string& text, F f) {
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t nl = text.find('\n', start);
        if (nl == std::string::npos) {
            nl = text.size();
        }
        if (nl > start) {
            f(std::string_view(text.data() + start, nl - start));
        }
        start = nl + 1;
    }
}

double seconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Stats {
    std::vector<double> mbps;
    double median() {
        std::sort(mbps.begin(), mbps.end());
        return mbps[mbps.size() / 2];
    }
    double best() { return *std::max_element(mbps.begin(), mbps.end()); }
};

}  // namespace

int main(int argc, char** argv) {
    int reps = 5;
    std::size_t corpusMiB = 64;
    std::string dump;
    std::string fixtures = std::string(RUNPLANE_SOURCE_DIR) + "/tests/agent/fixtures/logs";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc) {
            reps = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--mib" && i + 1 < argc) {  // a smaller corpus (callgrind runs)
            corpusMiB = static_cast<std::size_t>(std::max(1, std::atoi(argv[++i])));
        } else if (a == "--dump" && i + 1 < argc) {
            dump = argv[++i];
        } else if (a == "--fixtures" && i + 1 < argc) {
            fixtures = argv[++i];
        }
    }
    const std::string corpus = buildCorpus(fixtures, corpusMiB << 20);
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("runplane-log-corpus-" + std::to_string(::getpid()) + ".log"))
                                 .string();
    {
        std::ofstream f(path, std::ios::binary);
        f << corpus;
    }
    const double mb = static_cast<double>(corpus.size()) / 1e6;
    const std::string grep =
        "LC_ALL=C grep -c -F -e 'batch' -e 'iteration' -e 'step' -e 'throughput' -e 'NCCL' "
        "-e 'out of memory' -e 'Killed' -e 'Error' '" +
        path + "' > '" + path + ".count'";  // not /dev/null: GNU grep then stops at the first match
    Stats classify;
    Stats classifyCpu;
    Stats grepStats;
    long lines = 0;
    long withResults = 0;
    for (int r = 0; r < reps; ++r) {
        {
            const auto t0 = std::chrono::steady_clock::now();
            const std::clock_t c0 = std::clock();
            std::ifstream in(path, std::ios::binary);
            std::stringstream ss;
            ss << in.rdbuf();
            const std::string text = ss.str();
            runplane::agent::LogReader reader;
            lines = 0;
            withResults = 0;
            forEachLine(text, [&](std::string_view line) {
                ++lines;
                const auto p = reader.feed(line);
                withResults += (!p.metrics.empty() || !p.events.empty()) ? 1 : 0;
            });
            const auto p = reader.finish();
            withResults += p.metrics.empty() ? 0 : 1;
            classify.mbps.push_back(mb / seconds(t0));
            classifyCpu.mbps.push_back(mb * CLOCKS_PER_SEC /
                                       static_cast<double>(std::clock() - c0));
        }
        {
            const auto t0 = std::chrono::steady_clock::now();
            if (std::system(grep.c_str()) == -1) {
                std::cerr << "grep did not run\n";
                return 1;
            }
            grepStats.mbps.push_back(mb / seconds(t0));
        }
    }
    std::filesystem::remove(path);
    std::filesystem::remove(path + ".count");
    if (!dump.empty()) {
        std::ofstream out(dump, std::ios::binary);
        runplane::agent::LogReader reader;
        auto write = [&out](long line, const runplane::agent::ParsedLogLine& p) {
            for (const auto& m : p.metrics) {
                char value[64];
                std::snprintf(value, sizeof value, "%.17g", m.value);
                out << line << " m " << m.series << ' ' << value << ' ' << m.step << '\n';
            }
            for (const auto& e : p.events) {
                out << line << " e " << static_cast<int>(e.kind) << ' ' << e.message;
                for (const auto& [k, v] : e.attrs) {
                    out << ' ' << k << '=' << v;
                }
                out << '\n';
            }
            if (!p.warning.empty()) {
                out << line << " w " << p.warning << '\n';
            }
        };
        long n = 0;
        forEachLine(corpus, [&](std::string_view line) { write(++n, reader.feed(line)); });
        write(n + 1, reader.finish());
    }
    std::printf("corpus: %.1f MB, %ld lines (%ld with a metric or an event), %d repetitions\n", mb,
                lines, withResults, reps);
    std::printf(
        "classify (1 thread): median %.1f MB/s, best %.1f MB/s (wall); median %.1f MB/s "
        "(CPU time)\n",
        classify.median(), classify.best(), classifyCpu.median());
    std::printf("grep -c (reference): median %.1f MB/s, best %.1f MB/s (wall)\n",
                grepStats.median(), grepStats.best());
    return 0;
}
