// Resolution of the libnccl.so.2 a run will load. Order and caveats: docs/nccl-health.md.
#include "compute/gpu/nccl_resolve.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <system_error>

#include "compute/gpu/helper_path.h"
#include "compute/gpu/json_text.h"
#include "compute/gpu/subprocess.h"

namespace runplane::compute {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSoname = "libnccl.so.2";
constexpr const char* kVersionHelper = "runplane-nccl-version";
#if defined(__aarch64__)
constexpr const char* kCacheArch = "AArch64";  // ldconfig -p tag of this ABI
#else
constexpr const char* kCacheArch = "x86-64";
#endif

struct Candidate {
    std::string path;
    NcclSource source;
    std::string error;  // known before loading (e.g. the run's python could not be asked)
};

std::string envValue(const NcclResolveConfig& config, const std::string& key) {
    const auto it = config.env.find(key);
    return it == config.env.end() ? std::string() : it->second;
}

std::vector<std::string> split(const std::string& text, const std::string& separators) {
    std::vector<std::string> parts;
    std::string current;
    for (const char c : text) {
        if (separators.find(c) != std::string::npos) {
            if (!current.empty())
                parts.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (!current.empty())
        parts.push_back(current);
    return parts;
}

bool isFile(const fs::path& path) {
    std::error_code ec;
    return fs::is_regular_file(path, ec);  // follows symlinks
}

bool namesNccl(const std::string& entry) {
    return fs::path(entry).filename().string().rfind("libnccl", 0) == 0;
}

std::vector<std::string> defaultSystemDirs() {
    return {"/lib/x86_64-linux-gnu",
            "/usr/lib/x86_64-linux-gnu",
            "/lib64",
            "/usr/lib64",
            "/lib",
            "/usr/lib"};
}

std::vector<std::string> systemDirs(const NcclResolveConfig& config) {
    return config.systemDirs.empty() ? defaultSystemDirs() : config.systemDirs;
}

// A bare LD_PRELOAD name (no '/') is searched like a DT_NEEDED entry: LD_LIBRARY_PATH, then the
// trusted directories (the cache is skipped: those files are in the trusted dirs on Debian/Ubuntu).
std::string searchBareName(const NcclResolveConfig& config, const std::string& name) {
    std::vector<std::string> dirs = split(envValue(config, "LD_LIBRARY_PATH"), ":");
    for (const auto& dir : systemDirs(config))
        dirs.push_back(dir);
    for (const auto& dir : dirs) {
        if (isFile(fs::path(dir) / name))
            return (fs::path(dir) / name).string();
    }
    return {};
}

// The run's environment for helper processes: the caller's environment with the run's
// LD_LIBRARY_PATH/PATH/PYTHON* and never LD_PRELOAD (which would load a library into the helper).
std::vector<std::string> helperEnvironment(const NcclResolveConfig& config) {
    static const std::set<std::string> kFromRun = {
        "LD_LIBRARY_PATH",  "PATH",       "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE",
        "PYTHONNOUSERSITE", "VIRTUAL_ENV"};
    std::vector<std::string> env;
    for (const auto& entry : currentEnvironment()) {
        const std::string key = entry.substr(0, entry.find('='));
        if (key == "LD_PRELOAD" || kFromRun.count(key) != 0)
            continue;
        env.push_back(entry);
    }
    for (const auto& key : kFromRun) {
        const auto it = config.env.find(key);
        if (it != config.env.end())
            env.push_back(key + "=" + it->second);
    }
    if (config.env.find("PATH") == config.env.end()) {
        if (const char* path = std::getenv("PATH"))
            env.push_back(std::string("PATH=") + path);
    }
    return env;
}

std::string findOnPath(const std::string& program, const std::string& pathList) {
    for (const auto& dir : split(pathList, ":")) {
        const fs::path candidate = fs::path(dir) / program;
        if (::access(candidate.c_str(), X_OK) == 0 && isFile(candidate))
            return candidate.string();
    }
    return {};
}

std::string firstLine(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > 300)
        line = line.substr(0, 300) + "...";
    return line;
}

void addPythonCandidates(const NcclResolveConfig& config, std::vector<Candidate>& out) {
    const std::string nvidiaRel = "nvidia/nccl/lib/libnccl.so.2";
    std::string python = config.python;
    if (python.empty()) {
        const std::string pathList = envValue(config, "PATH");
        if (!pathList.empty())
            python = findOnPath("python3", pathList);
    }
    if (!python.empty()) {
        ProcessSpec spec;
        // sys.path order is the order `import nvidia` (and torch's own loader) walks.
        spec.argv = {python, "-c", "import sys\nfor p in sys.path:\n    print(p)"};
        spec.env = helperEnvironment(config);
        spec.timeout = std::chrono::seconds(config.helperTimeoutSeconds);
        const ProcessResult result = runProcess(spec);
        if (!result.succeeded()) {
            std::string detail = result.describeEnd();
            if (!result.err.empty())
                detail += ": " + firstLine(result.err);
            out.push_back({python, NcclSource::PythonSitePackages,
                           "could not ask the run's python " + python + " for its sys.path (" +
                               detail + ")"});
            return;
        }
        std::istringstream lines(result.out);
        std::string dir;
        while (std::getline(lines, dir)) {
            if (dir.empty())
                continue;
            const fs::path candidate = fs::path(dir) / nvidiaRel;
            if (isFile(candidate))
                out.push_back({candidate.string(), NcclSource::PythonSitePackages, {}});
        }
        return;
    }
    // No interpreter to ask: scan the environment prefixes the run names.
    for (const char* prefixVar : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        const std::string prefix = envValue(config, prefixVar);
        if (prefix.empty())
            continue;
        std::error_code ec;
        std::vector<fs::path> found;
        for (fs::directory_iterator it(fs::path(prefix) / "lib", ec), end; !ec && it != end;
             it.increment(ec)) {
            const std::string name = it->path().filename().string();
            if (name.rfind("python3", 0) != 0)
                continue;
            const fs::path candidate = it->path() / "site-packages" / nvidiaRel;
            if (isFile(candidate))
                found.push_back(candidate);
        }
        std::sort(found.begin(), found.end());
        for (const auto& path : found)
            out.push_back({path.string(), NcclSource::PythonSitePackages, {}});
    }
}

void addSystemCandidates(const NcclResolveConfig& config, std::vector<Candidate>& out) {
    std::vector<std::vector<std::string>> commands;
    if (!config.ldconfigCommand.empty()) {
        commands.push_back({"/bin/sh", "-c", config.ldconfigCommand});
    } else {
        commands.push_back({"/sbin/ldconfig", "-p"});
        commands.push_back({"/usr/sbin/ldconfig", "-p"});
    }
    for (const auto& argv : commands) {
        if (argv.front() != "/bin/sh" && ::access(argv.front().c_str(), X_OK) != 0)
            continue;
        ProcessSpec spec;
        spec.argv = argv;
        spec.timeout = std::chrono::seconds(config.helperTimeoutSeconds);
        const ProcessResult result = runProcess(spec);
        if (!result.succeeded())
            continue;
        // Lines look like: "\tlibnccl.so.2 (libc6,x86-64) =>
        // /usr/lib/x86_64-linux-gnu/libnccl.so.2"
        std::istringstream lines(result.out);
        std::string line;
        while (std::getline(lines, line)) {
            const auto arrow = line.find(" => ");
            if (arrow == std::string::npos)
                continue;
            std::istringstream head(line.substr(0, arrow));
            std::string soname, flags;
            head >> soname >> flags;
            if (soname != kSoname)
                continue;
            if (flags.find(kCacheArch) == std::string::npos) {
                continue;  // another ABI (e.g. "(libc6)", a 32-bit copy) is never loaded by us
            }
            out.push_back({line.substr(arrow + 4), NcclSource::System, {}});
        }
        break;
    }
    for (const auto& dir : systemDirs(config)) {
        const fs::path candidate = fs::path(dir) / kSoname;
        if (isFile(candidate))
            out.push_back({candidate.string(), NcclSource::System, {}});
    }
}

std::vector<Candidate> collectCandidates(const NcclResolveConfig& config) {
    std::vector<Candidate> out;
    for (const auto& entry : split(envValue(config, "LD_PRELOAD"), ": \t")) {
        if (!namesNccl(entry))
            continue;
        if (entry.find('/') != std::string::npos) {
            out.push_back({entry, NcclSource::LdPreload, {}});
        } else if (const std::string found = searchBareName(config, entry); !found.empty()) {
            out.push_back({found, NcclSource::LdPreload, {}});
        } else {
            out.push_back({entry, NcclSource::LdPreload,
                           "LD_PRELOAD names " + entry +
                               " without a directory and it is in neither LD_LIBRARY_PATH nor the "
                               "system directories"});
        }
    }
    if (const std::string sglang = envValue(config, "SGLANG_NCCL_SO_PATH"); !sglang.empty()) {
        out.push_back({sglang, NcclSource::SglangNcclSoPath, {}});
    }
    addPythonCandidates(config, out);
    for (const auto& dir : split(envValue(config, "LD_LIBRARY_PATH"), ":")) {
        const fs::path candidate = fs::path(dir) / kSoname;
        if (isFile(candidate))
            out.push_back({candidate.string(), NcclSource::LdLibraryPath, {}});
    }
    addSystemCandidates(config, out);
    std::vector<std::string> cudaDirs = config.cudaToolkitDirs;
    if (cudaDirs.empty()) {
        if (const std::string cudaHome = envValue(config, "CUDA_HOME"); !cudaHome.empty()) {
            cudaDirs.push_back(cudaHome + "/lib64");
        }
        cudaDirs.push_back("/usr/local/cuda/lib64");
    }
    for (const auto& dir : cudaDirs) {
        const fs::path candidate = fs::path(dir) / kSoname;
        if (isFile(candidate))
            out.push_back({candidate.string(), NcclSource::CudaToolkit, {}});
    }
    return out;
}

// One entry per distinct file: the highest-precedence source keeps it.
std::vector<Candidate> dedupe(std::vector<Candidate> candidates) {
    std::vector<Candidate> out;
    std::set<std::string> seen;
    for (auto& candidate : candidates) {
        std::error_code ec;
        std::string key = fs::weakly_canonical(candidate.path, ec).string();
        if (ec || !candidate.error.empty())
            key = candidate.path;
        if (!seen.insert(key).second)
            continue;
        out.push_back(std::move(candidate));
    }
    return out;
}

void loadInHelper(const NcclResolveConfig& config, const std::string& helper,
                  const std::vector<std::string>& env, NcclLibraryInfo& info) {
    if (!isFile(info.path)) {
        info.error = "no such file: " + info.path;
        return;
    }
    ProcessSpec spec;
    spec.argv = {helper, info.path};
    spec.env = env;
    spec.timeout = std::chrono::seconds(config.helperTimeoutSeconds);
    spec.maxOutputBytes = 1u << 20;
    const ProcessResult result = runProcess(spec);
    if (!result.spawnError.empty() || result.timedOut || result.termSignal != 0) {
        info.error =
            "loading it in " + std::string(kVersionHelper) + " failed: " + result.describeEnd();
        return;
    }
    std::map<std::string, json::FlatValue> fields;
    std::string parseError;
    const std::string line = firstLine(result.out);
    if (!json::parseFlatObject(line, fields, parseError)) {
        info.error = std::string(kVersionHelper) + " printed no report (" + result.describeEnd() +
                     ", " + parseError + "): " + line;
        return;
    }
    if (const auto it = fields.find("error"); it != fields.end() && !it->second.text.empty()) {
        info.error = it->second.text;
        return;
    }
    const auto code = fields.find("version_code");
    if (code == fields.end() || code->second.kind != json::FlatValue::Kind::Number ||
        code->second.number <= 0) {
        info.error = std::string(kVersionHelper) + " reported no version_code: " + line;
        return;
    }
    info.versionCode = static_cast<int>(code->second.number);
    info.version = formatNcclVersion(info.versionCode);
}

}  // namespace

std::vector<NcclLibraryInfo> resolveNcclLibraries(const NcclResolveConfig& config) {
    std::vector<NcclLibraryInfo> libraries;
    std::string searched;
    const std::string helper =
        findHelperExecutable(kVersionHelper, config.versionHelperPath, &searched);
    const std::vector<std::string> env = helperEnvironment(config);
    for (auto& candidate : dedupe(collectCandidates(config))) {
        NcclLibraryInfo info;
        info.path = candidate.path;
        info.source = candidate.source;
        if (!candidate.error.empty()) {
            info.error = candidate.error;
        } else if (helper.empty()) {
            info.error = std::string(kVersionHelper) + " not found (looked in " + searched + ")";
        } else {
            loadInHelper(config, helper, env, info);
        }
        libraries.push_back(std::move(info));
    }
    for (auto& info : libraries) {
        if (info.error.empty() && info.versionCode > 0) {
            info.selected = true;
            break;
        }
    }
    return libraries;
}

}  // namespace runplane::compute
