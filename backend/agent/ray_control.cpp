#include "backend/agent/ray_control.h"

#include <arpa/inet.h>
#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backend/agent/ray_version.h"
#include "compute/gpu/subprocess.h"

namespace runplane::agent {
namespace {

bool isIpLiteral(const std::string& s) {
    in_addr a4{};
    in6_addr a6{};
    return ::inet_pton(AF_INET, s.c_str(), &a4) == 1 || ::inet_pton(AF_INET6, s.c_str(), &a6) == 1;
}

v1::RayCommandResult runRay(const std::vector<std::string>& argv,
                            const google::protobuf::Map<std::string, std::string>* env,
                            int timeoutSeconds) {
    v1::RayCommandResult out;
    for (const auto& a : argv) {
        out.add_argv(a);
    }
    compute::ProcessSpec spec;
    spec.argv = argv;
    spec.timeout = std::chrono::seconds(timeoutSeconds);
    spec.maxOutputBytes = 1u << 20;
    if (env != nullptr && !env->empty()) {
        std::vector<std::string> merged;
        for (const auto& kv : compute::currentEnvironment()) {
            const auto key = kv.substr(0, kv.find('='));
            if (env->find(key) == env->end()) {
                merged.push_back(kv);
            }
        }
        for (const auto& [k, v] : *env) {
            merged.push_back(k + "=" + v);
        }
        spec.env = std::move(merged);
    }
    const compute::ProcessResult r = compute::runProcess(spec);
    out.set_exit_code(r.succeeded() ? 0 : (r.exitCode >= 0 ? r.exitCode : -1));
    std::string text = r.out + r.err;
    if (!r.spawnError.empty()) {
        text = r.spawnError + (argv[0] == "ray" ? " (is Ray installed and on PATH?)" : "");
    } else if (!r.succeeded()) {
        text += "\n[" + r.describeEnd() + "]";
    }
    if (text.size() > (256u << 10)) {
        text = text.substr(text.size() - (256u << 10));
    }
    out.set_output(text);
    return out;
}

}  // namespace

Result<std::vector<std::string>> rayStartArgv(const v1::RayStartRequest& r) {
    std::vector<std::string> argv{"ray", "start"};
    if (!r.node_ip().empty() && !isIpLiteral(r.node_ip())) {
        return Error{"node_ip: '" + r.node_ip() + "' is not an IP address"};
    }
    if (r.head()) {
        argv.push_back("--head");
        argv.push_back("--port=" + std::to_string(r.port() != 0 ? r.port() : 6379));
        if (r.dashboard_port() != 0) {
            argv.push_back("--dashboard-port=" + std::to_string(r.dashboard_port()));
        }
    } else {
        const std::string& addr = r.head_address();
        const auto colon = addr.rfind(':');
        if (addr.empty() || colon == std::string::npos || colon == 0 ||
            std::strtol(addr.c_str() + colon + 1, nullptr, 10) <= 0) {
            return Error{"head_address: a worker needs the head as HOST:PORT, got '" + addr + "'"};
        }
        argv.push_back("--address=" + addr);
    }
    if (!r.node_ip().empty()) {
        argv.push_back("--node-ip-address=" + r.node_ip());
    }
    if (r.num_gpus() > 0) {
        argv.push_back("--num-gpus=" + std::to_string(r.num_gpus()));
    }
    argv.push_back("--disable-usage-stats");
    return argv;
}

Result<v1::RayCommandResult> rayStart(const v1::RayStartRequest& request) {
    auto argv = rayStartArgv(request);
    if (!argv) {
        return Error{argv.error()};
    }
    return runRay(*argv, &request.env(), 120);
}

void parseRayStatus(const std::string& text, v1::RayClusterStatus* out) {
    std::istringstream in(text);
    std::string line;
    bool active = false;
    std::uint32_t nodes = 0;
    while (std::getline(in, line)) {
        const auto first = line.find_first_not_of(' ');
        if (first == std::string::npos) {
            continue;
        }
        const std::string trimmed = line.substr(first);
        if (trimmed.rfind("Active:", 0) == 0) {
            active = true;
            continue;
        }
        if (trimmed.rfind("Pending:", 0) == 0 || trimmed.rfind("Recent failures:", 0) == 0 ||
            trimmed.rfind("Resources", 0) == 0 || trimmed.rfind("Usage:", 0) == 0) {
            active = false;
        }
        if (active) {
            // " 1 node_5e6f..." : a count followed by a node id
            char* end = nullptr;
            const long n = std::strtol(trimmed.c_str(), &end, 10);
            if (end != trimmed.c_str() && n > 0 &&
                std::string(end).find("node_") != std::string::npos) {
                nodes += static_cast<std::uint32_t>(n);
            }
        }
        // " 0.0/16.0 GPU" (Usage section)
        const auto gpu = trimmed.find(" GPU");
        const auto slash = trimmed.find('/');
        if (gpu != std::string::npos && slash != std::string::npos && slash < gpu &&
            trimmed.compare(gpu, 4, " GPU") == 0 &&
            (gpu + 4 == trimmed.size() || trimmed[gpu + 4] == ' ')) {
            out->set_gpus_total(std::strtod(trimmed.c_str() + slash + 1, nullptr));
        }
    }
    out->set_alive_nodes(nodes);
}

v1::RayletInfo parseRayletArgs(const std::vector<std::string>& args) {
    // "--name=value" or "--name value"; Ray has spelled these with dashes and with underscores.
    auto value = [&](std::initializer_list<const char*> names) -> std::string {
        for (std::size_t i = 0; i < args.size(); ++i) {
            for (const char* name : names) {
                const std::string n = name;
                if (args[i].rfind(n + "=", 0) == 0) {
                    return args[i].substr(n.size() + 1);
                }
                if (args[i] == n && i + 1 < args.size()) {
                    return args[i + 1];
                }
            }
        }
        return "";
    };
    v1::RayletInfo info;
    info.set_gcs_address(value({"--gcs-address", "--gcs_address"}));
    info.set_node_ip(value({"--node_ip_address", "--node-ip-address"}));
    info.set_cluster_id(value({"--cluster-id", "--cluster_id"}));
    return info;
}

void readLocalRaylets(const std::string& procRoot, v1::RayClusterStatus* out) {
    DIR* dir = ::opendir(procRoot.c_str());
    if (dir == nullptr) {
        return;
    }
    while (const dirent* entry = ::readdir(dir)) {
        const std::string pid = entry->d_name;
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        std::ifstream comm(procRoot + "/" + pid + "/comm");
        std::string name;
        if (!std::getline(comm, name) || name != "raylet") {
            continue;
        }
        std::ifstream cmdline(procRoot + "/" + pid + "/cmdline", std::ios::binary);
        std::vector<std::string> args;
        std::string arg;
        while (args.size() < 512 && std::getline(cmdline, arg, '\0')) {
            args.push_back(arg);
        }
        v1::RayletInfo info = parseRayletArgs(args);
        info.set_pid(std::atoi(pid.c_str()));
        *out->add_local_raylets() = std::move(info);
        if (out->local_raylets_size() >= 64) {
            break;
        }
    }
    ::closedir(dir);
}

v1::RayClusterStatus rayStatus() {
    v1::RayClusterStatus out;
    const auto st = runRay({"ray", "status"}, nullptr, 30);
    out.set_raw(st.output());
    out.set_reachable(st.exit_code() == 0);
    if (st.exit_code() == 0) {
        parseRayStatus(st.output(), &out);
    }
    const char* path = std::getenv("PATH");
    const auto ver = rayVersionOnPath(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
    if (ver.ok) {
        const auto p = ver.message.find("version ");
        out.set_ray_version(p != std::string::npos ? ver.message.substr(p + 8) : ver.message);
    }
    readLocalRaylets("/proc", &out);
    return out;
}

v1::RayCommandResult rayStop(const v1::RayStopRequest& request) {
    std::vector<std::string> argv{"ray", "stop"};
    if (request.force()) {
        argv.push_back("--force");
    }
    return runRay(argv, nullptr, 120);
}

}  // namespace runplane::agent
