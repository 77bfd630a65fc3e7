#pragma once
// Where RPC work that may block (fork/exec, waiting out a StopRun grace period, spawning the NCCL
// helpers, SQLite writes) runs, so that no gRPC reaction ever blocks. A fixed set of threads
// draining one FIFO queue.
//
// Thread-safety: post() from any thread. The destructor finishes queued work, then joins.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace runplane::agent {

class WorkPool {
  public:
    explicit WorkPool(unsigned threads);
    ~WorkPool();
    WorkPool(const WorkPool&) = delete;
    WorkPool& operator=(const WorkPool&) = delete;

    void post(std::function<void()> task);
    /// Runs what is queued, then stops the threads. Further posts run inline.
    void shutdown();

  private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<std::function<void()>> m_queue;
    bool m_stop = false;
    std::vector<std::thread> m_threads;
};

}  // namespace runplane::agent
