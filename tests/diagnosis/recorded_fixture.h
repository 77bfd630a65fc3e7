#pragma once
// A recorded fixture of tests/diagnosis/fixtures (a report or a stored diagnosis from a real run)
// without its header: the leading lines that start with '#' say where it was recorded.

#include <cstdlib>
#include <fstream>
#include <string>

namespace runplane::diagnosis::test {

inline std::string recordedFixture(const std::string& name) {
    const char* src = std::getenv("RUNPLANE_SOURCE_DIR");
    std::ifstream in(std::string(src ? src : ".") + "/tests/diagnosis/fixtures/" + name);
    std::string line, out;
    bool header = true;
    while (std::getline(in, line)) {
        if (header && line.rfind('#', 0) == 0) {
            continue;
        }
        header = false;
        out += line + "\n";
    }
    return out;
}

}  // namespace runplane::diagnosis::test
