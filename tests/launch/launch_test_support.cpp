#include "tests/launch/launch_test_support.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace runplane::plan::launch::test {

namespace fs = std::filesystem;

std::string sourceDir() {
    const char* env = std::getenv("RUNPLANE_SOURCE_DIR");
    return env != nullptr ? env : RUNPLANE_TEST_SOURCE_DIR;
}

std::string dataDir() {
    return sourceDir() + "/tests/launch/data";
}

std::string recipesDir() {
    return sourceDir() + "/recipes";
}

const ModelCatalog& catalog() {
    static const ModelCatalog kCatalog = [] {
        auto c = ModelCatalog::loadDirectory(recipesDir() + "/models");
        if (!c.ok()) {
            std::fprintf(stderr, "cannot load the catalog: %s\n", c.error().c_str());
            std::abort();
        }
        return std::move(c).value();
    }();
    return kCatalog;
}

std::vector<std::string> shippedRecipeFiles() {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(recipesDir())) {
        const auto& p = entry.path();
        if (entry.is_regular_file() && p.extension() == ".yaml" &&
            p.parent_path().filename() != "models") {
            files.push_back(p.string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

void writeFile(const std::string& path, const std::string& content, bool executable) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    out.close();
    ::chmod(path.c_str(), executable ? 0755 : 0644);
}

TempDir::TempDir() {
    std::string templ = (fs::temp_directory_path() / "runplane-launch-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed");
    }
    m_path = templ;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
}

RunResult runProcess(const std::vector<std::string>& argv,
                     const std::vector<std::pair<std::string, std::string>>& env,
                     const std::string& dir) {
    int pipeFd[2];
    if (::pipe(pipeFd) != 0) {
        return {};
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Its own process group: background jobs of the script (a teacher server started with
        // `&` and its output redirected) are waited for below, not left recording after we read.
        ::setpgid(0, 0);
        ::dup2(pipeFd[1], 1);
        ::dup2(pipeFd[1], 2);
        ::close(pipeFd[0]);
        ::close(pipeFd[1]);
        if (!dir.empty() && ::chdir(dir.c_str()) != 0) {
            ::_exit(126);
        }
        for (const auto& [k, v] : env) {
            ::setenv(k.c_str(), v.c_str(), 1);
        }
        std::vector<char*> args;
        for (const auto& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(pipeFd[1]);
    RunResult result;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(pipeFd[0], buf, sizeof buf)) > 0) {
        result.output.append(buf, static_cast<std::size_t>(n));
    }
    ::close(pipeFd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // A job the script left in the background records its call when it gets to run; wait (up
    // to 10 s) until the group is empty, so every call is on disk before the caller reads them.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::kill(-pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return result;
}

namespace {

// Each call: calls/<seq>-<tool> holds the argv, NUL-separated.
const char* kRecorder = R"SH(
seq_file="$FAKE_ROOT/seq"
# One call at a time takes a number (a background job and the script may call at once).
exec 9>"$FAKE_ROOT/seq.lock"
flock 9
n=$(cat "$seq_file" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$seq_file"
out="$FAKE_ROOT/calls/$(printf '%05d' "$n")-$tool"
: > "$out"
for a in "$@"; do printf '%s\0' "$a" >> "$out"; done
exec 9>&-
)SH";

const char* kRay = R"SH(
case "$1" in
  start)
    gpus=0
    prev=""
    for a in "$@"; do
      if [ "$prev" = "--num-gpus" ]; then gpus="$a"; fi
      case "$a" in --num-gpus=*) gpus="${a#--num-gpus=}" ;; esac
      prev="$a"
    done
    echo "$gpus" >> "$FAKE_ROOT/gpus"
    ;;
  status)
    total=0
    if [ -f "$FAKE_ROOT/gpus" ]; then
      while read -r g; do total=$((total + g)); done < "$FAKE_ROOT/gpus"
    fi
    printf '======== Autoscaler status ========\nResources\n---\nUsage:\n 0.0/128.0 CPU\n 0.0/%s.0 GPU\n 0.0/%s.0 GPU_group_0_abc\n 0B/1.00TiB memory\n' "$total" "$((total + 7))"
    ;;
  job)
    shift
    [ "$1" = "submit" ] || exit 2
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
      case "$1" in
        --runtime-env-json=*) printf '%s' "${1#--runtime-env-json=}" > "$FAKE_ROOT/runtime_env.json" ;;
        --runtime-env-json) shift; printf '%s' "$1" > "$FAKE_ROOT/runtime_env.json" ;;
      esac
      shift
    done
    [ "$1" = "--" ] || exit 3
    shift
    exec "$@"
    ;;
esac
exit 0
)SH";

// miles' model_args_utils.py NAME prints the model's flags: here from model_args/NAME.txt.
// `python3 -c CODE` probes (torch.version.hip, import megatron) fail: an NVIDIA node without them.
const char* kPython = R"SH(
[ "${1:-}" = -c ] && exit 1
# a model server started in the background (an OPD teacher) stays up, as the real one does, until
# the script kills it or ends (at most 60 s): a wait loop's `kill -0 "$TEACHER_PID"` sees it
case " $* " in
  *" -m vllm.entrypoints."*|*" -m sglang.launch_server "*)
    exec < /dev/null > /dev/null 2>&1
    parent=$PPID
    for _ in $(seq 1 300); do kill -0 "$parent" 2>/dev/null || exit 0; sleep 0.2; done
    exit 0 ;;
esac
prev=""
for a in "$@"; do
  case "$prev" in
    *model_args_utils.py) cat "$FAKE_ROOT/model_args/$a.txt" 2>/dev/null; exit 0 ;;
  esac
  prev="$a"
done
exit 0
)SH";

// `curl -s -o /dev/null -w "%{http_code}" URL` (a wait for a server): the server answers 200.
const char* kCurl = R"SH(
for a in "$@"; do case "$a" in *'%{http_code}'*) printf '200' ;; esac; done
exit 0
)SH";

// A node with 8 NVLink-connected GPUs, in the form `nvidia-smi topo -m` prints.
const char* kNvidiaSmi = R"SH(
for g in 0 1 2 3 4 5 6 7; do echo "GPU$g	 X 	NV18	NV18	NV18	NV18	NV18	NV18	NV18"; done
exit 0
)SH";

// `docker run|exec [OPTIONS] IMAGE bash -s`: the shell runs here, on the fakes (the container's
// housekeeping, pull / rm, does nothing).
const char* kDocker = R"SH(
case "${1:-}" in
  run|exec)
    while [ $# -gt 0 ] && [ "$1" != bash ] && [ "$1" != sh ]; do shift; done
    [ $# -gt 0 ] && exec "$@" ;;
esac
exit 0
)SH";

}  // namespace

FakeTools::FakeTools(const std::string& root) : m_root(root) {
    fs::create_directories(root + "/bin");
    fs::create_directories(root + "/calls");
    for (const char* tool :
         {"ray", "python", "python3", "ssh", "nvidia-smi", "curl", "pkill", "docker"}) {
        std::string script = "#!/bin/bash\ntool=" + std::string(tool) + "\n" + kRecorder;
        const std::string name = tool;
        if (name == "ray") {
            script += kRay;
        } else if (name == "python" || name == "python3") {
            script += kPython;
        } else if (name == "nvidia-smi") {
            script += kNvidiaSmi;
        } else if (name == "docker") {
            script += kDocker;
        } else if (name == "curl") {
            script += kCurl;
        } else {
            script += "exit 0\n";
        }
        writeFile(root + "/bin/" + tool, script, true);
    }
}

std::vector<std::pair<std::string, std::string>> FakeTools::env() const {
    const char* path = std::getenv("PATH");
    return {{"PATH", m_root + "/bin:" + (path != nullptr ? path : "/usr/bin:/bin")},
            {"FAKE_ROOT", m_root}};
}

std::vector<Call> FakeTools::calls() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(m_root + "/calls")) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    std::vector<Call> calls;
    for (const auto& name : names) {
        Call c;
        c.tool = name.substr(name.find('-') + 1);
        const std::string data = readFile(m_root + "/calls/" + name);
        std::string cur;
        for (char ch : data) {
            if (ch == '\0') {
                c.argv.push_back(cur);
                cur.clear();
            } else {
                cur += ch;
            }
        }
        calls.push_back(std::move(c));
    }
    return calls;
}

std::string FakeTools::runtimeEnvJson() const {
    return readFile(m_root + "/runtime_env.json");
}

}  // namespace runplane::plan::launch::test
