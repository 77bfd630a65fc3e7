#pragma once
// Feeds server-streaming calls (WatchTelemetry, TailLogs) from one thread, so that the reads
// behind each message (SQLite, log files) never run inside a gRPC reaction. A stream asks to be
// pumped again by calling wake() (e.g. from OnWriteDone); otherwise every stream is pumped at
// least every 100 ms, which is also the live batching interval.
//
// Thread-safety: add() and wake() from any thread.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace runplane::agent {

/// A stream the pump drives. pump() runs on the pump thread only; it returns false once the
/// stream is finished and may be forgotten.
class PumpedStream {
  public:
    virtual ~PumpedStream() = default;
    virtual bool pump() = 0;
};

class StreamPump {
  public:
    StreamPump();
    ~StreamPump();
    StreamPump(const StreamPump&) = delete;
    StreamPump& operator=(const StreamPump&) = delete;

    void add(std::shared_ptr<PumpedStream> stream);
    void wake();
    void stop();
    std::size_t size() const;

  private:
    void loop();
    mutable std::mutex m_mutex;
    std::condition_variable m_cv;
    std::vector<std::shared_ptr<PumpedStream>> m_streams;
    bool m_woken = false;
    bool m_stop = false;
    std::thread m_thread;
};

}  // namespace runplane::agent
