#pragma once
// Test helper for dispatch: a real runplaned process acting as one node, on a loopback address,
// with extra environment variables (e.g. PATH pointing at a `ray`). Killed on destruction.

#include <sys/types.h>

#include <map>
#include <string>

namespace runplane::dispatch_testing {

/// A fresh temporary directory, removed recursively on destruction.
class ScratchDir {
  public:
    ScratchDir();
    ~ScratchDir();
    const std::string& path() const { return m_path; }

  private:
    std::string m_path;
};

class NodeProcess {
  public:
    NodeProcess(const std::string& stateDir, const std::string& nodeId, const std::string& listen,
                const std::map<std::string, std::string>& env);
    ~NodeProcess();
    NodeProcess(const NodeProcess&) = delete;
    NodeProcess& operator=(const NodeProcess&) = delete;
    bool ok() const { return !m_address.empty(); }
    const std::string& error() const { return m_error; }
    const std::string& address() const { return m_address; }
    /// SIGKILL and reap: the node's daemon is gone.
    void kill9();

  private:
    pid_t m_pid = -1;
    int m_stdout = -1;
    std::string m_address;
    std::string m_error;
};

std::string readFile(const std::string& path);

}  // namespace runplane::dispatch_testing
