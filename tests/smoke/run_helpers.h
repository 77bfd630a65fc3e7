#pragma once
// Test helpers for runplane-smoke: run the real executable as a child process, and parse its
// framework-shaped log lines (`prefix N: {'key': value, ...}`) like a log follower would.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runplane::smoke::test {

struct ChildResult {
    int exitCode = -1;  ///< -1 when killed by a signal or the timeout
    bool timedOut = false;
    std::string out;      ///< stdout
    std::string err;      ///< stderr
    double maxRssMb = 0;  ///< peak resident set of the child (wait4 ru_maxrss)
    double wallSeconds = 0;
};

/// Path of the built runplane-smoke (from RUNPLANE_BINARY_DIR).
std::string smokeBinary();
ChildResult runChild(const std::string& exe, const std::vector<std::string>& args,
                     int timeoutSeconds);

/// One metrics line: `<prefix> <id>: {...}` with the payload parsed as a Python dict literal of
/// string keys and numeric values (ints, floats, nan, inf).
struct MetricLine {
    std::string prefix;
    long long id = 0;
    std::vector<std::string> keys;  ///< in order
    std::map<std::string, double> values;
};
/// nullopt when the line is not a metrics line or the payload does not parse.
std::optional<MetricLine> parseMetricLine(const std::string& line);

std::vector<std::string> splitLines(const std::string& text);

}  // namespace runplane::smoke::test
