#pragma once
// Keeps each run's stdout/stderr in the history while it streams (issue #18), so that `runplanectl
// logs` and Runs -> Log still show a finished run's output once its daemon has moved on or is
// gone. One follower thread per (run, stream) tails the daemon from the history's stored end
// (follow = true) and appends each chunk; a broken stream is resumed every 2 s until the daemon
// says eof (the run ended) or the recorder stops. At most `maxRuns` runs are followed at once.
//
// Thread-safety: noticeRun() and stop() from any thread.

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/control/node_client.h"

namespace runplane::control {

class RunLogRecorder {
  public:
    RunLogRecorder(std::shared_ptr<NodeClient> client, std::string historyPath,
                   std::size_t maxRuns = 64);
    ~RunLogRecorder();
    RunLogRecorder(const RunLogRecorder&) = delete;
    RunLogRecorder& operator=(const RunLogRecorder&) = delete;

    /// A record of this run was ingested: start following its output (once per run).
    void noticeRun(const std::string& runId);
    /// Cancels every follower and joins them.
    void stop();

  private:
    struct Follower;
    void follow(Follower& f);

    std::shared_ptr<NodeClient> m_client;
    std::string m_historyPath;
    std::size_t m_maxRuns;
    std::mutex m_mutex;
    bool m_stopped = false;
    std::set<std::string> m_seen;
    std::vector<std::unique_ptr<Follower>> m_followers;
};

}  // namespace runplane::control
