// The engines' /metrics text (Prometheus exposition format) as the daemon's scraper reads it: the
// parser's bounds (samples, labels) hold and the engine gauges derived from it are finite names.
#include <cstdlib>

#include "backend/agent/engine_metrics.h"
#include "tests/fuzz/fuzz_support.h"

using namespace runplane::agent;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::size_t skipped = 0;
    std::string firstError;
    const auto samples = parsePrometheusText(text, &skipped, &firstError);
    if (samples.size() > kMaxPromSamples) {
        std::abort();
    }
    for (const auto& s : samples) {
        if (s.labels.size() > kMaxPromLabels) {
            std::abort();
        }
    }
    for (const auto& m : engineMetricsFromExposition(text, 30000)) {
        if (m.series.empty()) {
            std::abort();
        }
    }
    return 0;
}
