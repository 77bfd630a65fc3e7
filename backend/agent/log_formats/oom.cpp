// Out-of-memory deaths, with the numbers a person would quote.
//
// cuda_oom (PyTorch's allocator, c10/cuda/CUDACachingAllocator.cpp), two generations:
//   `CUDA out of memory. Tried to allocate 58.15 GiB. GPU 0 has a total capacity of 139.81 GiB of
//   which 47.69 GiB is free. ... Of the allocated memory 82.55 GiB is allocated by PyTorch, and
//   2.06 GiB is reserved by PyTorch but unallocated.` (also the old misspelling `capacty`), and
//   `CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 44.99 GiB total capacity; 6.15 GiB
//   already allocated; 37.32 GiB free; 6.15 GiB reserved in total by PyTorch)`.
//   attrs: gpu, tried, tried_bytes, capacity_bytes, free, free_bytes, allocated_bytes,
//   reserved_bytes (+ reserved_kind: total | unallocated), summary.
// ray_oom (Ray's memory monitor): `Task was killed due to the node running low on memory.`, its
//   detail line `Memory on the node (IP: 192.168.0.107, ...) where the task (..., name=X, pid=4331,
//   memory used=2.22GB) was running was 59.49GB / 62.58GB (0.950744), which exceeds the memory
//   usage threshold of 0.95.` (LogReader joins the two), and the raylet's `13 Workers (tasks /
//   actors) killed due to memory pressure (OOM)`. attrs: ip, node_used_gb, node_total_gb,
//   fraction, threshold, task_name, task_pid, task_memory_used_gb, workers_killed, summary.
// host_oom (the kernel's OOM killer, as the run's output shows it): the kernel line `Out of
//   memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB, file-rss:3028kB,
//   shmem-rss:0kB` (older kernels: a second line `Killed process 25635 (python) ...`), and the
//   shell's `Killed` / `Killed: 9` / `已杀死` (also `**Killed**`), bash's job report `script: line
//   28:  8156 Killed   python3 main.py` and Slurm's `Detected 1 oom-kill event(s) in StepId=...`.
//   attrs: pid, name, rss_bytes, anon_rss_bytes, source (kernel | shell | slurm), summary.
// Fixtures: tests/agent/fixtures/logs/{cuda_oom,ray_oom,slime_ray_oom,host_oom}_*.log.
#include <cmath>
#include <cstdlib>

#include "backend/agent/log_formats.h"

namespace runplane::agent {
namespace {

// The size printed right after `label`, as text and bytes.
bool sizeAfter(std::string_view text, std::string_view label, std::string& printed, double& bytes,
               std::size_t from = 0) {
    const auto p = logfmt::find(text, label, from);
    if (p == std::string_view::npos) {
        return false;
    }
    std::size_t i = p + label.size();
    std::size_t used = 0;
    if (!logfmt::parseSize(text.substr(i), bytes, &used)) {
        return false;
    }
    printed = std::string(text.substr(i, used));
    return true;
}

// The size printed right before `label` ("47.69 GiB is free": label " is free").
bool sizeBefore(std::string_view text, std::string_view label, std::string& printed,
                double& bytes) {
    const auto p = logfmt::find(text, label);
    if (p == std::string_view::npos || p == 0) {
        return false;
    }
    // Walk back over "<number> <unit>".
    std::size_t i = p;
    while (i > 0 && text[i - 1] != ' ' && text[i - 1] != ';' && text[i - 1] != '(') {
        --i;  // the unit
    }
    if (i > 0 && text[i - 1] == ' ') {
        --i;
    }
    while (i > 0 && ((text[i - 1] >= '0' && text[i - 1] <= '9') || text[i - 1] == '.')) {
        --i;
    }
    std::size_t used = 0;
    if (!logfmt::parseSize(text.substr(i, p - i), bytes, &used)) {
        return false;
    }
    printed = std::string(text.substr(i, used));
    return true;
}

std::string bytesText(double b) {
    return std::to_string(std::llround(b));  // whole bytes
}

std::string digitsAfter(std::string_view text, std::string_view label) {
    const auto p = logfmt::find(text, label);
    if (p == std::string_view::npos) {
        return "";
    }
    std::size_t i = p + label.size();
    std::size_t j = i;
    while (j < text.size() && j - i < 12 && text[j] >= '0' && text[j] <= '9') {
        ++j;
    }
    return std::string(text.substr(i, j - i));
}

// The text after `label` up to one of `stops`.
std::string textAfter(std::string_view text, std::string_view label, std::string_view stops,
                      std::size_t max = 128) {
    const auto p = logfmt::find(text, label);
    if (p == std::string_view::npos) {
        return "";
    }
    std::size_t i = p + label.size();
    std::size_t j = i;
    while (j < text.size() && j - i < max && stops.find(text[j]) == std::string_view::npos) {
        ++j;
    }
    return std::string(text.substr(i, j - i));
}

}  // namespace

bool recognizeCudaOom(const LineView& view, ParsedLogLine& out) {
    std::string_view t = view.text;
    auto at = logfmt::find(t, "CUDA out of memory");
    if (at == std::string_view::npos) {
        at = logfmt::find(t, "CUDA error: out of memory");
    }
    if (at == std::string_view::npos) {
        return false;
    }
    t = t.substr(at);  // the figures follow the words
    LogEvent ev = logfmt::makeEvent(LogEventKind::CudaOom, "");
    std::string tried;
    std::string freeText;
    std::string printed;
    double bytes = 0;
    if (sizeAfter(t, "Tried to allocate ", tried, bytes)) {
        ev.attrs["tried"] = tried;
        ev.attrs["tried_bytes"] = bytesText(bytes);
    }
    std::string gpu = digitsAfter(t, "GPU ");
    if (!gpu.empty()) {
        ev.attrs["gpu"] = gpu;
    }
    // New wording.
    if (sizeAfter(t, "has a total capacity of ", printed, bytes) ||
        sizeAfter(t, "has a total capacty of ", printed, bytes)) {
        ev.attrs["capacity"] = printed;
        ev.attrs["capacity_bytes"] = bytesText(bytes);
    }
    if (sizeAfter(t, " of which ", freeText, bytes)) {
        ev.attrs["free"] = freeText;
        ev.attrs["free_bytes"] = bytesText(bytes);
    }
    if (sizeAfter(t, "Of the allocated memory ", printed, bytes)) {
        ev.attrs["allocated_bytes"] = bytesText(bytes);
    }
    if (sizeBefore(t, " is reserved by PyTorch but unallocated", printed, bytes)) {
        ev.attrs["reserved"] = printed;
        ev.attrs["reserved_bytes"] = bytesText(bytes);
        ev.attrs["reserved_kind"] = "unallocated";
    }
    // Old wording: (GPU 0; 44.99 GiB total capacity; 6.15 GiB already allocated; 37.32 GiB free;
    // 6.15 GiB reserved in total by PyTorch).
    if (ev.attrs.count("capacity") == 0 && sizeBefore(t, " total capacity", printed, bytes)) {
        ev.attrs["capacity"] = printed;
        ev.attrs["capacity_bytes"] = bytesText(bytes);
    }
    if (ev.attrs.count("allocated_bytes") == 0 &&
        sizeBefore(t, " already allocated", printed, bytes)) {
        ev.attrs["allocated_bytes"] = bytesText(bytes);
    }
    if (ev.attrs.count("free") == 0 && sizeBefore(t, " free;", freeText, bytes)) {
        ev.attrs["free"] = freeText;
        ev.attrs["free_bytes"] = bytesText(bytes);
    }
    if (ev.attrs.count("reserved") == 0 &&
        sizeBefore(t, " reserved in total by PyTorch", printed, bytes)) {
        ev.attrs["reserved"] = printed;
        ev.attrs["reserved_bytes"] = bytesText(bytes);
        ev.attrs["reserved_kind"] = "total";
    }
    std::string summary = "CUDA OOM";
    if (!gpu.empty()) {
        summary += " on GPU " + gpu;
    }
    if (!tried.empty()) {
        summary += ": tried " + tried;
        if (!freeText.empty()) {
            summary += ", " + freeText + " free";
        }
    }
    ev.attrs["summary"] = summary;
    ev.message = summary;
    out.events.push_back(std::move(ev));
    return true;
}

bool recognizeRayOomTask(const LineView& view, ParsedLogLine& out) {
    if (logfmt::find(view.text, "Task was killed due to the node running low on memory") ==
        std::string_view::npos) {
        return false;
    }
    LogEvent ev =
        logfmt::makeEvent(LogEventKind::RayOom, "Ray OOM: task killed (node low on memory)");
    ev.attrs["what"] = "task_killed";
    if (!view.ip.empty()) {
        ev.attrs["ip"] = std::string(view.ip);
    }
    ev.attrs["summary"] = ev.message;
    out.events.push_back(std::move(ev));
    return true;
}

bool recognizeRayOomNode(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.text;
    if (logfmt::find(t, "Memory on the node (IP: ") == std::string_view::npos) {
        return false;
    }
    LogEvent ev = logfmt::makeEvent(LogEventKind::RayOom, "");
    ev.attrs["what"] = "task_killed";
    const std::string ip = textAfter(t, "(IP: ", ",) ");
    if (!ip.empty()) {
        ev.attrs["ip"] = ip;
    }
    const std::string name = textAfter(t, ", name=", ",)");
    if (!name.empty()) {
        ev.attrs["task_name"] = name;
    }
    const std::string pid = digitsAfter(t, ", pid=");
    if (!pid.empty()) {
        ev.attrs["task_pid"] = pid;
    }
    double v = 0;
    if (logfmt::numberAfter(t, "memory used=", v)) {
        ev.attrs["task_memory_used_gb"] = logfmt::formatNumber(v);
    }
    // "was running was 59.49GB / 62.58GB (0.950744), which exceeds ... threshold of 0.95."
    std::string summary = "Ray OOM";
    if (const auto w = logfmt::find(t, "was running was "); w != std::string_view::npos) {
        double used = 0;
        double total = 0;
        double fraction = 0;
        std::size_t end = 0;
        if (logfmt::numberAfter(t, "was running was ", used, w, &end) &&
            logfmt::numberAfter(t, "/ ", total, end, &end)) {
            ev.attrs["node_used_gb"] = logfmt::formatNumber(used);
            ev.attrs["node_total_gb"] = logfmt::formatNumber(total);
            summary += ": node " + logfmt::formatNumber(used) + " / " +
                       logfmt::formatNumber(total) + " GB";
            if (logfmt::numberAfter(t, "(", fraction, end)) {
                ev.attrs["fraction"] = logfmt::formatNumber(fraction);
            }
        }
        double threshold = 0;
        if (logfmt::numberAfter(t, "memory usage threshold of ", threshold, w)) {
            ev.attrs["threshold"] = logfmt::formatNumber(threshold);
        }
    }
    if (!ip.empty()) {
        summary += " on " + ip;
    }
    if (!name.empty()) {
        summary += ", killed " + name;
    }
    ev.attrs["summary"] = summary;
    ev.message = summary;
    out.events.push_back(std::move(ev));
    return true;
}

bool recognizeRayOomRaylet(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.text;
    const auto p = logfmt::find(t, " Workers (tasks / actors) killed due to memory pressure");
    if (p == std::string_view::npos) {
        // A terminal or syslog wrapped the message at a fixed width (vllm-project/vllm#1160):
        // `2 Workers (tasks /` ends the line, ` actors) killed ...` starts the next.
        const std::string_view trimmed = logfmt::trim(t);
        if (logfmt::find(trimmed, " Workers (tasks") != std::string_view::npos &&
            logfmt::find(trimmed, "killed") == std::string_view::npos) {
            out.incomplete = true;
        }
        return false;
    }
    // A wrapped message whose node `(ID: ..., IP: ...)` broke before the IP: the event as read so
    // far, and the record continues on the next line (read again, joined, with the IP).
    if (view.joined && logfmt::find(t, "(ID: ") != std::string_view::npos &&
        logfmt::find(t, "IP: ") == std::string_view::npos) {
        out.incomplete = true;
    }
    std::size_t i = p;
    while (i > 0 && t[i - 1] >= '0' && t[i - 1] <= '9') {
        --i;
    }
    const std::string workers(t.substr(i, p - i));
    LogEvent ev = logfmt::makeEvent(LogEventKind::RayOom, "");
    ev.attrs["what"] = "workers_killed";
    ev.attrs["workers_killed"] = workers;
    std::string ip = textAfter(t, "IP: ", ")", 64);
    if (ip.empty()) {
        ip = std::string(view.ip);
    }
    if (!ip.empty()) {
        ev.attrs["ip"] = ip;
    }
    std::string summary = "Ray OOM: " + workers + (workers == "1" ? " worker" : " workers") +
                          " killed for memory pressure";
    if (!ip.empty()) {
        summary += " on " + ip;
    }
    ev.attrs["summary"] = summary;
    ev.message = summary;
    out.events.push_back(std::move(ev));
    return true;
}

bool recognizeHostOomKernel(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.text;
    const auto p = logfmt::find(t, "Killed process ");
    if (p == std::string_view::npos) {
        return false;
    }
    const std::string pid = digitsAfter(t.substr(p), "Killed process ");
    if (pid.empty() || t.substr(p + 15 + pid.size()).rfind(" (", 0) != 0) {
        return false;
    }
    const std::string name = textAfter(t.substr(p), "(", ")", 64);
    LogEvent ev = logfmt::makeEvent(LogEventKind::HostOom, "");
    ev.attrs["source"] = "kernel";
    ev.attrs["pid"] = pid;
    ev.attrs["name"] = name;
    double rss = 0;
    bool anyRss = false;
    for (std::string_view label : {"anon-rss:", "file-rss:", "shmem-rss:"}) {
        double kb = 0;
        if (logfmt::numberAfter(t, label, kb, p)) {
            rss += kb * 1024.0;
            anyRss = true;
            if (label == "anon-rss:") {
                ev.attrs["anon_rss_bytes"] = logfmt::formatNumber(kb * 1024.0);
            }
        }
    }
    std::string summary = "host OOM: kernel killed pid " + pid + " (" + name;
    if (anyRss) {
        ev.attrs["rss_bytes"] = logfmt::formatNumber(rss);
        summary += ", " + logfmt::formatSize(rss) + " RSS";
    }
    summary += ")";
    ev.attrs["summary"] = summary;
    ev.message = summary;
    out.events.push_back(std::move(ev));
    return true;
}

bool recognizeHostOomShell(const LineView& view, ParsedLogLine& out) {
    std::string_view line = logfmt::trim(view.body);
    // Markdown bold kept inside a pasted code block (CharlesShang/FastMaskRCNN#172).
    if (line.size() > 4 && line.starts_with("**") && line.ends_with("**")) {
        line = logfmt::trim(line.substr(2, line.size() - 4));
    }
    if (line == "Killed" || line == "Killed: 9" || line == "已杀死") {
        LogEvent ev =
            logfmt::makeEvent(LogEventKind::HostOom,
                              "host OOM? a process was killed (SIGKILL): " + std::string(line));
        ev.attrs["source"] = "shell";
        ev.attrs["line"] = std::string(line);
        ev.attrs["summary"] = "killed by SIGKILL (host OOM?)";
        out.events.push_back(std::move(ev));
        return true;
    }
    // bash's job report of a child it lost to SIGKILL, with its pid and command:
    // `/var/spool/slurmd/job00191/slurm_script: line 28:  8156 Killed                  python3
    // main.py ...` (ArjunaCluster/ArjunaUsers#52).
    const auto k = logfmt::find(line, " Killed ");
    if (k == std::string_view::npos || k == 0) {
        return false;
    }
    std::size_t b = k;
    while (b > 0 && line[b - 1] >= '0' && line[b - 1] <= '9') {
        --b;
    }
    const std::string_view pid = line.substr(b, k - b);
    std::string_view before = logfmt::trim(line.substr(0, b));
    if (pid.empty() || pid.size() > 10 || !(before.empty() || before.ends_with(":"))) {
        return false;
    }
    if (!before.empty()) {  // `<script>: line <N>:`
        before.remove_suffix(1);
        const auto at = before.rfind(": line ");
        if (at == std::string_view::npos) {
            return false;
        }
        for (char c : before.substr(at + 7)) {
            if (c < '0' || c > '9') {
                return false;
            }
        }
    }
    std::string_view command = logfmt::trim(line.substr(k + 8));
    if (command.empty()) {
        return false;
    }
    std::string_view name = command.substr(0, command.find(' '));
    if (const auto slash = name.rfind('/'); slash != std::string_view::npos) {
        name.remove_prefix(slash + 1);
    }
    const std::string summary =
        "host OOM? pid " + std::string(pid) + " (" + std::string(name) + ") killed by SIGKILL";
    LogEvent ev = logfmt::makeEvent(LogEventKind::HostOom, summary);
    ev.attrs["source"] = "shell";
    ev.attrs["pid"] = std::string(pid);
    ev.attrs["name"] = std::string(name);
    ev.attrs["line"] = std::string(line.substr(0, 512));
    ev.attrs["summary"] = summary;
    out.events.push_back(std::move(ev));
    return true;
}

// Slurm's step daemon after the job's cgroup hit its memory limit, in the wordings of Slurm's
// versions: `slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of
// your processes may have been killed by the cgroup out-of-memory handler.` (ArjunaCluster/
// ArjunaUsers#52), `... Detected 1 oom-kill event(s) in step 3495064.0 cgroup.` (older, hafs-
// community/HAFS#101) and `... Detected 2 oom_kill events in StepId=JOBID.13. Some of the step
// tasks have been OOM Killed.` (newer, snakemake/snakemake-executor-plugin-slurm#371).
// attrs: source = slurm, oom_kill_events, slurm_step.
bool recognizeHostOomSlurm(const LineView& view, ParsedLogLine& out) {
    const std::string_view t = view.body;
    const auto d = logfmt::find(t, "Detected ");
    auto e = logfmt::find(t, " oom-kill event");
    if (e == std::string_view::npos) {
        e = logfmt::find(t, " oom_kill event");
    }
    if (d == std::string_view::npos || e == std::string_view::npos || e <= d + 9) {
        return false;
    }
    const std::string_view count = t.substr(d + 9, e - d - 9);
    if (count.empty() || count.size() > 9 ||
        count.find_first_not_of("0123456789") != std::string_view::npos) {
        return false;
    }
    std::string step = textAfter(t, "StepId=", " ", 64);
    if (step.empty()) {
        step = textAfter(t, " in step ", " ", 64);
    }
    while (!step.empty() && step.back() == '.') {  // the sentence's full stop after the step
        step.pop_back();
    }
    std::string summary = "host OOM: Slurm saw " + std::string(count) + " OOM kill" +
                          (count == "1" ? "" : "s") + " in the job's cgroup";
    if (!step.empty()) {
        summary += " (step " + step + ")";
    }
    LogEvent ev = logfmt::makeEvent(LogEventKind::HostOom, summary);
    ev.attrs["source"] = "slurm";
    ev.attrs["oom_kill_events"] = std::string(count);
    if (!step.empty()) {
        ev.attrs["slurm_step"] = step;
    }
    ev.attrs["summary"] = summary;
    out.events.push_back(std::move(ev));
    return true;
}

}  // namespace runplane::agent
