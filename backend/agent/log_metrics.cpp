// The log-line classifier: a line's process prefixes are read once (LineView), one RE2::Set over
// every format's trigger picks the candidate rows of the table (log_formats.cpp), and only their
// recognizers run. LogReader adds what spans lines (joined records, Ray's two-line OOM message,
// a traceback's final exception).
#include "backend/agent/log_metrics.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "backend/agent/log_event_folds.h"
#include "backend/agent/log_formats.h"
#include "backend/agent/log_trigger_filter.h"

namespace runplane::agent {
namespace {

constexpr std::size_t kMaxLine = std::size_t(1) << 20;

// One RE2::Set over every row's trigger, built once (thread-safe static init; Match is const).
const RE2::Set& triggerSet() {
    static const std::unique_ptr<RE2::Set> set = [] {
        RE2::Options options;
        options.set_encoding(RE2::Options::EncodingLatin1);  // bytes: invalid UTF-8 is just text
        options.set_log_errors(false);
        options.set_max_mem(64 << 20);
        auto s = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
        for (const LogFormat& f : logFormats()) {
            std::string error;
            if (s->Add(f.trigger, &error) < 0) {
                std::abort();  // a bad trigger is a programming error (log_metrics_test covers it)
            }
        }
        if (!s->Compile()) {
            std::abort();
        }
        return s;
    }();
    return *set;
}

// Each row's trigger on its own (same options as the set): run only for the rows the literal
// pre-filter leaves, they give the set's answer for a fraction of its cost.
const std::vector<std::unique_ptr<RE2>>& triggerRes() {
    static const std::vector<std::unique_ptr<RE2>> res = [] {
        RE2::Options options;
        options.set_encoding(RE2::Options::EncodingLatin1);
        options.set_log_errors(false);
        std::vector<std::unique_ptr<RE2>> v;
        for (const LogFormat& f : logFormats()) {
            v.push_back(std::make_unique<RE2>(f.trigger, options));
            if (!v.back()->ok()) {
                std::abort();  // as triggerSet(): a programming error
            }
        }
        return v;
    }();
    return res;
}

// The literal pre-filter over the same triggers (log_trigger_filter.h).
const TriggerFilter& triggerFilter() {
    static const TriggerFilter filter = [] {
        std::vector<std::string_view> triggers;
        for (const LogFormat& f : logFormats()) {
            triggers.push_back(f.trigger);
        }
        return TriggerFilter(triggers);
    }();
    return filter;
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

// Removes ANSI colour codes: ESC[...<final>, and their remnants once the escape byte was lost
// (`[36m`, `[0m`, `[1;31m` as pasted text shows them).
std::string stripAnsi(std::string_view line) {
    std::string out;
    out.reserve(line.size());
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
            i += 2;
            while (i < line.size() && !(line[i] >= '@' && line[i] <= '~')) {
                ++i;
            }
            continue;
        }
        if (line[i] == '\x1b') {
            continue;
        }
        // syslog writes the escape byte as `#033` (vllm-project/vllm#1160): `#033[2m(raylet)`.
        if (line.compare(i, 5, "#033[") == 0) {
            std::size_t j = i + 5;
            while (j < line.size() && j - i <= 16 && (isDigit(line[j]) || line[j] == ';')) {
                ++j;
            }
            if (j < line.size() && line[j] == 'm') {
                i = j;
                continue;
            }
        }
        if (line[i] == '[' && i + 2 < line.size() && isDigit(line[i + 1])) {
            std::size_t j = i + 1;
            while (j < line.size() && j - i <= 8 && (isDigit(line[j]) || line[j] == ';')) {
                ++j;
            }
            if (j < line.size() && line[j] == 'm') {
                i = j;
                continue;
            }
        }
        out += line[i];
    }
    return out;
}

// syslog's `#033[` spelling of the escape byte (memchr first: most lines have no '#').
bool hasSyslogEscape(std::string_view head) {
    const char* p = head.data();
    const char* end = head.data() + head.size();
    while (p < end) {
        p = static_cast<const char*>(std::memchr(p, '#', static_cast<std::size_t>(end - p)));
        if (p == nullptr) {
            return false;
        }
        if (std::string_view(p, static_cast<std::size_t>(end - p)).starts_with("#033[")) {
            return true;
        }
        ++p;
    }
    return false;
}

bool hasAnsi(std::string_view line) {
    if (std::memchr(line.data(), '\x1b', line.size()) != nullptr) {
        return true;
    }
    // Remnants: Ray colours its prefix, `[36m(Actor pid=1)[0m ...`; looked for at the start only.
    const std::string_view head = line.substr(0, 256);
    return head.size() > 4 &&
           (hasSyslogEscape(head) || head.find("[0m") != std::string_view::npos ||
            (head[0] == '[' && isDigit(head[1]) && head.find("m(") != std::string_view::npos));
}

std::int64_t digitsValue(std::string_view s, std::size_t& i) {
    std::int64_t v = 0;
    const std::size_t start = i;
    while (i < s.size() && isDigit(s[i]) && i - start < 12) {
        v = v * 10 + (s[i] - '0');
        ++i;
    }
    return i == start ? -1 : v;
}

// Quote markers of pasted text: `> ` of a mail or markdown quote, a code span's backtick.
void stripQuoteMarkers(std::string_view& body) {
    while (body.starts_with("> ") || body.starts_with("`")) {
        body.remove_prefix(body.front() == '`' ? 1 : 2);
    }
}

bool digitsAt(std::string_view s, std::size_t at, std::size_t n) {
    if (at + n > s.size()) {
        return false;
    }
    for (std::size_t k = at; k < at + n; ++k) {
        if (!isDigit(s[k])) {
            return false;
        }
    }
    return true;
}

// A time stamp that a log collector put before the line: docker's / Kubernetes' RFC 3339
// `2026-05-12T08:01:39.331095044Z ` (tenstorrent/tt-inference-server#3359) or syslog's and CI
// consoles' `Oct 16 02:07:00 ` (pytorch/pytorch#12744). Returns its length with the one space
// after it, or 0.
std::size_t collectorTimestamp(std::string_view s) {
    if (digitsAt(s, 0, 4) && s.size() > 20 && s[4] == '-' && digitsAt(s, 5, 2) && s[7] == '-' &&
        digitsAt(s, 8, 2) && s[10] == 'T' && digitsAt(s, 11, 2) && s[13] == ':' &&
        digitsAt(s, 14, 2) && s[16] == ':' && digitsAt(s, 17, 2)) {
        std::size_t i = 19;
        if (i < s.size() && s[i] == '.') {
            ++i;
            while (i < s.size() && isDigit(s[i]) && i < 32) {
                ++i;
            }
        }
        if (i < s.size() && s[i] == 'Z') {
            ++i;
        } else if (i + 6 <= s.size() && (s[i] == '+' || s[i] == '-') && digitsAt(s, i + 1, 2) &&
                   s[i + 3] == ':' && digitsAt(s, i + 4, 2)) {
            i += 6;
        }
        return i < s.size() && s[i] == ' ' ? i + 1 : 0;
    }
    if (s.size() <= 16 || s[3] != ' ' || s[9] != ':') {
        return 0;
    }
    static constexpr std::string_view kMonths[] = {"Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ",
                                                   "Jul ", "Aug ", "Sep ", "Oct ", "Nov ", "Dec "};
    for (std::string_view m : kMonths) {
        if (s.starts_with(m) && s.size() > 16 && (s[4] == ' ' || isDigit(s[4])) && isDigit(s[5]) &&
            s[6] == ' ' && digitsAt(s, 7, 2) && s[9] == ':' && digitsAt(s, 10, 2) && s[12] == ':' &&
            digitsAt(s, 13, 2) && s[15] == ' ') {
            return 16;
        }
    }
    return 0;
}

// Reads the process prefixes of `line` into `view` (text must outlive the view).
void prepareView(std::string_view text, LineView& view) {
    view.text = text;
    std::string_view body = text;  // a line's own indentation stays (traceback frames)
    std::string_view lead = text;
    while (!lead.empty() && (lead.front() == ' ' || lead.front() == '\t')) {
        lead.remove_prefix(1);
    }
    if (const std::size_t ts = collectorTimestamp(lead); ts > 0) {
        body = lead.substr(ts);  // the line after the collector's stamp, its indentation kept
        lead = body;
        while (!lead.empty() && (lead.front() == ' ' || lead.front() == '\t')) {
            lead.remove_prefix(1);
        }
    }
    if (lead.starts_with("> ") || lead.starts_with("`") || lead.starts_with("(") ||
        lead.starts_with("[rank")) {
        stripQuoteMarkers(lead);
        body = lead;
    }
    // Ray: `(ActorClass pid=123) `, `(ActorClass pid=123, ip=10.0.0.1) `, `(raylet) `,
    // `(raylet, ip=...) `; nested ones (`(Worker pid=1) (Worker_TP0 pid=1) `) too.
    for (int n = 0; n < 3 && !body.empty() && body.front() == '('; ++n) {
        const auto close = body.find(')');
        if (close == std::string_view::npos || close > 200) {
            break;
        }
        const std::string_view inside = body.substr(1, close - 1);
        const auto pidAt = inside.find("pid=");
        const bool raylet = inside.starts_with("raylet");
        if (pidAt == std::string_view::npos && !raylet) {
            break;
        }
        const auto sp = inside.find_first_of(" ,");
        view.actor = inside.substr(0, sp);
        if (pidAt != std::string_view::npos) {
            std::size_t i = pidAt + 4;
            view.pid = digitsValue(inside, i);
        }
        if (const auto ipAt = inside.find("ip="); ipAt != std::string_view::npos) {
            const auto end = inside.find_first_of(", ", ipAt);
            view.ip = inside.substr(ipAt + 3, end == std::string_view::npos ? end : end - ipAt - 3);
        }
        body.remove_prefix(close + 1);
        if (!body.empty() && body.front() == ' ') {
            body.remove_prefix(1);  // exactly one: the line's own indentation stays
        }
    }
    // torchrun: `[rank3]: ` (and `[rank3]:[E1206 ...`).
    if (body.starts_with("[rank")) {
        std::size_t i = 5;
        const std::int64_t rank = digitsValue(body, i);
        if (rank >= 0 && i + 1 < body.size() && body[i] == ']' && body[i + 1] == ':') {
            view.rank = rank;
            body.remove_prefix(i + 2);
            if (!body.empty() && body.front() == ' ') {
                body.remove_prefix(1);
            }
        }
    }
    view.body = body;
}

void classify(const LineView& view, ParsedLogLine& out) {
    if (view.text.size() > kMaxLine) {
        out.warning = "line longer than 1 MiB ignored";
        return;
    }
    thread_local std::vector<int> hits;
    hits.clear();
    std::string_view body = view.body;
    while (!body.empty() && (body.back() == ' ' || body.back() == '\r' || body.back() == '\t')) {
        body.remove_suffix(1);
    }
    std::string_view lead = body;
    while (!lead.empty() && (lead.front() == ' ' || lead.front() == '\t')) {
        lead.remove_prefix(1);
    }
    // The rows whose trigger matches: the literal pre-filter names the rows that may (a row
    // whose text is not in the line cannot), each of those is tried on its own; where the
    // filter cannot read the triggers, the one set over all of them.
    const TriggerFilter& filter = triggerFilter();
    if (filter.usable()) {
        const TriggerRows found = filter.match(lead);
        std::uint64_t rows = found.maybe;
        const auto& res = triggerRes();
        while (rows != 0) {
            const int row = __builtin_ctzll(rows);
            rows &= rows - 1;
            if (((found.sure >> row) & 1u) != 0 ||
                RE2::PartialMatch(lead, *res[static_cast<std::size_t>(row)])) {
                hits.push_back(row);
            }
        }
        if (hits.empty()) {
            return;
        }
    } else if (!triggerSet().Match(lead, &hits)) {
        return;
    }
    std::sort(hits.begin(), hits.end());
    const auto& formats = logFormats();
    bool recordRead = false;
    for (int i : hits) {
        const LogFormat& f = formats[static_cast<std::size_t>(i)];
        if (!f.alsoOthers && recordRead) {
            continue;
        }
        if (f.recognize(view, out) && !f.alsoOthers) {
            recordRead = true;
        }
    }
}

ParsedLogLine classifyRaw(std::string_view raw, bool joined, LineView* viewOut = nullptr,
                          std::string* storage = nullptr) {
    std::string local;
    std::string& text = storage != nullptr ? *storage : local;
    std::string_view line = raw;
    if (hasAnsi(line)) {
        text = stripAnsi(line);
        line = text;
    }
    LineView view;
    prepareView(line, view);
    view.joined = joined;
    ParsedLogLine out;
    classify(view, out);
    if (viewOut != nullptr) {
        *viewOut = view;
    }
    return out;
}

void merge(ParsedLogLine& into, ParsedLogLine&& from) {
    if (into.metrics.empty()) {
        into.metrics = std::move(from.metrics);
    } else {
        for (auto& m : from.metrics) {
            into.metrics.push_back(std::move(m));
        }
    }
    if (into.events.empty()) {
        into.events = std::move(from.events);
    } else {
        for (auto& e : from.events) {
            into.events.push_back(std::move(e));
        }
    }
    into.progress = into.progress || from.progress;
    if (!from.warning.empty()) {
        into.warning = std::move(from.warning);
    }
}

// `RuntimeError: ...`, `torch.OutOfMemoryError: ...`, `ray.exceptions.RayTaskError(ValueError):
// ...`, `KeyboardInterrupt`: the exception line that ends a traceback.
std::string exceptionName(std::string_view body) {
    std::size_t i = 0;
    auto identChar = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || c == '_' ||
               c == '.';
    };
    if (body.empty() || !((body[0] >= 'a' && body[0] <= 'z') ||
                          (body[0] >= 'A' && body[0] <= 'Z') || body[0] == '_')) {
        return "";
    }
    while (i < body.size() && identChar(body[i]) && i < 160) {
        ++i;
    }
    std::string_view name = body.substr(0, i);
    if (i < body.size() && body[i] == '(') {
        const auto close = body.find(')', i);
        if (close == std::string_view::npos || close > i + 80) {
            return "";
        }
        i = close + 1;
    }
    if (i < body.size() && body[i] != ':') {
        return "";
    }
    const auto dot = name.rfind('.');
    const std::string_view leaf = dot == std::string_view::npos ? name : name.substr(dot + 1);
    for (std::string_view suffix :
         {"Error", "Exception", "Interrupt", "Exit", "Failure", "Timeout", "Killed"}) {
        if (leaf.ends_with(suffix)) {
            return std::string(body.substr(0, i));
        }
    }
    return "";
}

}  // namespace

std::string phaseForTimer(std::string_view timer) {
    if (timer == "update_weights" || timer == "update_weights_implementation" ||
        timer == "weight_sync") {
        return "weight_sync";
    }
    if (timer == "actor_train" || timer == "train" || timer == "critic_train") {
        return "train";
    }
    if (timer == "generate" || timer == "rollout" || timer == "rollout_generate") {
        return "rollout";
    }
    if (timer == "eval" || timer == "eval_rollout") {
        return "eval";
    }
    if (timer == "load" || timer == "load_checkpoint" || timer == "wake_up") {
        return "load";
    }
    return "";
}

ParsedLogLine parseLogLine(std::string_view rawLine) {
    return classifyRaw(rawLine, false);
}

void LogReader::releaseHeld(ParsedLogLine& out) {
    if (m_heldLines >= 0) {
        out.events.push_back(std::move(m_heldRayOom));
        m_heldRayOom = LogEvent{};
        m_heldLines = -1;
    }
}

ParsedLogLine LogReader::feed(std::string_view line) {
    ParsedLogLine out;
    std::string storage;
    LineView view;
    ParsedLogLine cur = classifyRaw(line, false, &view, &storage);
    if (!m_pending.empty()) {
        // A continuation has no process prefix of its own and starts no record of its own.
        const bool continuation = view.actor.empty() && view.rank < 0 && !cur.progress &&
                                  cur.events.empty() &&
                                  m_pending.size() + line.size() <= kMaxJoinBytes;
        if (continuation) {
            m_pending.append(line);
            ParsedLogLine joined = classifyRaw(m_pending, true);
            if (joined.incomplete && m_pendingKind < 4) {
                ++m_pendingKind;
                out.progress = true;
                return out;
            }
            m_pending.clear();
            m_pendingKind = 0;
            merge(out, std::move(joined));
            out.incomplete = false;
            return out;
        }
        merge(out, classifyRaw(m_pending, true));
        m_pending.clear();
        m_pendingKind = 0;
    }
    if (cur.incomplete && line.size() <= kMaxJoinBytes) {
        m_pending.assign(line);
        m_pendingKind = 1;
        out.progress = true;
        return out;
    }
    merge(out, std::move(cur));

    // Ray's memory monitor prints the kill, then the node's figures on the next line(s).
    bool detail = false;
    // An earlier kill that never got its details is released after the walk: appending to
    // out.events inside it would invalidate `it` (a use-after-free fuzz_log_line found).
    std::vector<LogEvent> released;
    for (auto it = out.events.begin(); it != out.events.end();) {
        if (it->kind == LogEventKind::RayOom && it->attrs["what"] == "task_killed" &&
            it->attrs.count("node_used_gb") == 0 && it->attrs.count("task_name") == 0 &&
            it->message.starts_with("Ray OOM: task killed")) {
            if (m_heldLines >= 0) {
                released.push_back(std::move(m_heldRayOom));
            }
            m_heldRayOom = std::move(*it);
            m_heldLines = 3;
            it = out.events.erase(it);
            continue;
        }
        if (it->kind == LogEventKind::RayOom && it->attrs["what"] == "task_killed") {
            detail = true;
        }
        ++it;
    }
    for (auto& e : released) {
        out.events.push_back(std::move(e));
    }
    if (detail && m_heldLines >= 0) {
        m_heldLines = -1;  // the detail line's event says it all
        m_heldRayOom = LogEvent{};
    } else if (m_heldLines > 0 && !logfmt::trim(view.body).empty() &&
               logfmt::find(view.body, "Task was killed") == std::string_view::npos) {
        if (--m_heldLines == 0) {
            releaseHeld(out);
        }
    }

    // The raylet breaks its message over lines: the first carries `(raylet, ip=...)`.
    for (auto& ev : out.events) {
        if (ev.kind == LogEventKind::RayOom && ev.attrs.count("ip") == 0 && m_prevRaylet &&
            !m_rayletIp.empty()) {
            ev.attrs["ip"] = m_rayletIp;
            ev.attrs["summary"] += " on " + m_rayletIp;
            ev.message = ev.attrs["summary"];
        }
    }
    m_prevRaylet = view.actor == "raylet";
    m_rayletIp = m_prevRaylet ? std::string(view.ip) : std::string();

    // Tracebacks: the first unindented line after the frames, from the same process, that names
    // an exception, is the crash.
    auto keyOf = [&view] {
        return std::string(view.actor) + ":" + std::to_string(view.pid) + ":" +
               std::to_string(view.rank);
    };

    // One NCCL failure told on two lines in a row by the same process with the same result code
    // (`DistBackendError: NCCL error in: ..., unhandled cuda error` then `ncclUnhandledCudaError:
    // Call to CUDA function failed.`, pytorch/pytorch#170045) is one event.
    std::string ncclSig;
    for (auto it = out.events.begin(); it != out.events.end();) {
        if (it->kind == LogEventKind::NcclError && it->attrs.count("code") != 0) {
            const std::string sig = it->attrs["code"] + ":" + it->attrs["rank"] + ":" + keyOf();
            if (sig == m_prevNcclError || sig == ncclSig) {
                it = out.events.erase(it);
                continue;
            }
            ncclSig = sig;
        }
        ++it;
    }
    m_prevNcclError = ncclSig;
    const std::string_view body = view.body;
    const bool indented = !body.empty() && (body.front() == ' ' || body.front() == '\t');
    // Python 3.11+ marks the failing expression of a frame with a line of `~` and `^` only: a
    // traceback's frame even when the paste starts below its `Traceback` line.
    auto caretsOnly = [](std::string_view t) {
        t = logfmt::trim(t);
        return !t.empty() && t.find_first_not_of("~^") == std::string_view::npos;
    };
    // Ray's head line of a failed task, `ray.exceptions.RayTaskError(RuntimeError): ray::
    // MegatronTrainRayActor.train() (pid=..., ip=...)`, is printed above the task's own frames:
    // it names the failure even when no frames come before it (THUDM/slime#795).
    const bool rayTaskHead = !indented && body.starts_with("ray.exceptions.RayTaskError") &&
                             logfmt::find(body, "ray::") != std::string_view::npos;
    if (body.starts_with("Traceback (most recent call last)") ||
        (indented && (logfmt::trim(body).starts_with("File \"") || caretsOnly(body)))) {
        m_inTraceback = true;
        m_tracebackActor.assign(view.actor);  // no allocation per frame line (keyOf() made one)
        m_tracebackPid = view.pid;
        m_tracebackRank = view.rank;
    } else if (((m_inTraceback && view.actor == m_tracebackActor && view.pid == m_tracebackPid &&
                 view.rank == m_tracebackRank) ||
                rayTaskHead) &&
               !indented && !body.starts_with("^") && !logfmt::trim(body).empty()) {
        m_inTraceback = false;
        const std::string name = exceptionName(body);
        if (!name.empty()) {
            const std::string text(logfmt::trim(body.substr(0, 1024)));
            LogEvent ev = logfmt::makeEvent(LogEventKind::Crash, text);
            ev.attrs["exception"] = name;
            ev.attrs["summary"] = text.size() > 200 ? text.substr(0, 200) + "…" : text;
            if (view.pid >= 0) {
                ev.attrs["pid"] = std::to_string(view.pid);
            }
            if (!view.actor.empty()) {
                ev.attrs["actor"] = std::string(view.actor);
            }
            if (view.rank >= 0) {
                ev.attrs["rank"] = std::to_string(view.rank);
            }
            out.events.push_back(std::move(ev));
        }
    }
    if (!out.events.empty() || m_foldRow >= 0) {  // most lines: nothing to fold, nothing held
        foldRestatements(out, logfmt::trim(body).empty());
    }
    return out;
}

// A first telling of a failure (a row's `first`) is held; a restatement within its window is
// folded into it and the one event goes out; else it goes out as it was when the window ends.
void LogReader::foldRestatements(ParsedLogLine& out, bool blank) {
    const auto& folds = eventFolds();
    const bool heldBefore = m_foldRow >= 0;
    if (!heldBefore && std::none_of(out.events.begin(), out.events.end(), [&](const LogEvent& e) {
            return std::any_of(folds.begin(), folds.end(),
                               [&](const EventFold& f) { return f.first(e); });
        })) {
        return;  // nothing held, no first telling: the events go out as they are
    }
    bool folded = false;
    bool heldNow = false;  // a first telling held on this line: its window starts after it
    std::vector<LogEvent> kept;
    auto release = [&] {
        kept.push_back(std::move(m_foldHeld));
        m_foldHeld = LogEvent{};
        m_foldRow = -1;
    };
    for (auto& e : out.events) {
        if (m_foldRow >= 0 && folds[static_cast<std::size_t>(m_foldRow)].restates(m_foldHeld, e)) {
            folds[static_cast<std::size_t>(m_foldRow)].fold(m_foldHeld, e);
            release();
            folded = true;
            continue;
        }
        if (m_foldRow >= 0 && e.kind == m_foldHeld.kind) {
            release();  // another failure of its kind, not the same told again: in order
        }
        int row = -1;
        for (std::size_t r = 0; r < folds.size() && row < 0; ++r) {
            if (folds[r].first(e)) {
                row = static_cast<int>(r);
            }
        }
        if (row < 0) {
            kept.push_back(std::move(e));
            continue;
        }
        if (m_foldRow >= 0) {
            release();  // a new first telling: the earlier one goes out as it was
        }
        m_foldHeld = std::move(e);
        m_foldRow = row;
        m_foldLeft = folds[static_cast<std::size_t>(row)].window;
        heldNow = true;
    }
    if (heldBefore && !folded && !heldNow && m_foldRow >= 0 && !blank && --m_foldLeft <= 0) {
        release();
    }
    out.events = std::move(kept);
}

ParsedLogLine LogReader::finish() {
    ParsedLogLine out;
    if (!m_pending.empty()) {
        merge(out, classifyRaw(m_pending, true));
        m_pending.clear();
        m_pendingKind = 0;
    }
    releaseHeld(out);
    if (m_foldRow >= 0) {
        out.events.push_back(std::move(m_foldHeld));
        m_foldHeld = LogEvent{};
        m_foldRow = -1;
    }
    m_inTraceback = false;
    return out;
}

}  // namespace runplane::agent
