// The log-line classifier (metrics, phases, NCCL and failure events) on every line of the input,
// each line alone and the whole input as one stream through a LogReader (joins, tracebacks).
#include "backend/agent/log_metrics.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane::agent;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    LogReader reader;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        ParsedLogLine parsed = parseLogLine(line);
        (void)reader.feed(line);
        for (const auto& e : parsed.events) {
            if (auto it = e.attrs.find("timer"); it != e.attrs.end()) {
                (void)phaseForTimer(it->second);
            }
        }
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
    (void)reader.finish();
    return 0;
}
