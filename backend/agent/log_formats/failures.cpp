// Failures that end an RL run between the trainer and the engines.
// weight_sync_failure: SGLang's `Failed to update parameter online: <reason>` (scheduler, after
//   update_weights_from_distributed/tensor) and vLLM's `Error executing method update_weight.
//   This might cause deadlock in distributed execution.` attrs: engine, reason, summary.
//   Also an exception line whose message names vLLM's weight-update calls
//   (`start_weight_update`, `finish_weight_update`, `update_weights`) or a failed `collective_rpc`
//   into a weight loader (`Call to collective_rpc method failed: default_weight_loader() ...`).
// batch_mismatch: `Not enough samples X for global_batch_size Y` (raised by the RL frameworks'
//   data trimming). attrs: samples, global_batch_size, summary. Neighbours' wording: DeepSpeed's
//   `Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu *
//   gradient_acc_step * world_size 8 != 2 * 1 * 1` (attrs train_batch_size, micro_batch_per_gpu,
//   gradient_acc_step, world_size) and TRL GRPO's `The global train batch size (7 x 1) must be
//   evenly divisible by the number of generations per prompt (8)` (attrs processes,
//   per_device_batch_size, global_batch_size, generations_per_prompt); `rank` where printed.
// Fixtures: tests/agent/fixtures/logs/slime_weight_sync_sglang_26032.log,
//   slime_weight_sync_failed_2280.log, weight_sync_vllm_skyrl_1605.log,
//   weight_sync_vllm_ms_swift_7270.log, batch_mismatch_deepspeed_6914.log,
//   batch_mismatch_grpo_open_r1_249.log.
#include "backend/agent/log_formats.h"

#include <charconv>

namespace runplane::agent {
namespace {

// `RuntimeError: msg`, `Exception: msg`, `ray.exceptions.RayTaskError(X): msg` at the start of the
// body: the message; "" when the body is not an exception line.
std::string_view exceptionMessage(std::string_view body) {
    std::size_t i = 0;
    while (i < body.size() && i < 160 &&
           ((body[i] >= 'a' && body[i] <= 'z') || (body[i] >= 'A' && body[i] <= 'Z') ||
            (body[i] >= '0' && body[i] <= '9') || body[i] == '_' || body[i] == '.')) {
        ++i;
    }
    const std::string_view name = body.substr(0, i);
    if (i < body.size() && body[i] == '(') {
        const auto close = body.find(')', i);
        if (close == std::string_view::npos || close > i + 80) {
            return {};
        }
        i = close + 1;
    }
    if (name.empty() || !(name.ends_with("Error") || name.ends_with("Exception")) ||
        body.substr(i, 2) != ": ") {
        return {};
    }
    return body.substr(i + 2);
}

// A weight update into vLLM that failed, from its exception line's message.
bool vllmWeightUpdateMessage(std::string_view msg) {
    if (msg.empty()) {
        return false;
    }
    for (std::string_view call :
         {"start_weight_update", "finish_weight_update", "update_weights"}) {
        if (logfmt::find(msg, call) != std::string_view::npos) {
            return true;
        }
    }
    return logfmt::find(msg, "collective_rpc method failed") != std::string_view::npos &&
           logfmt::find(msg, "weight_loader") != std::string_view::npos;
}

}  // namespace

bool recognizeWeightSyncFailure(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.text;
    const bool sglang =
        logfmt::find(t, "Failed to update parameter online") != std::string_view::npos;
    const auto method = logfmt::find(t, "Error executing method ");
    const std::string_view raised = exceptionMessage(logfmt::trim(view.body));
    const bool vllmRaised = !sglang && vllmWeightUpdateMessage(raised);
    if (!sglang && !vllmRaised &&
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
    } else if (vllmRaised) {
        ev.attrs["engine_kind"] = "vllm";
        ev.attrs["reason"] = std::string(logfmt::trim(raised.substr(0, 512)));
        summary = "weight sync failed (vLLM weight update)";
    } else {
        ev.attrs["engine_kind"] = "vllm";
        ev.attrs["reason"] = std::string(logfmt::trim(t.substr(0, 512)));
        summary = "weight sync failed (vLLM update_weight)";
    }
    if (!label.empty()) {
        summary += " on engine " + label;
    }
    if (!ev.attrs["reason"].empty() && (ev.attrs["engine_kind"] == "sglang" || vllmRaised)) {
        summary += ": " + ev.attrs["reason"].substr(0, 120);
    }
    ev.attrs["summary"] = summary;
    ev.message = summary;
    out.events.push_back(std::move(ev));
    return true;
}

namespace {

constexpr std::string_view kDeepSpeedProduct = "gradient_acc_step * world_size ";

// The numbers of `8 != 2 * 1 * 1` at `from` (spaces allowed around the operators): lhs, then
// each factor; false unless there are exactly three factors.
bool readProduct(std::string_view t, std::size_t from, double (&v)[4]) {
    std::size_t i = from;
    for (int k = 0; k < 4; ++k) {
        while (i < t.size() && t[i] == ' ') {
            ++i;
        }
        if (k > 0) {
            const std::string_view op = k == 1 ? "!=" : "*";
            if (t.substr(i, op.size()) != op) {
                return false;
            }
            i += op.size();
            while (i < t.size() && t[i] == ' ') {
                ++i;
            }
        }
        const auto [ptr, ec] = std::from_chars(t.data() + i, t.data() + t.size(), v[k]);
        if (ec != std::errc() || ptr == t.data() + i) {
            return false;
        }
        i = std::size_t(ptr - t.data());
    }
    return true;
}

}  // namespace

bool recognizeBatchMismatch(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.text;
    LogEvent ev = logfmt::makeEvent(LogEventKind::BatchMismatch, "");
    std::size_t end = 0;
    if (double samples = 0, gbs = 0;
        logfmt::numberAfter(t, "Not enough samples ", samples, 0, &end) &&
        logfmt::numberAfter(t, "for global_batch_size ", gbs, end)) {
        ev.attrs["samples"] = logfmt::formatNumber(samples);
        ev.attrs["global_batch_size"] = logfmt::formatNumber(gbs);
        ev.attrs["summary"] = "batch mismatch: " + logfmt::formatNumber(samples) +
                              " samples for global_batch_size " + logfmt::formatNumber(gbs);
    } else if (const auto ds = logfmt::find(t, kDeepSpeedProduct);
               ds != std::string_view::npos &&
               logfmt::find(t, "Check batch related parameters") != std::string_view::npos) {
        double v[4] = {};
        if (!readProduct(t, ds + kDeepSpeedProduct.size(), v)) {
            return false;
        }
        ev.attrs["train_batch_size"] = logfmt::formatNumber(v[0]);
        ev.attrs["micro_batch_per_gpu"] = logfmt::formatNumber(v[1]);
        ev.attrs["gradient_acc_step"] = logfmt::formatNumber(v[2]);
        ev.attrs["world_size"] = logfmt::formatNumber(v[3]);
        ev.attrs["summary"] = "batch mismatch: train_batch_size " + logfmt::formatNumber(v[0]) +
                              " != micro_batch_per_gpu " + logfmt::formatNumber(v[1]) +
                              " x gradient_acc_step " + logfmt::formatNumber(v[2]) +
                              " x world_size " + logfmt::formatNumber(v[3]);
    } else if (const auto grpo = logfmt::find(t, "global train batch size (");
               grpo != std::string_view::npos) {
        double procs = 0, perDevice = 0, gens = 0;
        std::size_t x = 0;
        if (!logfmt::numberAfter(t, "global train batch size (", procs, grpo, &x) ||
            !logfmt::numberAfter(t, " x ", perDevice, x, &x) || x - grpo > 80 ||
            !logfmt::numberAfter(t, "number of generations per prompt (", gens, x)) {
            return false;
        }
        ev.attrs["processes"] = logfmt::formatNumber(procs);
        ev.attrs["per_device_batch_size"] = logfmt::formatNumber(perDevice);
        ev.attrs["global_batch_size"] = logfmt::formatNumber(procs * perDevice);
        ev.attrs["generations_per_prompt"] = logfmt::formatNumber(gens);
        ev.attrs["summary"] = "batch mismatch: global batch " + logfmt::formatNumber(procs) +
                              " x " + logfmt::formatNumber(perDevice) +
                              " not divisible by generations per prompt " +
                              logfmt::formatNumber(gens);
    } else {
        return false;
    }
    if (view.rank >= 0) {
        ev.attrs["rank"] = std::to_string(view.rank);
        ev.attrs["summary"] += " on rank " + std::to_string(view.rank);
    }
    ev.message = ev.attrs["summary"];
    out.events.push_back(std::move(ev));
    return true;
}

}  // namespace runplane::agent
