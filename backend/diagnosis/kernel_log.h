#pragma once
// The kernel log lines a diagnosis keeps (docs/diagnosis.md, "Kernel log"): GPU Xid errors, OOM
// kills and segfaults, read from /dev/kmsg (non-blocking; never waits for new records) or, where
// that is not readable, from `dmesg` text. One row per kind in kKernelLineRules.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace runplane::diagnosis {

struct KernelLine {
    double bootSeconds = 0;  // seconds since boot, as the kernel stamps the record
    std::string kind;        // "xid", "oom_kill", "segfault"
    std::string text;        // the message, cut at 512 bytes
    std::int64_t xid = -1;   // the Xid number for kind "xid"
    std::int64_t pid = 0;    // the process named by the line, when it names one
};

/// One rule: a line whose message contains `needle` is of `kind`.
struct KernelLineRule {
    const char* kind;
    const char* needle;
};
/// The rules, in the order they are tried.
const std::vector<KernelLineRule>& kernelLineRules();

/// The kind of one message (the text after the timestamp), with the Xid and pid it names;
/// nullopt for a line no rule keeps.
std::optional<KernelLine> classifyKernelMessage(std::string_view message);

struct KernelLogRead {
    std::string source;  // "/dev/kmsg" or "dmesg"
    std::vector<KernelLine> lines;
    std::size_t scanned = 0;  // records read
    bool truncated = false;   // more than maxLines matched: the newest are kept
};

/// Reads every record of `path` (normally /dev/kmsg) now in the buffer, keeping the lines a rule
/// matches with a timestamp >= sinceBootSeconds. Bounded: at most maxRecords records are read.
/// An error says why the file is unreadable (EPERM: "needs CAP_SYSLOG or
/// kernel.dmesg_restrict=0").
Result<KernelLogRead> readKmsg(const std::string& path, double sinceBootSeconds,
                               std::size_t maxLines = 200, std::size_t maxRecords = 200000);

/// The same over `dmesg` output ("[ 1234.567890] message" lines).
KernelLogRead filterDmesgText(std::string_view text, double sinceBootSeconds,
                              std::size_t maxLines = 200);

}  // namespace runplane::diagnosis
