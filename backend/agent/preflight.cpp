#include "backend/agent/preflight.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "backend/agent/daemon_config.h"
#include "backend/agent/host_memory.h"
#include "backend/agent/node_info.h"
#include "backend/agent/preflight_master.h"
#include "backend/agent/proc_tree.h"
#include "backend/agent/ray_version.h"
#include "common/units/units.h"
#include "compute/gpu/gpu_inventory.h"
#include "compute/gpu/nccl_gate.h"
#include "compute/gpu/nccl_resolve.h"
#include "compute/gpu/subprocess.h"

namespace runplane::agent {
namespace {

std::string bytesText(std::uint64_t bytes) {
    return units::formatBytes(static_cast<double>(bytes));
}

void add(v1::PreflightReport& r, const std::string& id, v1::CheckStatus status,
         const std::string& message, const std::string& detail = "") {
    addCheck(r, id, status, message, detail);
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

bool exists(const std::string& path) {
    return ::access(path.c_str(), F_OK) == 0;
}

std::string envValue(const v1::PreflightRequest& req, const std::string& key) {
    auto it = req.env().find(key);
    return it == req.env().end() ? std::string() : it->second;
}

// NCCL_SOCKET_IFNAME syntax, as NCCL reads it: comma-separated prefixes; a leading '^' makes the
// list exclusions (every other interface is selected), then a leading '=' makes the names exact.
void checkIfname(v1::PreflightReport& r, const std::string& var, const std::string& value,
                 const std::string& netDir) {
    if (value.empty()) {
        return;
    }
    std::string spec = value;
    const bool exclude = spec[0] == '^';
    if (exclude) {
        spec = spec.substr(1);
    }
    const bool exact = !spec.empty() && spec[0] == '=';
    if (exact) {
        spec = spec.substr(1);
    }
    std::vector<std::string> present;
    if (auto* d = ::opendir(netDir.c_str())) {
        while (auto* e = ::readdir(d)) {
            if (e->d_name[0] != '.') {
                present.emplace_back(e->d_name);
            }
        }
        ::closedir(d);
    }
    std::sort(present.begin(), present.end());
    std::vector<std::string> items;
    {
        std::stringstream ss(spec);
        std::string item;
        while (std::getline(ss, item, ',')) {
            if (!item.empty()) {
                items.push_back(item);
            }
        }
    }
    auto matches = [&](const std::string& name, const std::string& item) {
        return exact ? name == item : name.rfind(item, 0) == 0;
    };
    auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v) {
            out += (out.empty() ? "" : " ") + x;
        }
        return out;
    };
    const std::string have = join(present);
    if (exclude) {
        std::vector<std::string> selected;
        for (const auto& n : present) {
            if (std::none_of(items.begin(), items.end(),
                             [&](const std::string& i) { return matches(n, i); })) {
                selected.push_back(n);
            }
        }
        if (selected.empty()) {
            add(r, "net.ifname", v1::CHECK_FAIL,
                var + "=" + value + " excludes every interface of this node (present: " + have +
                    ")",
                "NCCL/Gloo would find no interface to bootstrap on");
        } else if (selected == std::vector<std::string>{"lo"}) {
            add(r, "net.ifname", v1::CHECK_WARN,
                var + "=" + value +
                    " leaves only lo on this node: peers on other hosts cannot "
                    "reach it",
                have);
        } else {
            add(r, "net.ifname", v1::CHECK_PASS,
                var + "=" + value + " selects " + join(selected) + " on this node", have);
        }
        return;
    }
    std::vector<std::string> missing;
    std::vector<std::string> selected;
    for (const auto& item : items) {
        bool found = false;
        for (const auto& n : present) {
            if (matches(n, item)) {
                found = true;
                if (std::find(selected.begin(), selected.end(), n) == selected.end()) {
                    selected.push_back(n);
                }
            }
        }
        if (!found) {
            missing.push_back(item);
        }
    }
    std::string m;
    for (const auto& x : missing) {
        m += (m.empty() ? "" : ", ") + x;
    }
    // NCCL uses every interface the list selects and fails only when it selects none: a list
    // written for several kinds of node (eth,ens) passes where one of its items matches.
    if (!selected.empty()) {
        add(r, "net.ifname", v1::CHECK_PASS,
            var + "=" + value + " selects " + join(selected) + " on this node" +
                (missing.empty() ? "" : " (" + m + " matches nothing here)"),
            have);
    } else {
        add(r, "net.ifname", v1::CHECK_FAIL,
            var + "=" + value + ": no interface matches " + m + " on this node (present: " + have +
                ")",
            "NCCL/Gloo would fail to bootstrap or pick the wrong NIC");
    }
}

// Whether this node has a route to a numeric MASTER_ADDR: a UDP socket connected to it (no packet
// is sent) makes the kernel pick the route and the source address. "" with *source set when it
// does; the reason when it does not (no route: the address is on no network of this node); ""
// with *source empty for a name (not resolved here: a DNS wait has no place in a preflight).
std::string routeTo(const std::string& address, std::string* source) {
    source->clear();
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (!socketAddress(address, 9, &ss, &len)) {
        return {};
    }
    const int fd = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return std::string("cannot open a socket: ") + std::strerror(errno);
    }
    std::string why;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
        why = std::strerror(errno);
    } else {
        sockaddr_storage local{};
        socklen_t localLen = sizeof(local);
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLen) == 0) {
            *source = addressText(reinterpret_cast<sockaddr*>(&local));
        }
    }
    ::close(fd);
    return why;
}

}  // namespace

std::vector<std::string> loopbackHostnames(const std::string& hostsText) {
    std::vector<std::string> out;
    std::istringstream in(hostsText);
    std::string line;
    while (std::getline(in, line)) {
        if (const auto hash = line.find('#'); hash != std::string::npos) {
            line.resize(hash);
        }
        std::istringstream fields(line);
        std::string addr, name;
        if (!(fields >> addr)) {
            continue;
        }
        if (!isLoopbackHost(addr)) {
            continue;
        }
        while (fields >> name) {
            out.push_back(name);
        }
    }
    return out;
}

PreflightEnvironment PreflightEnvironment::system(bool gpuTelemetry) {
    PreflightEnvironment env;
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    env.hostname = host;
    // One NVML sample per environment (one per Preflight call) serves names, pids and UUIDs.
    auto sample = std::make_shared<std::optional<compute::GpuSnapshot>>();
    auto gpuSnapshot = [sample]() -> const compute::GpuSnapshot& {
        if (!sample->has_value()) {
            *sample = compute::queryGpus();
        }
        return **sample;
    };
    env.gpus = [gpuSnapshot](std::vector<std::string>* names, std::vector<int>* pids,
                             std::string* reason) {
        const auto& snap = gpuSnapshot();
        for (const auto& g : snap.gpus) {
            names->push_back(g.name);
        }
        for (const auto& p : snap.processes) {
            pids->push_back(p.pid);
        }
        *reason = snap.unavailableReason;
    };
    env.gpuUuids = [gpuSnapshot] {
        std::vector<std::string> out;
        for (const auto& g : gpuSnapshot().gpus) {
            if (!g.uuid.empty()) {
                out.push_back(g.uuid);
            }
        }
        return out;
    };
    if (!gpuTelemetry) {
        // --no-gpu: the lazy NVML sample above is never taken (several test daemons on one GPU
        // machine would otherwise report its UUIDs and fail gpu.distinct; docs/dispatch.md).
        env.gpus = [](std::vector<std::string>*, std::vector<int>*, std::string* reason) {
            *reason = "GPU telemetry disabled (--no-gpu)";
        };
        env.gpuUuids = [] { return std::vector<std::string>{}; };
    }
    env.ncclGate = [](const std::vector<std::pair<std::string, std::string>>& vars, int minCode) {
        compute::NcclResolveConfig cfg;
        for (const auto& [k, v] : vars) {
            cfg.env[k] = v;
        }
        if (cfg.env.find("PATH") == cfg.env.end()) {
            cfg.env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
        }
        const auto libs = compute::resolveNcclLibraries(cfg);
        const auto gate = compute::checkNcclRequirement(libs, minCode);
        return std::make_pair(gate.pass, gate.message);
    };
    env.rayVersion = [](const std::string& path) {
        const auto answer = rayVersionOnPath(path);
        return std::make_pair(answer.ok, answer.message);
    };
    env.processes = [] {
        std::vector<std::pair<int, std::string>> out;
        for (pid_t pid : listPids()) {
            if (auto comm = readSmallFile("/proc/" + std::to_string(pid) + "/comm", 64)) {
                std::string c = *comm;
                while (!c.empty() && c.back() == '\n') {
                    c.pop_back();
                }
                out.emplace_back(pid, c);
            }
        }
        return out;
    };
    return env;
}

v1::PreflightReport runPreflight(const v1::PreflightRequest& req, const PreflightEnvironment& env) {
    v1::PreflightReport r;
    r.set_hostname(env.hostname);
    if (env.gpuUuids) {
        for (const auto& uuid : env.gpuUuids()) {
            r.add_gpu_uuids(uuid);
        }
    }

    // GPUs: count and model.
    std::vector<std::string> gpuNames;
    std::vector<int> gpuPids;
    std::string gpuReason = "GPU query unavailable in this build";
    if (env.gpus) {
        gpuReason.clear();
        env.gpus(&gpuNames, &gpuPids, &gpuReason);
    }
    if (req.expected_gpus() == 0) {
        add(r, "gpu.count", v1::CHECK_SKIP,
            "no GPU count expected (found " + std::to_string(gpuNames.size()) + ")");
    } else if (gpuNames.size() < req.expected_gpus()) {
        add(r, "gpu.count", v1::CHECK_FAIL,
            "expected " + std::to_string(req.expected_gpus()) + " GPUs, found " +
                std::to_string(gpuNames.size()) +
                (gpuNames.empty() && !gpuReason.empty() ? " (" + gpuReason + ")" : ""));
    } else if (gpuNames.size() > req.expected_gpus()) {
        add(r, "gpu.count", v1::CHECK_WARN,
            "expected " + std::to_string(req.expected_gpus()) + " GPUs, found " +
                std::to_string(gpuNames.size()) + "; the rest stay idle");
    } else {
        add(r, "gpu.count", v1::CHECK_PASS, std::to_string(gpuNames.size()) + " GPUs as expected");
    }
    if (req.expected_gpu_model().empty()) {
        add(r, "gpu.model", v1::CHECK_SKIP, "no GPU model expected");
    } else if (gpuNames.empty()) {
        add(r, "gpu.model", v1::CHECK_FAIL,
            "expected " + req.expected_gpu_model() + " GPUs, found none");
    } else {
        std::string wrong;
        for (std::size_t i = 0; i < gpuNames.size(); ++i) {
            if (lower(gpuNames[i]).find(lower(req.expected_gpu_model())) == std::string::npos) {
                wrong += (wrong.empty() ? "" : ", ") + std::string("GPU ") + std::to_string(i) +
                         " is " + gpuNames[i];
            }
        }
        if (wrong.empty()) {
            add(r, "gpu.model", v1::CHECK_PASS,
                "every GPU is a " + req.expected_gpu_model() + " (" + gpuNames[0] + ")");
        } else {
            add(r, "gpu.model", v1::CHECK_FAIL,
                "expected " + req.expected_gpu_model() + ": " + wrong);
        }
    }

    // Host RAM against the planned peak.
    if (req.planned_peak_host_bytes() == 0) {
        add(r, "host.ram", v1::CHECK_SKIP, "no planned host-memory peak given");
    } else if (auto mem = readHostMemory(env.meminfoPath)) {
        const auto peak = req.planned_peak_host_bytes();
        const std::string nums = "planned peak " + bytesText(peak) + ", host RAM " +
                                 bytesText(mem->totalBytes) + ", available now " +
                                 bytesText(mem->availableBytes);
        if (peak > mem->totalBytes) {
            add(r, "host.ram", v1::CHECK_FAIL, nums + ": the plan does not fit in this node's RAM");
        } else if (peak > mem->availableBytes) {
            add(r, "host.ram", v1::CHECK_WARN,
                nums + ": other processes hold memory the run will need");
        } else if (static_cast<double>(peak) > 0.9 * static_cast<double>(mem->totalBytes)) {
            add(r, "host.ram", v1::CHECK_WARN, nums + ": less than 10 % headroom");
        } else {
            add(r, "host.ram", v1::CHECK_PASS, nums);
        }
    } else {
        add(r, "host.ram", v1::CHECK_FAIL, "cannot read host memory: " + mem.error());
    }

    // NCCL version gate, for the run's own environment.
    if (req.min_nccl_version_code() <= 0) {
        add(r, "nccl.version", v1::CHECK_SKIP, "no minimum NCCL version required");
    } else if (!env.ncclGate) {
        add(r, "nccl.version", v1::CHECK_FAIL,
            "cannot resolve NCCL: this preflight environment has no NCCL resolver");
    } else {
        std::vector<std::pair<std::string, std::string>> vars(req.env().begin(), req.env().end());
        const auto [pass, message] = env.ncclGate(vars, req.min_nccl_version_code());
        add(r, "nccl.version", pass ? v1::CHECK_PASS : v1::CHECK_FAIL, message);
    }

    // /etc/hosts: the hostname must not map to loopback (workers could not reach this node).
    {
        std::ifstream in(env.hostsFile);
        std::stringstream text;
        text << in.rdbuf();
        const auto names = loopbackHostnames(text.str());
        const bool bad = std::find(names.begin(), names.end(), env.hostname) != names.end();
        if (!in) {
            add(r, "net.hosts", v1::CHECK_SKIP, env.hostsFile + " unreadable");
        } else if (bad) {
            add(r, "net.hosts", req.multi_node() ? v1::CHECK_FAIL : v1::CHECK_WARN,
                env.hostsFile + " maps hostname " + env.hostname +
                    " to a loopback address; Ray/NCCL peers would be told 127.0.0.1",
                "remove the hostname from the 127.x line (containers often add it)");
        } else {
            add(r, "net.hosts", v1::CHECK_PASS,
                "hostname " + env.hostname + " does not map to loopback in " + env.hostsFile);
        }
    }

    // MASTER_ADDR on multi-node runs. Resolved (bounded) and probed from this node first, so that
    // net.master_addr agrees with net.master_addr.resolves about this node's own hostname; those
    // rows follow it in the report (preflight_master.h).
    const std::string master =
        req.master_addr().empty() ? envValue(req, "MASTER_ADDR") : req.master_addr();
    v1::PreflightReport peer;
    if (req.multi_node() && !master.empty() && !isLoopbackHost(master)) {
        checkMasterAddrPeer(peer, req, master, env.resolve);
    }
    {
        if (!req.multi_node()) {
            add(r, "net.master_addr", v1::CHECK_SKIP, "single-node run");
        } else if (master.empty()) {
            add(r, "net.master_addr", v1::CHECK_FAIL,
                "multi-node run without MASTER_ADDR: set it to the head's LAN IP");
        } else if (isLoopbackHost(master)) {
            add(r, "net.master_addr", v1::CHECK_FAIL,
                "MASTER_ADDR=" + master + " is a loopback address; other nodes cannot reach it");
        } else if (master == env.hostname) {
            // This node's hostname: fine when it resolves here to a LAN address (the resolves row
            // passed); otherwise the resolves row says why and this one keeps warning.
            const bool resolves =
                !peer.master_addr_resolved().empty() &&
                std::any_of(peer.checks().begin(), peer.checks().end(), [](const auto& c) {
                    return c.id() == "net.master_addr.resolves" && c.status() == v1::CHECK_PASS;
                });
            if (resolves) {
                std::string addresses;
                for (const auto& a : peer.master_addr_resolved()) {
                    addresses += (addresses.empty() ? "" : ", ") + a;
                }
                add(r, "net.master_addr", v1::CHECK_PASS,
                    "MASTER_ADDR=" + master + " is this node's hostname and resolves to " +
                        addresses + " on this node");
            } else {
                add(r, "net.master_addr", v1::CHECK_WARN,
                    "MASTER_ADDR=" + master +
                        " is this node's hostname; make sure it resolves to the LAN IP");
            }
        } else {
            std::string source;
            const std::string noRoute = routeTo(master, &source);
            if (!noRoute.empty()) {
                add(r, "net.master_addr", v1::CHECK_FAIL,
                    "MASTER_ADDR=" + master + " has no route from this node (" + noRoute + ")",
                    "the address is on none of this node's networks: workers here could not "
                    "reach the head; use the head's address on a network every node shares");
            } else if (source == master) {
                add(r, "net.master_addr", v1::CHECK_PASS,
                    "MASTER_ADDR=" + master + " is an address of this node");
            } else if (!source.empty()) {
                add(r, "net.master_addr", v1::CHECK_PASS,
                    "MASTER_ADDR=" + master + ", routed from this node's " + source);
            } else {
                add(r, "net.master_addr", v1::CHECK_PASS, "MASTER_ADDR=" + master);
            }
        }
    }

    // MASTER_ADDR from this node: resolved (bounded), reachable at the rank-0 daemon's port;
    // this node's addresses for the controller's net.master_addr.rank0 (preflight_master.h).
    if (req.multi_node()) {
        for (const auto& a : interfaceAddresses()) {
            r.add_addresses(a);
        }
        for (const auto& c : peer.checks()) {
            *r.add_checks() = c;
        }
        for (const auto& a : peer.master_addr_resolved()) {
            r.add_master_addr_resolved(a);
        }
    }

    checkIfname(r, "NCCL_SOCKET_IFNAME", envValue(req, "NCCL_SOCKET_IFNAME"), env.netClassDir);
    checkIfname(r, "GLOO_SOCKET_IFNAME", envValue(req, "GLOO_SOCKET_IFNAME"), env.netClassDir);

    for (const auto& p : req.required_paths()) {
        if (exists(p)) {
            add(r, "path.exists", v1::CHECK_PASS, p + " exists", p);
        } else {
            add(r, "path.exists", v1::CHECK_FAIL,
                p + " does not exist on this node (shared storage not mounted?)", p);
        }
    }
    for (const auto& d : req.checkpoint_dirs()) {
        const std::string tracker = d + "/latest_checkpointed_iteration.txt";
        if (!exists(d)) {
            add(r, "checkpoint.tracker", v1::CHECK_FAIL,
                "checkpoint directory " + d + " does not exist", d);
        } else if (auto text = readSmallFile(tracker, 256)) {
            std::string it = *text;
            while (!it.empty() && (it.back() == '\n' || it.back() == ' ')) {
                it.pop_back();
            }
            add(r, "checkpoint.tracker", v1::CHECK_PASS, tracker + " says '" + it + "'", d);
        } else {
            add(r, "checkpoint.tracker", v1::CHECK_WARN,
                d + " has no latest_checkpointed_iteration.txt: the actor would start from "
                    "--ref-load "
                    "(pass the parent directory of iter_*)",
                d);
        }
    }

    if (req.min_free_disk_bytes() > 0) {
        const std::string path = req.disk_path().empty() ? env.defaultDiskPath : req.disk_path();
        struct statvfs vfs {};
        if (::statvfs(path.c_str(), &vfs) != 0) {
            add(r, "disk.free", v1::CHECK_FAIL, "cannot stat " + path);
        } else {
            const std::uint64_t freeBytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
            add(r, "disk.free",
                freeBytes >= req.min_free_disk_bytes() ? v1::CHECK_PASS : v1::CHECK_FAIL,
                path + ": " + bytesText(freeBytes) + " free, " +
                    bytesText(req.min_free_disk_bytes()) + " needed");
        }
    } else {
        add(r, "disk.free", v1::CHECK_SKIP, "no free-disk requirement");
    }

    // Ray on the run's PATH.
    {
        const std::string path =
            envValue(req, "PATH").empty() ? "/usr/local/bin:/usr/bin:/bin" : envValue(req, "PATH");
        if (!env.rayVersion) {
            add(r, "ray.installed", v1::CHECK_SKIP, "cannot run ray in this build");
        } else {
            const auto [ok, text] = env.rayVersion(path);
            add(r, "ray.installed",
                ok ? v1::CHECK_PASS : (req.multi_node() ? v1::CHECK_FAIL : v1::CHECK_WARN), text);
        }
    }

    // Stale Ray processes and GPU memory held by processes before launch.
    if (env.processes) {
        std::string stale;
        for (const auto& [pid, comm] : env.processes()) {
            if (comm == "raylet" || comm == "gcs_server" || comm.rfind("ray::", 0) == 0) {
                stale += (stale.empty() ? "" : ", ") + comm + " (pid " + std::to_string(pid) + ")";
            }
        }
        add(r, "proc.stale_ray", stale.empty() ? v1::CHECK_PASS : v1::CHECK_WARN,
            stale.empty() ? "no Ray processes running" : "Ray processes already running: " + stale,
            stale.empty() ? ""
                          : "stop them with `ray stop --force` unless this node is part of the "
                            "cluster you start");
    }
    if (!gpuPids.empty()) {
        std::string list;
        for (int pid : gpuPids) {
            list += (list.empty() ? "" : ", ") + std::to_string(pid);
        }
        add(r, "proc.stale_gpu", v1::CHECK_WARN, "GPU memory is held by pids " + list,
            "a stale process holds GPU memory; stop it or `ray stop --force`");
    } else if (env.gpus && !gpuNames.empty()) {
        add(r, "proc.stale_gpu", v1::CHECK_PASS, "no process holds GPU memory");
    }
    return r;
}

}  // namespace runplane::agent
