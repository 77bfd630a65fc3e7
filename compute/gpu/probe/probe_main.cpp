// runplane-nccl-probe: NCCL bus-bandwidth probe in the manner of nccl-tests (our own code). One
// process drives every local GPU (ncclCommInitAll, or grouped ncclCommInitRank in multi-node mode
// with a given ncclUniqueId). Per collective and size: a correctness pass (device fill + check),
// warm-up, then timed iterations with CUDA events; p50/p95, algbw, busbw. Prints one JSON report.
// Method, schema and formulas: docs/nccl-health.md.
//
// Exit: 0 measured and correct; 1 failed or wrong results; 2 usage; 3 unavailable (no GPU/NCCL).
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/build_info.h"
#include "compute/gpu/nccl_probe.h"
#include "compute/gpu/nccl_resolve.h"
#include "compute/gpu/nccl_verdict.h"
#include "compute/gpu/probe/nccl_api.h"
#include "compute/gpu/probe/probe_kernels.h"
#include "compute/gpu/probe/probe_report.h"

namespace {

using namespace runplane::compute;
using namespace runplane::compute::probe;

struct ProbeFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    std::vector<std::string> collectives{"all_reduce"};
    std::uint64_t minBytes = 8ull << 20, maxBytes = 1ull << 30;
    unsigned warmup = 5, iters = 20;
    std::string ncclLibrary, uniqueIdHex;
    unsigned worldSize = 0, firstRank = 0, gpus = 0;
    bool printUniqueId = false;
    unsigned holdSeconds = 300;
};

constexpr const char* kUsage =
    "usage: runplane-nccl-probe [--collectives all_reduce,all_gather,reduce_scatter,all_to_all]\n"
    "         [--min-bytes N] [--max-bytes N] [--warmup N] [--iters N] [--gpus N] [--nccl-lib "
    "PATH]\n"
    "         [--unique-id HEX --world-size N --first-rank R]\n"
    "       runplane-nccl-probe --print-unique-id [--hold-seconds N] [--nccl-lib PATH]\n";

std::uint64_t parseUnsigned(const std::string& flag, const std::string& text) {
    std::uint64_t value = 0;
    std::size_t used = 0;
    try {
        value = std::stoull(text, &used, 0);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || text[0] == '-') {
        throw ProbeFailure(flag + " " + text + ": expected a non-negative integer");
    }
    return value;
}

Collective collectiveOf(const std::string& name) {
    if (name == "all_reduce")
        return Collective::AllReduce;
    if (name == "all_gather")
        return Collective::AllGather;
    if (name == "reduce_scatter")
        return Collective::ReduceScatter;
    if (name == "all_to_all")
        return Collective::AllToAll;
    throw ProbeFailure("--collectives: unknown collective '" + name +
                       "' (known: all_reduce, all_gather, reduce_scatter, all_to_all)");
}

Options parseOptions(int argc, char** argv) {
    Options o;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        const auto value = [&]() -> std::string {
            if (k + 1 >= argc)
                throw ProbeFailure(arg + ": missing value");
            return argv[++k];
        };
        if (arg == "--collectives") {
            o.collectives.clear();
            std::string list = value(), item;
            for (std::size_t pos = 0; pos <= list.size(); ++pos) {
                if (pos == list.size() || list[pos] == ',') {
                    collectiveOf(item);
                    o.collectives.push_back(item);
                    item.clear();
                } else {
                    item += list[pos];
                }
            }
        } else if (arg == "--min-bytes") {
            o.minBytes = parseUnsigned(arg, value());
        } else if (arg == "--max-bytes") {
            o.maxBytes = parseUnsigned(arg, value());
        } else if (arg == "--warmup") {
            o.warmup = static_cast<unsigned>(parseUnsigned(arg, value()));
        } else if (arg == "--iters") {
            o.iters = static_cast<unsigned>(parseUnsigned(arg, value()));
        } else if (arg == "--gpus") {
            o.gpus = static_cast<unsigned>(parseUnsigned(arg, value()));
        } else if (arg == "--nccl-lib") {
            o.ncclLibrary = value();
        } else if (arg == "--unique-id") {
            o.uniqueIdHex = value();
        } else if (arg == "--world-size") {
            o.worldSize = static_cast<unsigned>(parseUnsigned(arg, value()));
        } else if (arg == "--first-rank") {
            o.firstRank = static_cast<unsigned>(parseUnsigned(arg, value()));
        } else if (arg == "--print-unique-id") {
            o.printUniqueId = true;
        } else if (arg == "--hold-seconds") {
            o.holdSeconds = static_cast<unsigned>(parseUnsigned(arg, value()));
        } else {
            throw ProbeFailure("unknown argument '" + arg + "'");
        }
    }
    if (o.minBytes == 0 || o.minBytes > o.maxBytes) {
        throw ProbeFailure("--min-bytes must be > 0 and <= --max-bytes");
    }
    if (o.iters == 0)
        throw ProbeFailure("--iters must be > 0");
    if (!o.uniqueIdHex.empty() && (o.worldSize == 0 || o.firstRank >= o.worldSize)) {
        throw ProbeFailure("--unique-id needs --world-size N > 0 and --first-rank R < N");
    }
    if (o.uniqueIdHex.empty() && (o.worldSize != 0 || o.firstRank != 0)) {
        throw ProbeFailure("--world-size/--first-rank need --unique-id");
    }
    return o;
}

void checkCuda(cudaError_t rc, const char* what) {
    if (rc != cudaSuccess) {
        throw ProbeFailure(std::string(what) + ": " + cudaGetErrorName(rc) + " (" +
                           cudaGetErrorString(rc) + ")");
    }
}

class Runner {
  public:
    Runner(const NcclApi& nccl, const Options& options, ProbeReport& report)
        : m_nccl(nccl), m_options(options), m_report(report) {}

    void run(int deviceCount) {
        m_local = m_options.gpus == 0
                      ? deviceCount
                      : std::min<int>(deviceCount, static_cast<int>(m_options.gpus));
        const bool multiNode = !m_options.uniqueIdHex.empty();
        m_ranks = multiNode ? static_cast<int>(m_options.worldSize) : m_local;
        m_firstRank = multiNode ? static_cast<int>(m_options.firstRank) : 0;
        if (m_firstRank + m_local > m_ranks) {
            throw ProbeFailure("--first-rank " + std::to_string(m_firstRank) + " + " +
                               std::to_string(m_local) + " local GPUs exceeds --world-size " +
                               std::to_string(m_ranks));
        }
        m_report.mode = multiNode ? "multi-node" : "single-process";
        m_report.worldSize = static_cast<unsigned>(m_ranks);
        m_report.firstRank = static_cast<unsigned>(m_firstRank);
        m_report.localRanks = static_cast<unsigned>(m_local);
        describeGpus();
        initComms(multiNode);
        allocate(multiNode);
        for (const auto& name : m_options.collectives) {
            for (std::uint64_t size = m_options.minBytes; size <= m_options.maxBytes; size *= 2) {
                measure(name, collectiveOf(name), size);
                if (size > (~0ull >> 1))
                    break;
            }
        }
        for (int g = 0; g < m_local; ++g)
            m_nccl.commDestroy(m_comms[g]);
    }

  private:
    void checkNccl(ncclResult_t rc, const char* what) const {
        if (rc != ncclSuccess)
            throw ProbeFailure(std::string(what) + ": " + m_nccl.describe(rc));
    }

    void describeGpus() {
        for (int g = 0; g < m_local; ++g) {
            cudaDeviceProp prop{};
            checkCuda(cudaGetDeviceProperties(&prop, g), "cudaGetDeviceProperties");
            ProbeGpu gpu;
            gpu.device = g;
            gpu.name = prop.name;
            char bus[32] = {};
            if (cudaDeviceGetPCIBusId(bus, sizeof bus, g) == cudaSuccess)
                gpu.pciBusId = bus;
            gpu.memoryTotalBytes = prop.totalGlobalMem;
            gpu.ccMajor = prop.major;
            gpu.ccMinor = prop.minor;
            m_report.gpus.push_back(gpu);
            std::vector<int> row;
            for (int peer = 0; peer < m_local; ++peer) {
                int access = peer == g ? 1 : 0;
                if (peer != g)
                    cudaDeviceCanAccessPeer(&access, g, peer);
                row.push_back(access);
            }
            m_report.p2pAccess.push_back(row);
        }
    }

    void initComms(bool multiNode) {
        m_comms.assign(static_cast<std::size_t>(m_local), nullptr);
        if (!multiNode) {
            std::vector<int> devices(static_cast<std::size_t>(m_local));
            for (int g = 0; g < m_local; ++g)
                devices[static_cast<std::size_t>(g)] = g;
            checkNccl(m_nccl.commInitAll(m_comms.data(), m_local, devices.data()),
                      "ncclCommInitAll");
            return;
        }
        const auto bytes = parseNcclUniqueIdHex(m_options.uniqueIdHex);
        if (!bytes)
            throw ProbeFailure("--unique-id: " + bytes.error());
        ncclUniqueId id;
        static_assert(sizeof id.internal == 128, "NCCL_UNIQUE_ID_BYTES changed");
        std::memcpy(id.internal, bytes->data(), sizeof id.internal);
        checkNccl(m_nccl.groupStart(), "ncclGroupStart");
        for (int g = 0; g < m_local; ++g) {
            checkCuda(cudaSetDevice(g), "cudaSetDevice");
            checkNccl(m_nccl.commInitRank(&m_comms[static_cast<std::size_t>(g)], m_ranks, id,
                                          m_firstRank + g),
                      "ncclCommInitRank");
        }
        checkNccl(m_nccl.groupEnd(), "ncclGroupEnd (communicator init)");
    }

    void allocate(bool multiNode) {
        // Send and receive buffers of the largest size that fits on every local GPU, leaving
        // kHeadroom for NCCL's own buffers. Multi-node: every node must run the same sweep, so a
        // size that does not fit is an error rather than a local skip (a skip would hang peers).
        constexpr std::uint64_t kHeadroom = 1ull << 30;
        std::uint64_t minFree = ~0ull;
        for (int g = 0; g < m_local; ++g) {
            checkCuda(cudaSetDevice(g), "cudaSetDevice");
            std::size_t freeBytes = 0, totalBytes = 0;
            checkCuda(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
            minFree = std::min<std::uint64_t>(minFree, freeBytes);
        }
        m_capacity = 0;
        for (std::uint64_t size = m_options.minBytes; size <= m_options.maxBytes; size *= 2) {
            if (2 * size + kHeadroom <= minFree)
                m_capacity = size;
            if (size > (~0ull >> 2))
                break;
        }
        const std::uint64_t largest = [&] {
            std::uint64_t s = m_options.minBytes;
            while (s * 2 <= m_options.maxBytes)
                s *= 2;
            return s;
        }();
        if (m_capacity < largest && multiNode) {
            throw ProbeFailure("sizes up to " + std::to_string(largest) + " B need " +
                               std::to_string(2 * largest + kHeadroom) + " B free per GPU, only " +
                               std::to_string(minFree) +
                               " B are free; lower --max-bytes on every node");
        }
        if (m_capacity == 0) {
            throw ProbeFailure("not even --min-bytes " + std::to_string(m_options.minBytes) +
                               " fits: " + std::to_string(minFree) + " B free per GPU");
        }
        m_send.resize(static_cast<std::size_t>(m_local));
        m_recv.resize(static_cast<std::size_t>(m_local));
        m_counters.resize(static_cast<std::size_t>(m_local));
        m_streams.resize(static_cast<std::size_t>(m_local));
        m_start.resize(static_cast<std::size_t>(m_local));
        m_stop.resize(static_cast<std::size_t>(m_local));
        for (int g = 0; g < m_local; ++g) {
            const auto k = static_cast<std::size_t>(g);
            checkCuda(cudaSetDevice(g), "cudaSetDevice");
            checkCuda(cudaMalloc(&m_send[k], m_capacity), "cudaMalloc(send)");
            checkCuda(cudaMalloc(&m_recv[k], m_capacity), "cudaMalloc(recv)");
            checkCuda(cudaMalloc(&m_counters[k], sizeof(unsigned long long)),
                      "cudaMalloc(counter)");
            checkCuda(cudaStreamCreateWithFlags(&m_streams[k], cudaStreamNonBlocking),
                      "cudaStreamCreate");
            m_start[k].resize(m_options.iters);
            m_stop[k].resize(m_options.iters);
            for (unsigned it = 0; it < m_options.iters; ++it) {
                checkCuda(cudaEventCreate(&m_start[k][it]), "cudaEventCreate");
                checkCuda(cudaEventCreate(&m_stop[k][it]), "cudaEventCreate");
            }
        }
    }

    // One collective over every local rank, as one NCCL group.
    void issue(Collective collective, std::size_t total) {
        const BufferShape shape = shapeOf(collective, total, m_ranks);
        checkNccl(m_nccl.groupStart(), "ncclGroupStart");
        for (int g = 0; g < m_local; ++g) {
            const auto k = static_cast<std::size_t>(g);
            float* send = static_cast<float*>(m_send[k]);
            float* recv = static_cast<float*>(m_recv[k]);
            switch (collective) {
                case Collective::AllReduce:
                    checkNccl(m_nccl.allReduce(send, recv, total, ncclFloat32, ncclSum, m_comms[k],
                                               m_streams[k]),
                              "ncclAllReduce");
                    break;
                case Collective::AllGather:
                    checkNccl(m_nccl.allGather(send, recv, shape.sendCount, ncclFloat32, m_comms[k],
                                               m_streams[k]),
                              "ncclAllGather");
                    break;
                case Collective::ReduceScatter:
                    checkNccl(m_nccl.reduceScatter(send, recv, shape.recvCount, ncclFloat32,
                                                   ncclSum, m_comms[k], m_streams[k]),
                              "ncclReduceScatter");
                    break;
                case Collective::AllToAll: {
                    const std::size_t chunk = total / static_cast<std::size_t>(m_ranks);
                    for (int peer = 0; peer < m_ranks; ++peer) {
                        const std::size_t offset = chunk * static_cast<std::size_t>(peer);
                        checkNccl(m_nccl.send(send + offset, chunk, ncclFloat32, peer, m_comms[k],
                                              m_streams[k]),
                                  "ncclSend");
                        checkNccl(m_nccl.recv(recv + offset, chunk, ncclFloat32, peer, m_comms[k],
                                              m_streams[k]),
                                  "ncclRecv");
                    }
                    break;
                }
            }
        }
        checkNccl(m_nccl.groupEnd(), "ncclGroupEnd");
    }

    void synchronize() {
        for (int g = 0; g < m_local; ++g) {
            checkCuda(cudaStreamSynchronize(m_streams[static_cast<std::size_t>(g)]),
                      "cudaStreamSynchronize");
        }
    }

    unsigned long long correctnessPass(Collective collective, std::size_t total) {
        const BufferShape shape = shapeOf(collective, total, m_ranks);
        for (int g = 0; g < m_local; ++g) {
            const auto k = static_cast<std::size_t>(g);
            checkCuda(cudaSetDevice(g), "cudaSetDevice");
            checkCuda(launchFill(collective, static_cast<float*>(m_send[k]), total, m_firstRank + g,
                                 m_ranks, m_streams[k]),
                      "fill kernel");
            checkCuda(
                cudaMemsetAsync(m_recv[k], 0xFF, shape.recvCount * sizeof(float), m_streams[k]),
                "cudaMemsetAsync");  // NaN: a rank that receives nothing fails the check
            checkCuda(cudaMemsetAsync(m_counters[k], 0, sizeof(unsigned long long), m_streams[k]),
                      "cudaMemsetAsync");
        }
        issue(collective, total);
        for (int g = 0; g < m_local; ++g) {
            const auto k = static_cast<std::size_t>(g);
            checkCuda(cudaSetDevice(g), "cudaSetDevice");
            checkCuda(launchCheck(collective, static_cast<const float*>(m_recv[k]), total,
                                  m_firstRank + g, m_ranks, m_counters[k], m_streams[k]),
                      "check kernel");
        }
        synchronize();
        unsigned long long mismatches = 0;
        for (int g = 0; g < m_local; ++g) {
            unsigned long long count = 0;
            checkCuda(cudaMemcpy(&count, m_counters[static_cast<std::size_t>(g)], sizeof count,
                                 cudaMemcpyDeviceToHost),
                      "cudaMemcpy(counter)");
            mismatches += count;
        }
        return mismatches;
    }

    void measure(const std::string& name, Collective collective, std::uint64_t size) {
        const auto n = static_cast<std::uint64_t>(m_ranks);
        std::uint64_t total = size / sizeof(float);
        if (collective != Collective::AllReduce)
            total -= total % n;  // whole chunks per rank
        if (total == 0 || total / n == 0) {
            m_report.skipped.push_back({name, size, "fewer than one float32 per rank"});
            return;
        }
        if (size > m_capacity) {
            m_report.skipped.push_back(
                {name, size, "does not fit in free GPU memory (2 x size + 1 GiB)"});
            return;
        }
        ProbeRow row;
        row.collective = name;
        row.count = total;
        row.bytes = total * sizeof(float);
        row.iters = m_options.iters;
        row.mismatches = correctnessPass(collective, static_cast<std::size_t>(total));
        row.correct = row.mismatches == 0;
        for (unsigned it = 0; it < m_options.warmup; ++it)
            issue(collective, static_cast<std::size_t>(total));
        for (unsigned it = 0; it < m_options.iters; ++it) {
            for (int g = 0; g < m_local; ++g) {
                const auto k = static_cast<std::size_t>(g);
                checkCuda(cudaEventRecord(m_start[k][it], m_streams[k]), "cudaEventRecord");
            }
            issue(collective, static_cast<std::size_t>(total));
            for (int g = 0; g < m_local; ++g) {
                const auto k = static_cast<std::size_t>(g);
                checkCuda(cudaEventRecord(m_stop[k][it], m_streams[k]), "cudaEventRecord");
            }
        }
        synchronize();
        std::vector<double> times;  // per iteration: the slowest local GPU, in microseconds
        for (unsigned it = 0; it < m_options.iters; ++it) {
            double slowest = 0;
            for (int g = 0; g < m_local; ++g) {
                const auto k = static_cast<std::size_t>(g);
                float ms = 0;
                checkCuda(cudaEventElapsedTime(&ms, m_start[k][it], m_stop[k][it]),
                          "cudaEventElapsedTime");
                slowest = std::max(slowest, static_cast<double>(ms) * 1000.0);
            }
            times.push_back(slowest);
        }
        row.p50 = percentile(times, 50);
        row.p95 = percentile(times, 95);
        row.min = percentile(times, 0);
        double sum = 0;
        for (const double t : times)
            sum += t;
        row.mean = sum / static_cast<double>(times.size());
        row.algbw = row.p50 > 0 ? static_cast<double>(row.bytes) / (row.p50 * 1e-6) / 1e9 : 0;
        row.busbw = row.algbw * busBandwidthFactor(name, static_cast<unsigned>(m_ranks));
        std::fprintf(stderr,
                     "%-14s %12llu B  p50 %10.1f us  p95 %10.1f us  algbw %8.2f GB/s  busbw %8.2f "
                     "GB/s  %s\n",
                     name.c_str(), static_cast<unsigned long long>(row.bytes), row.p50, row.p95,
                     row.algbw, row.busbw, row.correct ? "correct" : "WRONG");
        m_report.rows.push_back(row);
    }

    const NcclApi& m_nccl;
    const Options& m_options;
    ProbeReport& m_report;
    int m_local = 0, m_ranks = 0, m_firstRank = 0;
    std::uint64_t m_capacity = 0;
    std::vector<ncclComm_t> m_comms;
    std::vector<void*> m_send, m_recv;
    std::vector<unsigned long long*> m_counters;
    std::vector<cudaStream_t> m_streams;
    std::vector<std::vector<cudaEvent_t>> m_start, m_stop;
};

int finish(ProbeReport& report, int code) {
    std::printf("%s\n", report.toJson().c_str());
    std::fflush(stdout);
    return code;
}

int printUniqueId(const NcclApi& nccl, unsigned holdSeconds) {
    ncclUniqueId id;
    const ncclResult_t rc = nccl.getUniqueId(&id);
    if (rc != ncclSuccess) {
        std::printf("error: ncclGetUniqueId: %s\n", nccl.describe(rc).c_str());
        return 1;
    }
    std::vector<unsigned char> bytes(id.internal, id.internal + sizeof id.internal);
    std::printf("%s\n", formatNcclUniqueIdHex(bytes).c_str());
    std::fflush(stdout);
    // This process hosts NCCL's bootstrap root: it must live until every rank has initialised.
    for (unsigned s = 0; s < holdSeconds; ++s)
        ::sleep(1);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (runplane::printVersionIfAsked(argc, argv, "runplane-nccl-probe")) {
        return 0;
    }
    ProbeReport report;
    report.argv.assign(argv, argv + argc);
    report.env = probeEnvironment();
    Options options;
    try {
        options = parseOptions(argc, argv);
    } catch (const ProbeFailure& e) {
        std::fprintf(stderr, "%s\n%s", e.what(), kUsage);
        report.error = std::string("usage: ") + e.what();
        return options.printUniqueId ? 2 : finish(report, 2);
    }
    report.mode = options.uniqueIdHex.empty() ? "single-process" : "multi-node";
    report.worldSize = options.worldSize;
    report.firstRank = options.firstRank;
    report.collectives = options.collectives;
    report.minBytes = options.minBytes;
    report.maxBytes = options.maxBytes;
    report.warmupIters = options.warmup;
    report.iters = options.iters;
    report.nics = scanRdmaNics();

    NcclApi nccl;
    if (const std::string error = nccl.load(options.ncclLibrary); !error.empty()) {
        if (options.printUniqueId) {
            std::printf("error: %s\n", error.c_str());
            return 1;
        }
        report.unavailable = "unavailable: NCCL: " + error;
        return finish(report, 3);
    }
    report.ncclVersionCode = nccl.versionCode;
    report.ncclVersion = formatNcclVersion(nccl.versionCode);
    report.ncclLibrary = nccl.loadedFrom;
    if (options.printUniqueId)
        return printUniqueId(nccl, options.holdSeconds);

    cudaRuntimeGetVersion(&report.cudaRuntimeVersion);
    cudaDriverGetVersion(&report.cudaDriverVersion);
    int deviceCount = 0;
    const cudaError_t rc = cudaGetDeviceCount(&deviceCount);
    if (rc != cudaSuccess || deviceCount == 0) {
        // Without a GPU, CUDA 13 says cudaErrorInsufficientDriver rather than cudaErrorNoDevice.
        report.unavailable = std::string("unavailable: no CUDA device (cudaGetDeviceCount: ") +
                             (rc != cudaSuccess ? cudaGetErrorName(rc) : "0 devices") + ")";
        return finish(report, 3);
    }
    try {
        Runner(nccl, options, report).run(deviceCount);
    } catch (const std::exception& e) {
        report.error = e.what();
    }
    NcclVerdictInput input;
    for (const auto& row : report.rows) {
        NcclProbeRow judged;
        judged.collective = row.collective;
        judged.bytes = row.bytes;
        judged.busbwGBps = row.busbw;
        judged.correct = row.correct;
        input.rows.push_back(judged);
    }
    input.worldSize = report.worldSize;
    input.localRanks = report.localRanks;
    for (const auto& gpu : report.gpus)
        input.gpuNames.push_back(gpu.name);
    input.nics = report.nics;
    const NcclVerdict verdict = judgeNcclProbe(input);
    report.verdict = report.error.empty() ? verdict.text : "failed: " + report.error;
    report.verdictStatus = report.error.empty() ? verdict.status : "failed";
    const bool wrong = std::any_of(report.rows.begin(), report.rows.end(),
                                   [](const ProbeRow& row) { return !row.correct; });
    return finish(report, !report.error.empty() || wrong ? 1 : 0);
}
