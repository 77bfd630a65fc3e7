// Runs a miles Python launcher with its command step replaced by a recorder (launcher_record.h).

#include "backend/cli/launcher_record.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

extern char** environ;

namespace runplane::cli {
namespace {

// The recorder: stand-in `ray` module, stand-ins for third-party modules this Python lacks (the
// launcher only builds command lines), miles' exec_command functions replaced by a recorder,
// then the launcher run as __main__ with its arguments. Writes the bash text to
// $RUNPLANE_RECORD_OUT.
// (in parts under 4096 characters, the length -Wpedantic allows one literal)
constexpr const char* kRecorderParts[] = {
    R"SHIM(# runplane: runs a miles Python launcher (scripts/run_*.py) with its command step replaced, and
# prints the shell commands it would have run, one per line, as a bash script (issue 45).
import os, runpy, sys, types

launcher = os.path.abspath(sys.argv[1])
repo = os.path.dirname(os.path.dirname(launcher))
sys.path[:0] = [repo, os.path.dirname(launcher)]
records = []

def record(cmd, capture_output=False, *args, **kwargs):
    records.append(cmd)
    return "0\n" if capture_output else None

def stub_module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m

# Ray is never started: a stand-in module (exec_command imports ray at module level)
def _remote(*a, **k):
    if len(a) == 1 and callable(a[0]) and not k:
        return a[0]
    return lambda f: f
ray = stub_module("ray", remote=_remote, init=lambda *a, **k: None, nodes=lambda: [],
                  get=lambda x, *a, **k: x, is_initialized=lambda: False, shutdown=lambda: None)
ray.util = stub_module("ray.util")
ray.util.scheduling_strategies = stub_module(
    "ray.util.scheduling_strategies", NodeAffinitySchedulingStrategy=lambda *a, **k: None)
# a third-party module this Python lacks (torch, sglang, ...) is stood in for: the launcher only
# builds command lines, and the modules its imports pull in are not used for that
import importlib.abc, importlib.machinery, importlib.util  # noqa: E402

class _Any:
    def __init__(self, name="stub"):
        self._name = name
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _Any(self._name + "." + attr)
    def __call__(self, *a, **k):
        if len(a) == 1 and callable(a[0]) and not k:
            return a[0]
        return _Any(self._name + "()")
    def __mro_entries__(self, bases):
        return (object,)
    def __or__(self, other):
        return self
    __ror__ = __or__
    def __getitem__(self, item):
        return self
    def __iter__(self):
        return iter(())
    def __bool__(self):
        return False

stood_in = []
import sysconfig  # noqa: E402
_stdlib = sysconfig.get_paths()["stdlib"]

class _StubModule(types.ModuleType):
    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return _Any(self.__name__ + "." + attr)

class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        top = fullname.split(".")[0]
        if top == "miles" or top in sys.stdlib_module_names:
            return None
        # an optional import the standard library probes for (copy.py's `org.python.core`)
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        if frame is not None and frame.f_code.co_filename.startswith(_stdlib):
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            try:
                spec = finder.find_spec(fullname, path, target)
            except Exception:
                spec = None
            if spec is not None:
                return None
        if top not in stood_in:
            stood_in.append(top)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
    def create_module(self, spec):
)SHIM",
    R"SHIM(        m = _StubModule(spec.name)
        m.__path__ = []
        return m
    def exec_module(self, module):
        pass

sys.meta_path.append(_StubFinder())

# any process the launcher starts through Python's own APIs is recorded, not started
import subprocess  # noqa: E402

def _command_text(args):
    if isinstance(args, (list, tuple)):
        import shlex
        if len(args) >= 3 and args[0] in ("bash", "/bin/bash", "sh", "/bin/sh") and args[1] == "-c":
            return args[2]
        return " ".join(shlex.quote(str(a)) for a in args)
    return str(args)

def _run(args, *a, **k):
    out = record(_command_text(args), bool(k.get("capture_output") or k.get("stdout")))
    text = k.get("text") or k.get("universal_newlines") or k.get("encoding")
    out = out if text else (out.encode() if out is not None else None)
    return subprocess.CompletedProcess(args, 0, stdout=out, stderr="" if text else b"")

class _Popen:
    def __init__(self, args, *a, **k):
        record(_command_text(args))
        self.args, self.returncode, self.pid = args, 0, 0
        self.stdout = self.stderr = self.stdin = None
    def communicate(self, *a, **k):
        return (None, None)
    def wait(self, *a, **k):
        return 0
    def poll(self):
        return 0
    def kill(self):
        pass
    terminate = kill
    def __enter__(self):
        return self
    def __exit__(self, *a):
        return False

subprocess.run = _run
subprocess.call = subprocess.check_call = lambda args, *a, **k: (record(_command_text(args)), 0)[1]
subprocess.check_output = lambda args, *a, **k: _run(args, *a, capture_output=True, **k).stdout
subprocess.Popen = _Popen
os.system = lambda cmd: (record(cmd), 0)[1]
for _name in ("execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe"):
    setattr(os, _name, lambda *a, **k: (_ for _ in ()).throw(SystemExit("runplane: exec refused by the recorder")))

try:
    import miles.utils.external_utils.exec_command as E  # noqa: E402
except ImportError as e:
    sys.stderr.write("runplane: miles' exec_command helpers not found next to the launcher (%s)\n" % e)
    E = None
if E is not None:
    E._exec_command = record
    E.exec_command_cpu = record
    E.exec_command_gpu = record
    E.exec_command_multi_node = lambda cmd, capture_output=False, num_nodes=None: [record(cmd, capture_output)]
    import miles.utils.external_utils.command_utils as U  # noqa: E402
    for name in ("exec_command_cpu", "exec_command_gpu", "exec_command_multi_node"):
        if hasattr(U, name):
            setattr(U, name, getattr(E, name))

sys.argv = [launcher] + sys.argv[2:]
status = 0
try:
    runpy.run_path(launcher, run_name="__main__")
except SystemExit as e:
    if isinstance(e.code, str):
        sys.stderr.write(e.code + "\n")
    status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
# the recorded commands as a bash script: the environment, the Ray start and the job submission
# as lines; what the launcher runs besides (downloads, checkpoint conversion, cleanup, probes) as
# comments, since it prepares the machine rather than the run
lines = ["#!/bin/bash",
         "# runplane: the commands %s would run, recorded (none was run)" % os.path.relpath(launcher, repo)]
if stood_in:
    lines.append("# runplane: stood in for the modules this Python lacks: %s" % " ".join(stood_in))
for cmd in records:
    for part in cmd.split(" && "):
        part = part.strip()
)SHIM",
    R"SHIM(        if part.startswith(("export ", "ray start ", "ray job submit ")):
            lines.append(part)
        elif part:
            lines.append("# prepare: " + " ".join(part.split("\n")))
with open(os.environ["RUNPLANE_RECORD_OUT"], "w") as f:
    f.write("\n".join(lines) + "\n")
sys.exit(status)
)SHIM",
};

std::string recorderText() {
    std::string out;
    for (const char* part : kRecorderParts) {
        out += part;
    }
    return out;
}

constexpr std::size_t kMaxRecordBytes = 4u << 20;

std::string readBounded(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string out;
    char buf[65536];
    while (in && out.size() < kMaxRecordBytes) {
        in.read(buf, sizeof buf);
        out.append(buf, static_cast<std::size_t>(in.gcount()));
    }
    return out;
}

std::string lastLines(const std::string& text, int n) {
    std::size_t at = text.size();
    while (n-- > 0 && at > 0) {
        at = text.rfind('\n', at - 1);
        if (at == std::string::npos) {
            return text;
        }
    }
    return text.substr(at == 0 ? 0 : at + 1);
}

}  // namespace

LauncherRecord recordMilesLauncher(const std::string& launcher,
                                   const std::vector<std::string>& args,
                                   const std::vector<std::pair<std::string, std::string>>& env,
                                   const std::string& python, int timeoutS) {
    namespace fs = std::filesystem;
    LauncherRecord rec;
    std::error_code ec;
    const fs::path dir =
        fs::temp_directory_path(ec) /
        ("runplane-record-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    if (ec || !fs::create_directory(dir, ec)) {
        rec.error = "cannot create a temporary folder for the recorder";
        return rec;
    }
    const std::string out = (dir / "recorded.sh").string();
    const std::string log = (dir / "output.log").string();
    std::vector<std::string> argv = {python, "-c", recorderText(), launcher};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) {
        cargv.push_back(a.data());
    }
    cargv.push_back(nullptr);
    std::vector<std::string> envText;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string kv(*e);
        const std::string key = kv.substr(0, kv.find('='));
        bool given = key == "RUNPLANE_RECORD_OUT";
        for (const auto& [k, v] : env) {
            given = given || k == key;
        }
        if (!given) {
            envText.push_back(kv);
        }
    }
    for (const auto& [k, v] : env) {
        envText.push_back(k + "=" + v);  // --env K=V: the environment the launcher runs in
    }
    envText.push_back("RUNPLANE_RECORD_OUT=" + out);
    envText.emplace_back("PYTHONDONTWRITEBYTECODE=1");  // nothing written beside the launcher
    std::vector<char*> cenv;
    for (auto& e : envText) {
        cenv.push_back(e.data());
    }
    cenv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: killed as a whole
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = 0;
    const int rc = ::posix_spawnp(&pid, python.c_str(), &actions, &attr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        rec.error = "cannot start " + python + " (" + std::string(std::strerror(rc)) + ")";
        fs::remove_all(dir, ec);
        return rec;
    }
    int status = 0;
    bool timedOut = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutS);
    while (true) {
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) {
            break;
        }
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(-pid, SIGKILL);
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            timedOut = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::string output = readBounded(log);
    if (timedOut) {
        rec.error = "the launcher did not finish within " + std::to_string(timeoutS) + " s";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(out)) {
        rec.error =
            "the launcher exited with status " +
            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
            "; its last output:\n" + lastLines(output, 12);
    } else {
        rec.script = readBounded(out);
        rec.ok = true;
    }
    fs::remove_all(dir, ec);
    return rec;
}

}  // namespace runplane::cli
