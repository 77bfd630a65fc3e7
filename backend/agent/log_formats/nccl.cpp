// NCCL failures in every spelling people paste: NCCL's own result names (`ncclSystemError`, ...),
// PyTorch's `RuntimeError: NCCL Error 2: unhandled system error`, `NCCL error in: <file>:<line>,
// unhandled system error`, `NCCL error: internal error`, `ncclCommInitRank failed`, the watchdog's
// `Watchdog caught collective operation timeout`, `NCCL communicator was aborted`, a socket's `Bad
// address`; other `NCCL WARN` lines are warnings. attrs: match, code (NCCL's result number where
// printed), rank (torchrun's `[rankN]:` prefix or `[Rank N]`). Fixtures: .../logs/nccl_*.log.
#include <array>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

// Substrings that mark an NCCL error (as opposed to a warning), most specific first.
constexpr std::array<std::string_view, 15> kErrorMarks = {
    "ncclSystemError",
    "ncclInternalError",
    "ncclUnhandledCudaError",
    "ncclInvalidUsage",
    "ncclRemoteError",
    "ncclInvalidArgument",
    "NCCL Error ",
    "NCCL error in:",
    "NCCL error:",
    "ncclCommInitRank failed",
    "Bad address",
    "Watchdog caught collective operation timeout",
    "NCCL communicator was aborted",
    "DistBackendError: NCCL",
    "NCCL timeout"};

// NCCL's ncclResult_t numbers (nccl.h).
std::string codeOf(std::string_view mark, std::string_view line) {
    if (mark == "NCCL Error ") {
        const auto p = logfmt::find(line, mark);
        std::size_t i = p + mark.size();
        std::size_t j = i;
        while (j < line.size() && j - i < 3 && line[j] >= '0' && line[j] <= '9') {
            ++j;
        }
        return std::string(line.substr(i, j - i));
    }
    if (mark == "ncclSystemError" ||
        logfmt::find(line, "unhandled system error") != std::string_view::npos) {
        return "2";
    }
    if (mark == "ncclUnhandledCudaError" ||
        logfmt::find(line, "unhandled cuda error") != std::string_view::npos) {
        return "1";
    }
    if (mark == "ncclInternalError" ||
        logfmt::find(line, "internal error") != std::string_view::npos) {
        return "3";
    }
    if (mark == "ncclInvalidArgument") {
        return "4";
    }
    if (mark == "ncclInvalidUsage") {
        return "5";
    }
    if (mark == "ncclRemoteError" ||
        logfmt::find(line, "remote process exited") != std::string_view::npos) {
        return "6";
    }
    return "";
}

std::string rankOf(const LineView& view) {
    if (view.rank >= 0) {
        return std::to_string(view.rank);
    }
    const std::string_view text = view.text;
    if (const auto p = logfmt::find(text, "[Rank "); p != std::string_view::npos) {
        std::size_t i = p + 6;
        std::size_t j = i;
        while (j < text.size() && j - i < 6 && text[j] >= '0' && text[j] <= '9') {
            ++j;
        }
        if (j > i) {
            return std::string(text.substr(i, j - i));
        }
    }
    return "";
}

}  // namespace

bool recognizeNccl(const LineView& view, ParsedLogLine& out) {
    const std::string_view line = view.text;
    for (auto mark : kErrorMarks) {
        if (logfmt::find(line, mark) == std::string_view::npos) {
            continue;
        }
        LogEvent ev = logfmt::makeEvent(LogEventKind::NcclError,
                                        std::string(logfmt::trim(line.substr(0, 1024))));
        ev.attrs["match"] = std::string(logfmt::trim(mark));
        const std::string code = codeOf(mark, line);
        const std::string rank = rankOf(view);
        std::string summary = "NCCL error";
        if (!code.empty()) {
            ev.attrs["code"] = code;
            summary += " " + code;
        } else if (logfmt::find(mark, "Watchdog") != std::string_view::npos) {
            summary = "NCCL watchdog timeout";
        }
        if (!rank.empty()) {
            ev.attrs["rank"] = rank;
            summary += " on rank " + rank;
        }
        ev.attrs["summary"] = summary;
        out.events.push_back(std::move(ev));
        return true;
    }
    if (logfmt::find(line, "NCCL WARN") != std::string_view::npos) {
        LogEvent ev = logfmt::makeEvent(LogEventKind::NcclWarning,
                                        std::string(logfmt::trim(line.substr(0, 1024))));
        ev.attrs["match"] = "NCCL WARN";
        out.events.push_back(std::move(ev));
        return true;
    }
    return false;
}

}  // namespace runplane::agent
