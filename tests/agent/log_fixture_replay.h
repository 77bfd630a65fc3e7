#pragma once
// The collector's path over a real paste (tests/agent/fixtures/logs, each headed by its source):
// the fixture's lines without the `# source:` header, fed to one LogReader line by line, then
// finish(). Shared by the log tests that replay fixtures (formats table, held-out gaps, folds).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "backend/agent/log_metrics.h"

namespace runplane::agent::test {

/// The fixture's lines, its `# source:` header left out.
inline std::vector<std::string> fixtureLines(const std::string& name) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    std::ifstream in(std::string(src != nullptr ? src : ".") + "/tests/agent/fixtures/logs/" + name,
                     std::ios::binary);
    EXPECT_TRUE(in.good()) << name;
    std::vector<std::string> lines;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with("# source:")) {
            lines.push_back(line);
        }
    }
    return lines;
}

/// The lines without the empty ones (the collector skips them).
inline std::vector<std::string> nonEmpty(std::vector<std::string> lines) {
    std::erase_if(lines, [](const std::string& l) { return l.empty(); });
    return lines;
}

/// Feeds `lines` to one LogReader and hands every parsed line, finish()'s included, to `take`.
template <class Take>
void replayLines(const std::vector<std::string>& lines, Take&& take) {
    LogReader reader;
    for (const auto& line : lines) {
        take(reader.feed(line));
    }
    take(reader.finish());
}

}  // namespace runplane::agent::test
