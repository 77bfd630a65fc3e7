#pragma once
// Python stacks of a run's processes, as py-spy dumps them (`py-spy dump --json --pid P`), and
// the one frame that stands for a process when stacks are grouped (docs/diagnosis.md).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace runplane::diagnosis {

struct StackFrame {
    std::string name;  // function
    std::string file;  // py-spy's short_filename (a library name for native frames)
    std::int64_t line = 0;
};

struct ThreadStack {
    std::int64_t threadId = 0;
    std::string threadName;
    bool active = false;
    bool ownsGil = false;
    std::vector<StackFrame> frames;  // innermost first, as py-spy prints them
};

/// Parses py-spy's `dump --json` output (one array of threads). Errors name the place.
Result<std::vector<ThreadStack>> parsePySpyJson(std::string_view text);

/// The frame a process is grouped by: in its main thread ("MainThread", else the first thread),
/// the innermost frame of a Python file (".py"), else the innermost frame. Empty name: no frames.
StackFrame signatureFrame(const std::vector<ThreadStack>& threads);

nlohmann::json toJson(const StackFrame& f);
nlohmann::json toJson(const ThreadStack& t);
StackFrame stackFrameFromJson(const nlohmann::json& j);
ThreadStack threadStackFromJson(const nlohmann::json& j);

}  // namespace runplane::diagnosis
