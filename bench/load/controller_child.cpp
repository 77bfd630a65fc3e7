#include "bench/load/controller_child.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/control/cluster_profile.h"
#include "backend/control/controller.h"
#include "common/thread_role.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/cached_text_delegate.h"
#include "gui/widgets/flat_style.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::bench {

namespace {

std::atomic<bool> g_terminate{false};

void onTerminate(int) {
    g_terminate = true;
}

double msSince(const QElapsedTimer& timer) {
    return static_cast<double>(timer.nsecsElapsed()) * 1e-6;
}

// CPU time of the calling thread (what a redraw costs, apart from the time it waits for a core
// on a shared machine).
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// Time the calling thread has spent runnable but waiting for a core (Linux schedstat's
// run_delay), so a paint's wall time splits into its CPU, its queueing and the rest (blocked).
double threadQueuedMs() {
    std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
    if (f == nullptr) {
        return 0;
    }
    unsigned long long runNs = 0;
    unsigned long long waitNs = 0;
    const int got = std::fscanf(f, "%llu %llu", &runNs, &waitNs);
    std::fclose(f);
    return got == 2 ? static_cast<double>(waitNs) * 1e-6 : 0;
}

// The calling thread's minor page faults and voluntary context switches so far (a paint that
// sleeps, not queued for a core, is blocked: on a page fault waiting for the process's memory-map
// lock, or on a lock of its own).
struct ThreadWaits {
    long minorFaults = 0, voluntarySwitches = 0;
};
ThreadWaits threadWaits() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return {usage.ru_minflt, usage.ru_nvcsw};
}

// Time the hypervisor has taken from one CPU so far (/proc/stat "cpuN", its eighth value, in
// clock ticks: 10 ms), or -1. On a virtual machine a vCPU descheduled by the host still counts
// its thread's CPU time, so a paint's CPU time alone cannot tell work from steal.
double cpuStealMs(int cpu) {
    std::ifstream in("/proc/stat");
    const std::string key = "cpu" + std::to_string(cpu) + " ";
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(key, 0) == 0) {
            std::istringstream values(line.substr(key.size()));
            unsigned long long v[8] = {};
            for (auto& x : v) {
                values >> x;
            }
            return static_cast<double>(v[7]) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
        }
    }
    return -1;
}

// One paint of a whole page (every child widget's paintEvent into an image of its size): its
// wall time, the GUI thread's CPU time, its time queued for a core, its minor faults and
// voluntary switches meanwhile, and the steal on its CPU (-1: it ran on another CPU at the end).
struct PaintTime {
    double wallMs = 0, cpuMs = 0, queuedMs = 0, stealMs = -1;
    long faults = 0, switches = 0;
};
// (CPU and queueing count from before the image's allocation, the wall time from after it, as
// the figures were taken before this helper.) `reused`: paint into that image, allocated once
// per page as the GUI's backing store is, instead of a new 5 MB image each time whose first
// touch faults in every page.
PaintTime timedPaint(QWidget* page, QImage* reused) {
    // The steal and rusage reads (a /proc/stat parse) stay outside the interval they measure.
    const int cpu = sched_getcpu();
    const double stealMark = cpuStealMs(cpu);
    const ThreadWaits waitsMark = threadWaits();
    const double cpuMark = threadCpuMs();
    const double queuedMark = threadQueuedMs();
    QImage fresh;
    QImage* image = reused != nullptr ? reused : &fresh;
    if (image->size() != page->size()) {
        *image = QImage(page->size(), QImage::Format_ARGB32_Premultiplied);
    }
    QElapsedTimer timer;
    timer.start();
    page->render(image);
    PaintTime t;
    t.wallMs = msSince(timer);
    t.cpuMs = threadCpuMs() - cpuMark;
    t.queuedMs = threadQueuedMs() - queuedMark;
    const ThreadWaits waits = threadWaits();
    t.faults = waits.minorFaults - waitsMark.minorFaults;
    t.switches = waits.voluntarySwitches - waitsMark.voluntarySwitches;
    t.stealMs = sched_getcpu() == cpu && stealMark >= 0 ? cpuStealMs(cpu) - stealMark : -1;
    return t;
}

// A fixed piece of work timed on the GUI thread just before and just after each Runs paint, as
// a control measured in the same run: when the host slows the thread (a busy SMT sibling, a lower
// clock, contended memory bandwidth, a vCPU descheduled without steal accounting), the reference
// slows with it; when only the paint slows, the paint did more work. Two kernels: a dependent
// integer chain (core speed) and a copy of an image-sized buffer (memory bandwidth; a page's
// image is 1400 x 900 x 4 bytes).
struct ReferenceTime {
    double aluCpuMs = 0, memCpuMs = 0;
};
ReferenceTime timedReference() {
    static std::vector<std::uint64_t> from(1400 * 900 / 2, 1);
    static std::vector<std::uint64_t> to(from.size(), 0);
    static volatile std::uint64_t sink = 0;
    ReferenceTime t;
    double mark = threadCpuMs();
    std::uint64_t x = 0x9E3779B97F4A7C15ULL + sink;
    for (int i = 0; i < 500'000; ++i) {  // about 1 ms at 3 GHz (six dependent operations)
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    sink = x;
    t.aluCpuMs = threadCpuMs() - mark;
    mark = threadCpuMs();
    std::copy(from.begin(), from.end(), to.begin());
    sink = sink + to[static_cast<std::size_t>(x % to.size())];
    t.memCpuMs = threadCpuMs() - mark;
    return t;
}

int runLib(const ChildOptions& options) {
    auto profile = control::loadClusterProfile(options.profile);
    if (!profile) {
        std::fprintf(stderr, "bench_load child: %s\n", profile.error().c_str());
        return 2;
    }
    control::ControllerOptions copts;
    copts.historyPath = options.historyPath;
    copts.sampleHz = profile->telemetryHz;
    copts.writer.checkpointThread = !options.inlineCheckpoints;
    copts.writer.durableCommits = !options.unsyncedCommits;
    control::Controller controller(copts);
    for (const auto& address : profile->addresses()) {
        if (Status s = controller.addNode(address); !s.ok()) {
            std::fprintf(stderr, "bench_load child: %s\n", s.error().c_str());
            return 2;
        }
    }
    // Once a second: how many ingestors stream, and why the others do not (first error seen).
    auto next = std::chrono::steady_clock::now();
    while (!g_terminate) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (std::chrono::steady_clock::now() < next) {
            continue;
        }
        next += std::chrono::seconds(1);
        int streaming = 0;
        std::uint64_t reconnects = 0;
        std::string error;
        for (const auto& view : controller.nodes()) {
            streaming += view.ingest.state == control::IngestState::Streaming ? 1 : 0;
            reconnects += view.ingest.reconnects;
            if (error.empty()) {
                error = view.ingest.lastError;
            }
        }
        const control::HistoryWriterStats w = controller.writerStats();
        nlohmann::json line = {{"lib",
                                {{"streaming", streaming},
                                 {"reconnects", reconnects},
                                 {"error", error},
                                 {"writer",
                                  {{"transactions", w.transactions},
                                   {"transaction_ms_log2_bins", w.transactionMs},
                                   {"transaction_ms_max", w.transactionMsMax},
                                   {"transaction_ms_total", w.transactionMsTotal},
                                   {"checkpoints", w.checkpoints},
                                   {"checkpoints_busy", w.checkpointsBusy},
                                   {"checkpoint_ms_max", w.checkpointMsMax},
                                   {"checkpoint_ms_total", w.checkpointMsTotal},
                                   {"wal_truncations", w.walTruncations},
                                   {"wal_truncations_busy", w.walTruncationsBusy}}}}}};
        std::printf("%s\n", line.dump().c_str());
        std::fflush(stdout);
    }
    controller.stopAll();
    return 0;
}

int runGui(const ChildOptions& options, int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    threads::setBackgroundNice(options.backgroundNice);  // as runplane's main does
    if (options.guiSliceUs > 0 && !threads::setOwnSlice(options.guiSliceUs)) {
        std::fprintf(stderr, "bench_load child: the kernel refused a %d us slice\n",
                     options.guiSliceUs);
    }
    std::fprintf(stderr, "bench_load child: GUI thread slice %d us (0: not reported)\n",
                 threads::ownSlice());
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("RunplaneLoadBench"));
    QApplication::setApplicationName(QStringLiteral("bench_load"));
    if (!options.platformStyle) {
        gui::installFlatStyle();  // as runplane's main does
    }
    const QString history = QString::fromStdString(options.historyPath);
    gui::ClusterPage cluster(history);
    gui::RunsPage runs(history);
    for (QWidget* page : {static_cast<QWidget*>(&cluster), static_cast<QWidget*>(&runs)}) {
        page->resize(1400, 900);
        page->show();
    }
    if (options.styledDelegates) {  // the A/B of the pages' CachedTextDelegate
        gui::useStyledDelegates(&cluster);
        gui::useStyledDelegates(&runs);
    }
    if (Status s = cluster.useCluster(QString::fromStdString(options.profile)); !s.ok()) {
        std::fprintf(stderr, "bench_load child: %s\n", s.error().c_str());
        return 2;
    }
    // Event-loop stall: how late a 5 ms timer fires (the replots and model updates the pages do
    // on the GUI thread delay it).
    QElapsedTimer clock;
    clock.start();
    double lastTick = 0;
    double stallMax = 0;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const double now = msSince(clock);
        stallMax = std::max(stallMax, now - lastTick - 5.0);
        lastTick = now;
        if (g_terminate) {
            app.quit();
        }
    });
    tick.start(5);
    // Once a second: a full redraw of the Cluster page's memory plot (rebuild of its 256 lines +
    // replot) and the Cluster page's paint, then the Runs page's paint: at once after it, or
    // (--paint-apart) half a second later in its own event-loop turn, as the GUI paints the one
    // page its tab shows.
    struct ClusterFigures {
        double plotMs = 0, plotCpuMs = 0;
        PaintTime paint;
        bool runSelected = false;
    } last;
    // --paint-into-one-image: one image per page for every paint (the GUI's backing store).
    QImage clusterImage;
    QImage runsImage;
    auto paintRunsAndReport = [&] {
        const ReferenceTime before = timedReference();
        const int paintCpu = sched_getcpu();
        const PaintTime runsPaint =
            timedPaint(&runs, options.paintIntoOneImage ? &runsImage : nullptr);
        const ReferenceTime after = timedReference();
        std::printf(
            "{\"gui\":{\"cluster_paint_ms\":%.3f,\"cluster_paint_cpu_ms\":%.3f,"
            "\"cluster_paint_queued_ms\":%.3f,"
            "\"cluster_plot_redraw_ms\":%.3f,\"cluster_plot_redraw_cpu_ms\":%.3f,"
            "\"runs_paint_ms\":%.3f,\"runs_paint_cpu_ms\":%.3f,\"runs_paint_queued_ms\":%.3f,"
            "\"cluster_paint_faults\":%ld,\"cluster_paint_switches\":%ld,"
            "\"runs_paint_faults\":%ld,\"runs_paint_switches\":%ld,"
            "\"cluster_paint_steal_ms\":%.0f,\"runs_paint_steal_ms\":%.0f,"
            "\"runs_ref_alu_before_cpu_ms\":%.3f,\"runs_ref_alu_after_cpu_ms\":%.3f,"
            "\"runs_ref_mem_before_cpu_ms\":%.3f,\"runs_ref_mem_after_cpu_ms\":%.3f,"
            "\"runs_paint_on_cpu\":%d,"
            "\"stall_max_ms\":%.3f,\"nodes_listed\":%d,"
            "\"plot_series\":%d,\"run_selected\":%s}}\n",
            last.paint.wallMs, last.paint.cpuMs, last.paint.queuedMs, last.plotMs, last.plotCpuMs,
            runsPaint.wallMs, runsPaint.cpuMs, runsPaint.queuedMs, last.paint.faults,
            last.paint.switches, runsPaint.faults, runsPaint.switches, last.paint.stealMs,
            runsPaint.stealMs, before.aluCpuMs, after.aluCpuMs, before.memCpuMs, after.memCpuMs,
            paintCpu, stallMax, static_cast<int>(cluster.addresses().size()),
            cluster.memoryPlot()->seriesCount(), last.runSelected ? "true" : "false");
        std::fflush(stdout);
        stallMax = 0;
        lastTick = msSince(clock);
    };
    QTimer report;
    QObject::connect(&report, &QTimer::timeout, [&] {
        last.runSelected = !options.runId.empty() &&
                           (runs.selectedRunId() == QString::fromStdString(options.runId) ||
                            runs.selectRun(QString::fromStdString(options.runId)));
        QElapsedTimer timer;
        timer.start();
        const double cpuBefore = threadCpuMs();
        cluster.memoryPlot()->flush();
        last.plotMs = msSince(timer);
        last.plotCpuMs = threadCpuMs() - cpuBefore;
        last.paint = timedPaint(&cluster, options.paintIntoOneImage ? &clusterImage : nullptr);
        if (options.paintApart) {
            QTimer::singleShot(500, &app, paintRunsAndReport);
        } else {
            paintRunsAndReport();
        }
    });
    report.start(1000);
    const int rc = QApplication::exec();
    if (!options.savePagesDir.empty()) {  // the pages as the load left them, to look at
        const QString dir = QString::fromStdString(options.savePagesDir);
        QDir().mkpath(dir);  // a missing directory fails at the save below, which says so
        for (const auto& [page, name] : {std::pair<QWidget*, const char*>{&cluster, "cluster"},
                                         std::pair<QWidget*, const char*>{&runs, "runs"}}) {
            const QString path = dir + QStringLiteral("/%1.png").arg(QLatin1String(name));
            if (!page->grab().save(path)) {
                std::fprintf(stderr, "bench_load child: cannot save %s\n", qPrintable(path));
            }
        }
    }
    return rc;
}

}  // namespace

int runControllerChild(const ChildOptions& options, int argc, char** argv) {
    std::signal(SIGTERM, onTerminate);
    std::signal(SIGINT, onTerminate);
    if (options.mode == "lib") {
        return runLib(options);
    }
    return runGui(options, argc, argv);
}

}  // namespace runplane::bench
