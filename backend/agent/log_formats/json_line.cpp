// JSON lines (after any Ray prefix): {"metric": "train/loss", "value": 0.1, "step": 3}, the smoke
// workload's {"kind": "step", "id": 3, "metrics": {...}}, or a flat {"train/loss": 0.1, "step": 3}.
#include "backend/agent/log_formats.h"
#include "backend/agent/python_literal.h"

namespace runplane::agent {
namespace {

/// A JSON line's step: its integer part, or -1 (unknown) when it is NaN or beyond int64_t
/// (1e21 or a huge Python int: the plain cast is undefined behaviour; found by fuzz_log_line).
std::int64_t stepOf(double value) {
    constexpr double kTwoPow63 = 9223372036854775808.0;  // the first double past INT64_MAX
    return value >= -kTwoPow63 && value < kTwoPow63 ? static_cast<std::int64_t>(value) : -1;
}

bool isStepKey(const std::string& key) {
    return key == "step" || key == "_step" || key == "id" || key == "global_step" ||
           key == "iteration";
}

}  // namespace

bool recognizeJsonLine(const LineView& view, ParsedLogLine& out) {
    const std::string_view line = logfmt::trim(view.body);
    if (line.size() < 2 || line.front() != '{' || line.back() != '}') {
        return false;
    }
    auto value = parsePythonLiteral(line);
    if (!value || value->kind != PyValue::Kind::Dict) {
        return false;
    }
    const PyValue* metricName = nullptr;
    const PyValue* metricValue = nullptr;
    const PyValue* metrics = nullptr;
    std::int64_t step = -1;
    for (const auto& [k, v] : value->entries) {
        if (k.kind != PyValue::Kind::String) {
            continue;
        }
        const std::string& key = k.text;
        if (isStepKey(key) && (v.kind == PyValue::Kind::Int || v.kind == PyValue::Kind::Float)) {
            step = stepOf(v.asDouble());
        } else if ((key == "metric" || key == "name") && v.kind == PyValue::Kind::String) {
            metricName = &v;
        } else if (key == "value" && v.isNumeric()) {
            metricValue = &v;
        } else if (key == "metrics" && v.kind == PyValue::Kind::Dict) {
            metrics = &v;
        }
    }
    std::vector<std::pair<std::string, double>> flat;
    if (metricName != nullptr && metricValue != nullptr) {
        flat.emplace_back(metricName->text, metricValue->asDouble());
    } else if (metrics != nullptr) {
        flattenNumeric(*metrics, "", flat);
    } else {
        for (const auto& [k, v] : value->entries) {
            if (k.kind == PyValue::Kind::String &&
                (isStepKey(k.text) || k.text == "_timestamp" || k.text == "_runtime")) {
                continue;
            }
            flattenNumeric(v, k.keyText(), flat);
        }
    }
    if (flat.empty()) {
        return false;
    }
    for (auto& [name, v] : flat) {
        out.metrics.push_back(LogMetric{std::move(name), v, step});
    }
    out.progress = true;
    return true;
}

}  // namespace runplane::agent
