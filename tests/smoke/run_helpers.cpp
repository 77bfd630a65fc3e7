#include "run_helpers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace runplane::smoke::test {

std::string smokeBinary() {
    const char* dir = std::getenv("RUNPLANE_BINARY_DIR");
    return std::string(dir != nullptr ? dir : ".") + "/compute/smoke/runplane-smoke";
}

ChildResult runChild(const std::string& exe, const std::vector<std::string>& args,
                     int timeoutSeconds) {
    ChildResult result;
    int outPipe[2], errPipe[2];
    if (pipe(outPipe) != 0 || pipe(errPipe) != 0) {
        result.err = "pipe failed";
        return result;
    }
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(outPipe[1], 1);
        dup2(errPipe[1], 2);
        close(outPipe[0]);
        close(errPipe[0]);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(exe.c_str()));
        for (const auto& a : args) {
            argv.push_back(const_cast<char*>(a.c_str()));
        }
        argv.push_back(nullptr);
        execv(exe.c_str(), argv.data());
        _exit(127);
    }
    close(outPipe[1]);
    close(errPipe[1]);
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    int openCount = 2;
    char buf[65536];
    while (openCount > 0) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > timeoutSeconds) {
            kill(pid, SIGKILL);
            result.timedOut = true;
            break;
        }
        if (poll(fds, 2, 500) < 0) {
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP)) != 0) {
                ssize_t n = read(fds[i].fd, buf, sizeof(buf));
                if (n > 0) {
                    (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
                } else {
                    close(fds[i].fd);
                    fds[i].fd = -1;
                    --openCount;
                }
            }
        }
    }
    for (auto& f : fds) {
        if (f.fd >= 0) {
            close(f.fd);
        }
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    result.wallSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.maxRssMb = static_cast<double>(usage.ru_maxrss) / 1024.0;
    if (WIFEXITED(status) && !result.timedOut) {
        result.exitCode = WEXITSTATUS(status);
    }
    return result;
}

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            end = text.size();
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

std::optional<MetricLine> parseMetricLine(const std::string& line) {
    MetricLine m;
    const std::size_t space = line.find(' ');
    const std::size_t colon = line.find(": {");
    if (space == std::string::npos || colon == std::string::npos || space > colon ||
        line.back() != '}') {
        return std::nullopt;
    }
    m.prefix = line.substr(0, space);
    char* end = nullptr;
    const std::string idText = line.substr(space + 1, colon - space - 1);
    m.id = std::strtoll(idText.c_str(), &end, 10);
    if (idText.empty() || *end != '\0') {
        return std::nullopt;
    }
    std::size_t i = colon + 3;
    const std::size_t last = line.size() - 1;
    while (i < last) {
        if (line[i] != '\'') {
            return std::nullopt;
        }
        const std::size_t close = line.find('\'', i + 1);
        if (close == std::string::npos || line.compare(close + 1, 2, ": ") != 0) {
            return std::nullopt;
        }
        std::string key = line.substr(i + 1, close - i - 1);
        std::size_t v = close + 3;
        std::size_t vend = line.find(", '", v);
        if (vend == std::string::npos || vend > last) {
            vend = last;
        }
        const std::string valueText = line.substr(v, vend - v);
        double value = 0;
        if (valueText == "nan") {
            value = std::nan("");
        } else if (valueText == "inf" || valueText == "-inf") {
            value = valueText[0] == '-' ? -INFINITY : INFINITY;
        } else {
            value = std::strtod(valueText.c_str(), &end);
            if (valueText.empty() || *end != '\0') {
                return std::nullopt;
            }
        }
        m.keys.push_back(key);
        m.values[key] = value;
        i = vend == last ? last : vend + 2;
    }
    return m;
}

}  // namespace runplane::smoke::test
