// Failures that end an RL run between the trainer and the engines.
// weight_sync_failure: SGLang's `Failed to update parameter online: <reason>` (scheduler, after
//   update_weights_from_distributed/tensor) and vLLM's `Error executing method update_weight.
//   This might cause deadlock in distributed execution.` attrs: engine, reason, summary.
// batch_mismatch: `Not enough samples X for global_batch_size Y` (raised by the RL frameworks'
//   data trimming). attrs: samples, global_batch_size, summary.
// Fixtures: tests/agent/fixtures/logs/slime_weight_sync_sglang_26032.log.
#include "backend/agent/log_formats.h"

namespace runplane::agent {

bool recognizeWeightSyncFailure(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.text;
    const bool sglang =
        logfmt::find(t, "Failed to update parameter online") != std::string_view::npos;
    const auto method = logfmt::find(t, "Error executing method ");
    if (!sglang &&
        (method == std::string_view::npos ||
         logfmt::find(t.substr(method, 40), "update_weight") == std::string_view::npos)) {
        return false;
    }
    LogEvent ev = logfmt::makeEvent(LogEventKind::WeightSyncFailure, "");
    const std::string label = engineLabel(view);
    if (!label.empty()) {
        ev.attrs["engine"] = label;
    }
    std::string summary;
    if (const auto p = logfmt::find(t, "Failed to update parameter online");
        p != std::string_view::npos) {
        std::string_view reason = t.substr(p + 33);
        if (reason.starts_with(": ")) {
            reason.remove_prefix(2);
        }
        ev.attrs["reason"] = std::string(logfmt::trim(reason.substr(0, 512)));
        ev.attrs["engine_kind"] = "sglang";
        summary = "weight sync failed";
    } else {
        ev.attrs["engine_kind"] = "vllm";
        ev.attrs["reason"] = std::string(logfmt::trim(t.substr(0, 512)));
        summary = "weight sync failed (vLLM update_weight)";
    }
    if (!label.empty()) {
        summary += " on engine " + label;
    }
    if (!ev.attrs["reason"].empty() && ev.attrs["engine_kind"] == "sglang") {
        summary += ": " + ev.attrs["reason"].substr(0, 120);
    }
    ev.attrs["summary"] = summary;
    ev.message = summary;
    out.events.push_back(std::move(ev));
    return true;
}

bool recognizeBatchMismatch(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.text;
    double samples = 0;
    double gbs = 0;
    std::size_t end = 0;
    if (!logfmt::numberAfter(t, "Not enough samples ", samples, 0, &end) ||
        !logfmt::numberAfter(t, "for global_batch_size ", gbs, end)) {
        return false;
    }
    LogEvent ev = logfmt::makeEvent(LogEventKind::BatchMismatch, "");
    ev.attrs["samples"] = logfmt::formatNumber(samples);
    ev.attrs["global_batch_size"] = logfmt::formatNumber(gbs);
    ev.attrs["summary"] = "batch mismatch: " + logfmt::formatNumber(samples) +
                          " samples for global_batch_size " + logfmt::formatNumber(gbs);
    ev.message = ev.attrs["summary"];
    out.events.push_back(std::move(ev));
    return true;
}

}  // namespace runplane::agent
