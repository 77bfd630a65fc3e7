#include "backend/alerts/sender.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "backend/alerts/alert_event.h"
#include "backend/alerts/transport.h"
#include "common/json_text.h"

namespace runplane::alerts {
namespace {

std::string defaultHolder(std::uint64_t random) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return std::string(host) + ":" + std::to_string(::getpid()) + ":" +
           std::to_string(random % 1000000);
}

std::string seconds(std::int64_t ns) {
    const double s = static_cast<double>(ns) / 1e9;
    char buf[32];
    std::snprintf(buf, sizeof buf, s < 10 ? "%.1f s" : "%.0f s", s);
    return buf;
}

}  // namespace

std::int64_t unixNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

AlertSender::AlertSender(SenderOptions options)
    : m_options(std::move(options)), m_random(std::random_device{}()) {
    m_secrets = m_options.rules.secrets();
    if (m_options.holder.empty()) {
        m_options.holder = defaultHolder(m_random());
    }
}

AlertSender::~AlertSender() {
    stop();
}

Status AlertSender::start() {
    auto store = db::AlertStore::open(m_options.historyPath);
    if (!store.ok()) {
        return store.failure();
    }
    m_store = std::move(*store);
    m_thread = std::thread([this] { loop(); });
    return {};
}

void AlertSender::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
        if (m_leaseHeld) {
            (void)m_store->releaseLease(m_options.holder);
            m_leaseHeld = false;
        }
    }
}

SenderStats AlertSender::stats() const {
    std::lock_guard lock(m_mutex);
    SenderStats s = m_stats;
    s.leaseHeld = m_leaseHeld;
    return s;
}

void AlertSender::log(const std::string& line) {
    if (m_options.onLog) {
        m_options.onLog(scrub(line, m_secrets));
    }
}

std::int64_t AlertSender::backoffNs(const DeliverySettings& settings, int failedAttempts,
                                    std::optional<std::int64_t> retryAfterNs, double unitRandom) {
    const int doublings = std::clamp(failedAttempts - 1, 0, 40);
    const double full =
        std::min(static_cast<double>(settings.backoffMaxNs),
                 static_cast<double>(settings.backoffBaseNs) * std::ldexp(1.0, doublings));
    // "Equal jitter": half the delay fixed, half random, so retries of many alerts spread out
    // but none comes back sooner than half the back-off.
    const auto delay = static_cast<std::int64_t>(full / 2 + unitRandom * full / 2);
    return std::max(delay, retryAfterNs.value_or(0));
}

bool AlertSender::renewLease(std::int64_t now) {
    if (m_leaseHeld && now - m_leaseRenewedNs < m_options.leaseTtlNs / 3) {
        return true;
    }
    auto got = m_store->acquireLease(m_options.holder, now, m_options.leaseTtlNs);
    const bool held = got.ok() && *got;
    if (held != m_leaseHeld || !m_leaseAsked) {
        m_leaseAsked = true;
        log(held ? "alerts: this sender sends for " + m_options.historyPath
                 : "alerts: another sender holds the lease of " + m_options.historyPath +
                       "; waiting");
    }
    {
        std::lock_guard lock(m_mutex);
        m_leaseHeld = held;
        if (!got.ok()) {
            m_stats.lastError = got.error();
        }
    }
    if (held) {
        m_leaseRenewedNs = now;
    }
    return held;
}

void AlertSender::loop() {
    // A command destination's child may exit without reading: its pipe answers EPIPE, never a
    // process-killing SIGPIPE (blocked on this thread only; transport.cpp drops it).
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    bool announced = false;
    while (true) {
        std::int64_t sleepNs = std::chrono::nanoseconds(m_options.poll).count();
        Status status;
        try {
            status = pass(sleepNs);
        } catch (const std::exception& e) {
            // Nothing here is meant to throw; should it, the thread lives on and says so.
            status = Error{std::string("alerts: unexpected error: ") + e.what()};
        }
        if (Status s = status; !s.ok()) {
            std::lock_guard lock(m_mutex);
            m_stats.lastError = s.error();
            if (!announced) {
                announced = true;
                log("alerts: " + s.error());
            }
            if (s.code() == ErrorCode::Busy) {
                m_leaseHeld = false;  // taken over (this process was paused past its lease)
            }
        } else {
            announced = false;
        }
        std::unique_lock lock(m_mutex);
        sleepNs = std::clamp<std::int64_t>(sleepNs, 1'000'000,
                                           std::chrono::nanoseconds(m_options.poll).count());
        if (m_wake.wait_for(lock, std::chrono::nanoseconds(sleepNs), [&] { return m_stopping; })) {
            return;
        }
    }
}

Status AlertSender::pass(std::int64_t& sleepNs) {
    const std::int64_t now = unixNowNs();
    if (!renewLease(now)) {
        return {};
    }
    if (Status s = intake(now); !s.ok()) {
        return s;
    }
    return deliverDue(unixNowNs(), sleepNs);
}

Status AlertSender::intake(std::int64_t now) {
    const DeliverySettings& settings = m_options.rules.delivery;
    auto pendingCount = m_store->countPending();
    if (!pendingCount.ok()) {
        return pendingCount.failure();
    }
    // The queue is bounded: past maxPending no new event is taken; they wait in the history.
    if (*pendingCount >= settings.maxPending) {
        return {};
    }
    auto cursor = m_store->cursor(now);
    if (!cursor.ok()) {
        return cursor.failure();
    }
    const int room = std::min(m_options.eventsPerPass, settings.maxPending - *pendingCount);
    auto events = m_store->eventsAfter(*cursor, room);
    if (!events.ok()) {
        return events.failure();
    }
    if (events->empty()) {
        return {};
    }
    std::vector<db::NewDelivery> deliveries;
    std::map<std::string, int> addedByRule;
    std::map<std::string, std::int64_t> lastByKey;
    std::map<std::string, std::optional<db::AlertRunInfo>> runs;
    for (const db::StoredEvent& event : *events) {
        if (!event.runId.empty() && !runs.count(event.runId.value())) {
            auto run = m_store->run(event.runId);
            if (!run.ok()) {
                return run.failure();
            }
            runs[event.runId.value()] = *run;
        }
        const RunFacts facts =
            runFacts(event, event.runId.empty() ? std::nullopt : runs[event.runId.value()]);
        for (const Rule& rule : m_options.rules.rules) {
            if (!matches(rule, event, facts)) {
                continue;
            }
            std::string suppressedBy;
            if (rule.rateCount > 0) {
                auto count = m_store->countSince(rule.name, now - rule.rateWindowNs);
                if (!count.ok()) {
                    return count.failure();
                }
                if (*count + addedByRule[rule.name] >= rule.rateCount) {
                    suppressedBy = "rate limit " + std::to_string(rule.rateCount) + " per " +
                                   seconds(rule.rateWindowNs);
                }
            }
            const std::string quietKey = rule.name + "|" + event.runId.value() + "|" + event.kind;
            if (suppressedBy.empty() && rule.quietNs > 0) {
                auto last = m_store->lastWithKey(quietKey);
                if (!last.ok()) {
                    return last.failure();
                }
                const std::int64_t latest = std::max(*last, lastByKey[quietKey]);
                if (latest > 0 && now - latest < rule.quietNs) {
                    suppressedBy = "quiet period " + seconds(rule.quietNs);
                }
            }
            if (suppressedBy.empty()) {
                ++addedByRule[rule.name];
                lastByKey[quietKey] = now;
            }
            const std::string payload = json_text::dump(payloadOf(event, facts, rule));
            for (const std::string& to : rule.to) {
                // An alert about a failed delivery never goes back to the destination that failed.
                if (event.kind == db::kAlertFailedKind &&
                    db::attrText(event.attrs, "destination") == to) {
                    continue;
                }
                db::NewDelivery d;
                d.eventId = event.id;
                d.rule = rule.name;
                d.destination = to;
                d.quietKey = quietKey;
                d.state = suppressedBy.empty() ? db::DeliveryState::Pending
                                               : db::DeliveryState::Suppressed;
                d.payloadJson = payload;
                d.createdNs = now;
                d.nextNs = now;
                d.deadlineNs = now + settings.deadlineNs;
                d.result = suppressedBy;
                deliveries.push_back(std::move(d));
            }
        }
    }
    if (Status s = m_store->enqueue(m_options.holder, deliveries, events->back().id, now);
        !s.ok()) {
        return s;
    }
    std::lock_guard lock(m_mutex);
    for (const auto& d : deliveries) {
        if (d.state == db::DeliveryState::Suppressed) {
            ++m_stats.suppressed;
        } else {
            ++m_stats.queued;
        }
    }
    return {};
}

Status AlertSender::deliverDue(std::int64_t now, std::int64_t& sleepNs) {
    const DeliverySettings& settings = m_options.rules.delivery;
    auto pending = m_store->pending(64);
    if (!pending.ok()) {
        return pending.failure();
    }
    for (const db::AlertDelivery& d : *pending) {
        {
            std::lock_guard lock(m_mutex);
            if (m_stopping) {
                return {};
            }
        }
        now = unixNowNs();
        if (d.nextNs > now) {
            sleepNs = std::min(sleepNs, d.nextNs - now);
            break;  // ordered by next attempt: the rest are later still
        }
        if (!renewLease(now)) {
            return {};
        }
        const Destination* destination = m_options.rules.destination(d.destination);
        if (destination == nullptr) {
            if (Status s = m_store->recordFailure(
                    m_options.holder, d, "the destination is no longer in the rules file", now);
                !s.ok()) {
                return s;
            }
            std::lock_guard lock(m_mutex);
            ++m_stats.failed;
            continue;
        }
        nlohmann::json payload = nlohmann::json::parse(d.payloadJson, nullptr, false);
        if (!payload.is_object()) {
            payload = nlohmann::json::object();
        }
        const std::string key =
            "runplane-" + std::to_string(d.eventId) + "-" + std::to_string(d.id);
        payload["delivery"] = {{"id", d.id}, {"attempt", d.attempts + 1}, {"idempotency_key", key}};
        const AttemptResult r =
            attempt(*destination, renderBody(destination->kind, payload), key, m_secrets);
        const int attempts = d.attempts + 1;
        now = unixNowNs();
        {
            std::lock_guard lock(m_mutex);
            ++m_stats.attempts;
        }
        if (r.delivered) {
            if (Status s = m_store->recordAttempt(m_options.holder, d.id, db::DeliveryState::Sent,
                                                  attempts, now, r.result, now);
                !s.ok()) {
                return s;
            }
            log("alerts: " + d.rule + " -> " + d.destination + " (event " +
                std::to_string(d.eventId) + "): " + r.result);
            std::lock_guard lock(m_mutex);
            ++m_stats.sent;
            continue;
        }
        const std::int64_t wait = backoffNs(settings, attempts, r.retryAfterNs,
                                            std::uniform_real_distribution<double>(0, 1)(m_random));
        if (!r.retryable || now >= d.deadlineNs) {
            db::AlertDelivery failed = d;
            failed.attempts = attempts;
            const std::string why =
                r.result + (r.retryable ? " (deadline passed)" : " (not retried)");
            if (Status s = m_store->recordFailure(m_options.holder, failed, why, now); !s.ok()) {
                return s;
            }
            log("alerts: " + d.rule + " -> " + d.destination + " (event " +
                std::to_string(d.eventId) + ") failed after " + std::to_string(attempts) +
                " attempts: " + why + "; an alert_failed event was stored");
            std::lock_guard lock(m_mutex);
            ++m_stats.failed;
            continue;
        }
        // One last attempt at the deadline rather than none after it.
        const std::int64_t next = std::min(now + wait, d.deadlineNs);
        std::string result = r.result;
        if (r.retryAfterNs) {
            result += " (retry after " + seconds(*r.retryAfterNs) + ")";
        }
        if (Status s = m_store->recordAttempt(m_options.holder, d.id, db::DeliveryState::Pending,
                                              attempts, next, result, now);
            !s.ok()) {
            return s;
        }
        log("alerts: " + d.rule + " -> " + d.destination + " (event " + std::to_string(d.eventId) +
            "): " + result + "; retrying in " + seconds(next - now));
        sleepNs = std::min(sleepNs, next - now);
    }
    return {};
}

}  // namespace runplane::alerts
