#include "backend/alerts/transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <httplib.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

namespace runplane::alerts {
namespace {

constexpr std::size_t kMaxReply = 4096;

std::string bounded(std::string text) {
    if (text.size() > kMaxReply) {
        text.resize(kMaxReply);
        text += "...";
    }
    return text;
}

std::string firstLine(const std::string& text, std::size_t max = 200) {
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > max) {
        line = line.substr(0, max) + "...";
    }
    return line;
}

std::int64_t unixNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::pair<time_t, time_t> secUsec(double seconds) {
    const double whole = std::floor(seconds);
    return {static_cast<time_t>(whole), static_cast<time_t>((seconds - whole) * 1e6)};
}

AttemptResult postHttp(const Destination& d, const std::string& body, const std::string& key,
                       const std::vector<std::string>& secrets) {
    AttemptResult r;
    // scheme://host[:port] and the rest (path and query) of the URL.
    const auto schemeEnd = d.url.find("://");
    const auto pathStart = d.url.find('/', schemeEnd + 3);
    const std::string origin = pathStart == std::string::npos ? d.url : d.url.substr(0, pathStart);
    const std::string path = pathStart == std::string::npos ? "/" : d.url.substr(pathStart);
    httplib::Client client(origin);
    if (!client.is_valid()) {
        r.retryable = false;
        r.result = "the destination's URL is not one this build can reach (http or https)";
        return r;
    }
    const auto [sec, usec] = secUsec(d.timeoutSeconds);
    client.set_connection_timeout(sec, usec);
    client.set_read_timeout(sec, usec);
    client.set_write_timeout(sec, usec);
    client.set_follow_location(false);
    httplib::Headers headers{{"User-Agent", "runplane-alerts"}, {"Idempotency-Key", key}};
    if (!d.token.empty()) {
        headers.emplace("Authorization", "Bearer " + d.token);
    }
    auto res = client.Post(path, headers, body, "application/json");
    if (!res) {
        r.result = "no answer: " + httplib::to_string(res.error());
        return r;
    }
    r.httpStatus = res->status;
    r.reply = scrub(bounded(res->body), secrets);
    r.delivered = res->status >= 200 && res->status < 300;
    r.result = "HTTP " + std::to_string(res->status);
    if (!r.reply.empty()) {
        r.result += " " + firstLine(r.reply);
    }
    if (res->status == 429) {
        if (res->has_header("Retry-After")) {
            r.retryAfterNs = parseRetryAfter(res->get_header_value("Retry-After"), unixNowNs());
        }
        if (!r.retryAfterNs) {
            // Discord answers {"retry_after": seconds} in the body.
            const auto j = nlohmann::json::parse(res->body, nullptr, false);
            if (j.is_object() && j.contains("retry_after") && j["retry_after"].is_number()) {
                const double s = j["retry_after"].get<double>();
                if (std::isfinite(s) && s >= 0 && s < 86400) {
                    r.retryAfterNs = static_cast<std::int64_t>(s * 1e9);
                }
            }
        }
    }
    // 4xx other than 408 (timeout) and 429 (slow down) will not change by retrying.
    r.retryable = !r.delivered && (res->status >= 500 || res->status == 408 || res->status == 429 ||
                                   res->status < 400);
    return r;
}

AttemptResult runCommand(const Destination& d, const std::string& body, const std::string& key,
                         const std::vector<std::string>& secrets) {
    AttemptResult r;
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) {
        r.result = std::string("pipe: ") + std::strerror(errno);
        return r;
    }
    if (::pipe2(out, O_CLOEXEC) != 0) {
        ::close(in[0]);
        ::close(in[1]);
        r.result = std::string("pipe: ") + std::strerror(errno);
        return r;
    }
    std::vector<std::string> env{"RUNPLANE_ALERT_ID=" + key};
    const nlohmann::json payload = nlohmann::json::parse(body, nullptr, false);
    if (payload.is_object()) {
        env.push_back("RUNPLANE_ALERT_LEVEL=" + payload.value("level", std::string()));
        env.push_back("RUNPLANE_ALERT_SUMMARY=" + payload.value("summary", std::string()));
    }
    std::vector<char*> argv;
    for (const auto& a : d.argv) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    // The environment is built before fork: the child only calls async-signal-safe functions.
    std::vector<char*> envp;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        envp.push_back(*e);
    }
    for (auto& e : env) {
        envp.push_back(e.data());
    }
    envp.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        r.result = std::string("fork: ") + std::strerror(errno);
        for (int fd : {in[0], in[1], out[0], out[1]}) {
            ::close(fd);
        }
        return r;
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls until exec.
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(out[1], 2);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::execvpe(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::fcntl(in[1], F_SETFL, O_NONBLOCK);
    ::fcntl(out[0], F_SETFL, O_NONBLOCK);
    std::size_t written = 0;
    std::string reply;
    bool inOpen = true;
    bool outOpen = true;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long>(d.timeoutSeconds * 1000));
    bool timedOut = false;
    while (outOpen) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            timedOut = true;
            break;
        }
        pollfd fds[2] = {{out[0], POLLIN, 0}, {inOpen ? in[1] : -1, POLLOUT, 0}};
        if (::poll(fds, 2, static_cast<int>(std::min<long>(left, 200))) < 0 && errno != EINTR) {
            break;
        }
        if (inOpen && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
            // SIGPIPE is blocked on the sender's thread: a child that does not read gives EPIPE.
            const ssize_t n = ::write(in[1], body.data() + written, body.size() - written);
            if (n > 0) {
                written += static_cast<std::size_t>(n);
            }
            if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == body.size()) {
                ::close(in[1]);
                inOpen = false;
            }
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[1024];
            const ssize_t n = ::read(out[0], buf, sizeof buf);
            if (n > 0) {
                if (reply.size() < kMaxReply) {
                    reply.append(buf, static_cast<std::size_t>(n));
                }
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                outOpen = false;
            }
        }
    }
    if (inOpen) {
        ::close(in[1]);
    }
    ::close(out[0]);
    if (timedOut) {
        ::kill(pid, SIGKILL);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    // SIGPIPE raised by a write to a child that exited is pending on this thread: drop it.
    sigset_t pipeSet;
    sigemptyset(&pipeSet);
    sigaddset(&pipeSet, SIGPIPE);
    timespec zero{0, 0};
    while (::sigtimedwait(&pipeSet, nullptr, &zero) > 0) {
    }
    r.reply = scrub(bounded(reply), secrets);
    if (timedOut) {
        r.result = "no answer: the command ran past " + std::to_string(d.timeoutSeconds) +
                   " s and was killed";
        return r;
    }
    if (WIFEXITED(status)) {
        const int code = WEXITSTATUS(status);
        r.delivered = code == 0;
        r.result = "exit " + std::to_string(code);
        if (code == 127) {
            r.retryable = false;
            r.result += " (could not run " + d.argv.front() + ")";
        }
    } else if (WIFSIGNALED(status)) {
        r.result = "killed by signal " + std::to_string(WTERMSIG(status));
    }
    if (!r.reply.empty()) {
        r.result += ": " + firstLine(r.reply);
    }
    return r;
}

}  // namespace

std::optional<std::int64_t> parseRetryAfter(const std::string& value, std::int64_t nowUnixNs) {
    double seconds = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc() && end == value.data() + value.size()) {
        if (!std::isfinite(seconds) || seconds < 0 || seconds > 86400) {
            return std::nullopt;
        }
        return static_cast<std::int64_t>(seconds * 1e9);
    }
    // An HTTP date: "Sun, 06 Dec 2026 09:00:00 GMT".
    std::tm tm{};
    if (::strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm) == nullptr) {
        return std::nullopt;
    }
    const std::int64_t at = static_cast<std::int64_t>(::timegm(&tm)) * 1'000'000'000;
    return std::max<std::int64_t>(0, at - nowUnixNs);
}

AttemptResult attempt(const Destination& destination, const std::string& body,
                      const std::string& idempotencyKey, const std::vector<std::string>& secrets) {
    AttemptResult r = destination.kind == DestinationKind::Command
                          ? runCommand(destination, body, idempotencyKey, secrets)
                          : postHttp(destination, body, idempotencyKey, secrets);
    r.result = scrub(r.result, secrets);
    return r;
}

}  // namespace runplane::alerts
