#include "backend/control/run_log_recorder.h"

#include <chrono>

#include "db/history/history.h"

namespace runplane::control {

struct RunLogRecorder::Follower {
    RunId runId;
    LogStreamKind stream = LogStreamKind::Stdout;
    StreamCanceller canceller;
    std::thread thread;
};

RunLogRecorder::RunLogRecorder(std::shared_ptr<NodeClient> client, std::string historyPath,
                               std::size_t maxRuns)
    : m_client(std::move(client)), m_historyPath(std::move(historyPath)), m_maxRuns(maxRuns) {}

RunLogRecorder::~RunLogRecorder() {
    stop();
}

void RunLogRecorder::noticeRun(const std::string& runId) {
    std::lock_guard lock(m_mutex);
    if (m_stopped || runId.empty() || m_seen.count(runId) != 0 || m_seen.size() >= m_maxRuns) {
        return;
    }
    m_seen.insert(runId);
    for (LogStreamKind stream : {LogStreamKind::Stdout, LogStreamKind::Stderr}) {
        auto f = std::make_unique<Follower>();
        f->runId = RunId{runId};
        f->stream = stream;
        Follower* raw = f.get();
        m_followers.push_back(std::move(f));
        raw->thread = std::thread([this, raw] { follow(*raw); });
    }
}

void RunLogRecorder::follow(Follower& f) {
    const std::string stream = f.stream == LogStreamKind::Stdout ? "stdout" : "stderr";
    auto history = db::History::open(m_historyPath);
    if (!history.ok()) {
        return;  // the ingestor reports an unusable history itself
    }
    bool reachedEof = false;
    int failures = 0;
    // 30 failed attempts in a row (a minute): the daemon does not know the run (or is gone for
    // good); what was stored so far stays.
    while (!reachedEof && !f.canceller.cancelled() && failures < 30) {
        auto from = (*history)->runLogEnd(f.runId, stream);
        if (!from.ok()) {
            return;
        }
        bool got = false;
        bool storeFailed = false;
        const Status s = m_client->tailLogs(
            f.runId, f.stream, *from, /*follow=*/true,
            [&](const LogChunkInfo& chunk) {
                got = true;
                if (!chunk.data.empty() &&
                    !(*history)->appendRunLog(f.runId, stream, chunk.offset, chunk.data).ok()) {
                    // Not stored (a full disk, the history locked): stop this tail and resume
                    // from the stored end, so that the daemon sends this chunk again instead of
                    // the next one being stored after a hole (issue 41).
                    storeFailed = true;
                    return false;
                }
                reachedEof = chunk.eof;
                return true;
            },
            &f.canceller);
        if (reachedEof || f.canceller.cancelled()) {
            break;
        }
        // The daemon went away or the run is unknown to it: try again a little later.
        failures = (s.ok() || got || storeFailed) ? 0 : failures + 1;
        for (int i = 0; i < 20 && !f.canceller.cancelled(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
}

void RunLogRecorder::stop() {
    std::vector<std::unique_ptr<Follower>> followers;
    {
        std::lock_guard lock(m_mutex);
        m_stopped = true;
        followers.swap(m_followers);
    }
    for (auto& f : followers) {
        f->canceller.cancel();
    }
    for (auto& f : followers) {
        if (f->thread.joinable()) {
            f->thread.join();
        }
    }
}

}  // namespace runplane::control
