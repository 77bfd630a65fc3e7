#include "backend/agent/ray_version.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "compute/gpu/subprocess.h"

namespace runplane::agent {
namespace fs = std::filesystem;
namespace {

// The interpreter a script's "#!" line names ("#!/x/venv/bin/python3", "#!/usr/bin/env python3"
// is left to the PATH search of the caller: "").
std::string shebangInterpreter(const std::string& script) {
    std::ifstream in(script);
    std::string line;
    if (!std::getline(in, line) || line.rfind("#!", 0) != 0) {
        return "";
    }
    std::istringstream words(line.substr(2));
    std::string interpreter;
    words >> interpreter;
    return fs::path(interpreter).filename() == "env" ? "" : interpreter;
}

// dist-info directories of `ray` under <prefix>/lib/python3*/{site,dist}-packages.
std::vector<fs::path> rayDistInfos(const fs::path& prefix) {
    std::vector<fs::path> out;
    std::error_code ec;
    const fs::path lib = prefix / "lib";
    if (!fs::is_directory(lib, ec)) {
        return out;
    }
    for (const auto& py : fs::directory_iterator(lib, ec)) {
        if (py.path().filename().string().rfind("python3", 0) != 0) {
            continue;
        }
        for (const char* site : {"site-packages", "dist-packages"}) {
            const fs::path dir = py.path() / site;
            if (!fs::is_directory(dir, ec)) {
                continue;
            }
            for (const auto& entry : fs::directory_iterator(dir, ec)) {
                const std::string name = entry.path().filename().string();
                if (name.rfind("ray-", 0) == 0 && name.size() > 14 &&
                    name.compare(name.size() - 10, 10, ".dist-info") == 0) {
                    out.push_back(entry.path());
                }
            }
        }
    }
    return out;
}

std::string metadataVersion(const fs::path& distInfo) {
    std::ifstream in(distInfo / "METADATA");
    std::string line;
    for (int i = 0; i < 64 && std::getline(in, line); ++i) {
        if (line.rfind("Version:", 0) == 0) {
            std::string v = line.substr(8);
            v.erase(0, v.find_first_not_of(" \t"));
            while (!v.empty() && (v.back() == '\r' || v.back() == ' ')) {
                v.pop_back();
            }
            return v;
        }
    }
    return "";
}

std::int64_t mtimeNs(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return -1;
    }
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

struct CacheEntry {
    std::int64_t scriptMtime = 0;
    std::string distInfo;  // "" when the answer came from `ray --version`
    std::int64_t distInfoMtime = 0;
    RayVersionAnswer answer;
};

}  // namespace

std::string findRayOnPath(const std::string& path) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
        if (!dir.empty() && ::access((dir + "/ray").c_str(), X_OK) == 0) {
            return dir + "/ray";
        }
    }
    return "";
}

std::string rayMetadataVersion(const std::string& rayExecutable, std::string* distInfoDir) {
    std::vector<fs::path> prefixes;
    const std::string interpreter = shebangInterpreter(rayExecutable);
    if (!interpreter.empty()) {
        prefixes.push_back(fs::path(interpreter).parent_path().parent_path());
    }
    prefixes.push_back(fs::path(rayExecutable).parent_path().parent_path());
    for (const auto& prefix : prefixes) {
        for (const auto& distInfo : rayDistInfos(prefix)) {
            const std::string version = metadataVersion(distInfo);
            if (!version.empty()) {
                if (distInfoDir != nullptr) {
                    *distInfoDir = distInfo.string();
                }
                return version;
            }
        }
    }
    return "";
}

RayVersionAnswer rayVersionOnPath(const std::string& path) {
    const std::string exe = findRayOnPath(path);
    if (exe.empty()) {
        return {false, "ray not found on PATH=" + path, ""};
    }
    static std::mutex mutex;
    static std::map<std::string, CacheEntry> cache;
    const std::int64_t scriptMtime = mtimeNs(exe);
    {
        std::lock_guard lock(mutex);
        auto it = cache.find(exe);
        if (it != cache.end() && it->second.scriptMtime == scriptMtime &&
            (it->second.distInfo.empty() ||
             mtimeNs(it->second.distInfo) == it->second.distInfoMtime)) {
            return it->second.answer;
        }
    }
    CacheEntry entry;
    entry.scriptMtime = scriptMtime;
    std::string distInfo;
    if (const std::string version = rayMetadataVersion(exe, &distInfo); !version.empty()) {
        entry.distInfo = distInfo;
        entry.distInfoMtime = mtimeNs(distInfo);
        entry.answer = {true, exe + ": ray, version " + version, "metadata " + distInfo};
    } else {
        compute::ProcessSpec spec;
        spec.argv = {exe, "--version"};
        spec.timeout = std::chrono::seconds(30);
        const auto r = compute::runProcess(spec);
        std::string out = r.out;
        while (!out.empty() && out.back() == '\n') {
            out.pop_back();
        }
        entry.answer = {r.succeeded(),
                        r.succeeded() ? exe + ": " + out : exe + ": " + r.describeEnd(),
                        "ray --version"};
        if (!r.succeeded()) {
            return entry.answer;  // a failure is not cached: the next preflight tries again
        }
    }
    std::lock_guard lock(mutex);
    cache[exe] = entry;
    return entry.answer;
}

}  // namespace runplane::agent
