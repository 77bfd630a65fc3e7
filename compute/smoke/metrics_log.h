#pragma once
// Log lines in the shapes the RL frameworks print (docs/smoke-workload.md, frameworks.md §5):
// `step 3: {'train/loss': 0.012, 'train/step': 3}` with the payload in Python dict repr
// (single quotes, Python float repr), plus `[runplane-phase] <name>` markers. Every line is
// flushed as it is written so a parent process can follow the run live. Torch-free.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"

namespace runplane::smoke {

/// One metric of a line: key and an integer or float value, printed in insertion order.
struct Metric {
    std::string key;
    std::variant<std::int64_t, double> value;
};

/// Python's repr() of a float: shortest round-trip digits, fixed notation when the decimal
/// exponent is in [-4, 16), else scientific with a signed two-digit exponent ('1e-06');
/// integral values keep '.0'; 'nan', 'inf', '-inf'.
std::string pythonFloatRepr(double value);

/// `<prefix> <id>: {'k': v, ...}` without a newline.
std::string formatMetricLine(std::string_view prefix, std::int64_t id,
                             const std::vector<Metric>& metrics);

/// The JSON object written to --metrics-jsonl for the same line:
/// {"kind":"<prefix>","id":<id>,"metrics":{"k":v,...}} (non-finite floats become null).
std::string formatMetricJson(std::string_view prefix, std::int64_t id,
                             const std::vector<Metric>& metrics);

/// Writes metric lines and phase markers to a stream (and optionally a JSONL file). Owns the
/// JSONL file; not thread-safe (the workload logs from one thread).
class MetricsLog {
  public:
    explicit MetricsLog(std::FILE* out) : m_out(out) {}
    ~MetricsLog();
    MetricsLog(const MetricsLog&) = delete;
    MetricsLog& operator=(const MetricsLog&) = delete;

    /// Opens (appends to) the JSONL file; error names the path.
    Status openJsonl(const std::string& path);
    void metrics(std::string_view prefix, std::int64_t id, const std::vector<Metric>& metrics);
    /// `[runplane-phase] <name>`
    void phase(std::string_view name);
    /// A free-form line (already formatted), flushed.
    void line(std::string_view text);

  private:
    std::FILE* m_out;
    std::FILE* m_jsonl = nullptr;
};

}  // namespace runplane::smoke
