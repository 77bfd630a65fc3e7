#pragma once
// An engine for the daemon's engine tests: fake_engine_server (RUNPLANE_FAKE_ENGINE_SERVER, built
// with the tests) exec'd under an engine's own argv, serving a real Prometheus page from
// tests/agent/fixtures/prometheus. Shared by the role-walk and socket-discovery tests.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "backend/agent/engine_metrics.h"

namespace runplane::agent::test {

inline std::string prometheusFixture(const std::string& name) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    return std::string(src != nullptr ? src : ".") + "/tests/agent/fixtures/prometheus/" + name;
}

/// A loopback port nobody listens on now (bound to :0, read back, closed); 0 on failure.
inline int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        return 0;
    }
    socklen_t len = sizeof(addr);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

/// Whether a metrics page answers on the port within about 5 s.
inline bool serves(int port) {
    for (int i = 0; i < 100; ++i) {
        if (fetchMetrics("127.0.0.1", port, 500).ok()) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

/// fake_engine_server exec'd under `argv` (argv[0] included) with `env`, in a process group of
/// its own (its serving child is killed with it).
class FakeEngine {
  public:
    FakeEngine(std::vector<std::string> argv, const std::map<std::string, std::string>& env) {
        m_pid = ::fork();
        if (m_pid == 0) {
            ::setpgid(0, 0);
            for (const auto& [k, v] : env) {
                ::setenv(k.c_str(), v.c_str(), 1);
            }
            std::vector<char*> cargv;
            for (auto& a : argv) {
                cargv.push_back(a.data());
            }
            cargv.push_back(nullptr);
            ::execv(RUNPLANE_FAKE_ENGINE_SERVER, cargv.data());
            ::_exit(127);
        }
        ::setpgid(m_pid, m_pid);
    }
    /// Serving the Prometheus page `metricsFile`.
    FakeEngine(std::vector<std::string> argv, const std::string& metricsFile)
        : FakeEngine(std::move(argv), {{"RUNPLANE_FAKE_METRICS_FILE", metricsFile}}) {}
    ~FakeEngine() {
        ::kill(-m_pid, SIGKILL);
        ::waitpid(m_pid, nullptr, 0);
    }
    FakeEngine(const FakeEngine&) = delete;
    FakeEngine& operator=(const FakeEngine&) = delete;
    pid_t pid() const { return m_pid; }

  private:
    pid_t m_pid = -1;
};

}  // namespace runplane::agent::test
