// A run's diagnosis as one .tar.gz (diagnosis_archive.h, docs/diagnosis.md "Export").
#include "backend/control/diagnosis_archive.h"

#include <archive.h>
#include <archive_entry.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "backend/diagnosis/diagnosis.h"
#include "db/history/history.h"

namespace runplane::control {

namespace dx = runplane::diagnosis;
using nlohmann::json;

namespace {

// What each file of the archive is (README.txt); a path ending in '/' is a folder of such files.
// A row is listed in the README when the archive has a file under it.
struct FileDoc {
    const char* path;
    const char* what;
};
const std::vector<FileDoc>& fileDocs() {
    static const std::vector<FileDoc> docs = {
        {"README.txt", "this file"},
        {"verdict.txt",
         "the diagnosis as `runplanectl diagnose RUN --stored` prints it: the one-line verdict "
         "first, the findings, the stack groups, then per node what was collected or why not"},
        {"diagnosis.json",
         "the whole stored document (format runplane.diagnosis.v1, docs/diagnosis.md \"Format "
         "and storage\")"},
        {"diagnoses.txt",
         "every diagnosis the history keeps of the run: id, time, trigger, verdict"},
        {"run.json",
         "the run as the history records it: id, name, state, start and end, nodes, last status "
         "message, provenance (argv, environment names, versions)"},
        {"run-missing.txt", "why the run's record, recipe, events and output are not here"},
        {"recipe.yaml", "the recipe the run was submitted with, as submitted"},
        {"events.txt", "the run's last events in the history (time UTC, node, kind, message)"},
        {"logs/stdout.tail.txt",
         "the last lines of the run's stdout as the controller stored it (a line marks bytes "
         "that were never stored)"},
        {"logs/stderr.tail.txt", "the same for stderr"},
        {"nodes/", "one folder per node, NN-HOST (NN its place in the diagnosis):"},
        {"nodes/*/node.json", "  everything that node's daemon collected, as stored"},
        {"nodes/*/stacks.txt",
         "  py-spy's Python stacks of each of the run's processes on the node (innermost frame "
         "first), or why there are none"},
        {"nodes/*/ras.txt",
         "  NCCL's RAS report read on the node's loopback: per communicator its ranks, their "
         "status and collective counts, and the missing ranks; or why it is missing"},
        {"nodes/*/ras.json", "  the same report as JSON"},
        {"nodes/*/kernel.log",
         "  kernel log lines of the run's window that matter (Xid, OOM kill, segfault, GPU lost)"},
        {"nodes/*/gpus.json", "  NVML's view of the node's GPUs, or why it is missing"},
        {"nodes/*/output.tail.txt", "  the last lines of the run's output the daemon had on disk"},
    };
    return docs;
}

std::string utcTime(std::int64_t unixNs) {
    const std::time_t t = static_cast<std::time_t>(unixNs / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>((unixNs / 1'000'000) % 1000));
    return buf;
}

std::string safeName(const std::string& text, std::size_t maxChars = 64) {
    std::string out;
    for (char c : text) {
        if (out.size() >= maxChars) {
            break;
        }
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        out += ok ? c : '_';
    }
    if (out.empty() || out == "." || out == "..") {
        out = "_" + out;
    }
    return out;
}

std::string stacksText(const dx::NodeDiagnosis& n) {
    std::ostringstream out;
    if (!n.stackTool.empty()) {
        out << "tool: " << n.stackTool << " (" << n.stackToolSource << ": " << n.stackToolPath
            << ")" << (n.nativeFrames ? ", native frames" : "") << "\n";
    }
    if (!n.stacksMissing.empty()) {
        out << "missing: " << n.stacksMissing << "\n";
    }
    std::map<std::int64_t, const dx::ProcessInfo*> info;
    for (const auto& p : n.processes) {
        info[p.pid] = &p;
    }
    for (const auto& s : n.stacks) {
        out << "\npid " << s.pid;
        if (auto it = info.find(s.pid); it != info.end()) {
            if (it->second->rank >= 0) {
                out << " (rank " << it->second->rank << ")";
            }
            out << ": " << it->second->cmdline;
        }
        out << "\n";
        if (!s.error.empty()) {
            out << "  no stack: " << s.error << "\n";
        }
        for (const auto& t : s.threads) {
            out << "  thread " << t.threadId << " " << t.threadName
                << (t.active ? " (active)" : " (idle)") << (t.ownsGil ? " holds the GIL" : "")
                << "\n";
            for (const auto& f : t.frames) {
                out << "    " << f.name << " (" << f.file << ":" << f.line << ")\n";
            }
        }
    }
    if (n.stacks.empty() && n.stacksMissing.empty()) {
        out << "no Python process of the run on this node\n";
    }
    return out.str();
}

std::string rasText(const dx::NodeDiagnosis& n) {
    std::ostringstream out;
    if (!n.rasAvailable) {
        out << "missing: " << (n.rasMissing.empty() ? "not collected" : n.rasMissing) << "\n";
        return out.str();
    }
    const auto& r = n.ras;
    out << "endpoint " << n.rasEndpoint << ", " << n.rasMs << " ms; NCCL " << r.ncclVersion << ", "
        << r.communicatorsCount << " communicators\n";
    for (const auto& c : r.communicators) {
        out << "\ncommunicator " << c.hash << ": size " << c.size << ", " << c.ranksCount
            << " ranks seen, " << c.missingRanksCount << " missing\n";
        for (const auto& k : c.ranks) {
            out << "  rank " << k.rank << "  host " << k.host << "  pid " << k.pid << "  cuda "
                << k.cudaDev << "  init " << k.status.initState << "  async_error "
                << k.status.asyncError << (k.status.abortFlag ? "  ABORTED" : "")
                << (k.status.finalizeCalled ? "  finalized" : "") << " ";
            for (const auto& [kind, count] : k.collectiveCounts) {
                out << " " << kind << "=" << count;
            }
            out << "\n";
        }
        for (const auto& m : c.missingRanks) {
            out << "  MISSING rank " << m.rank << "  host " << m.host << "  pid " << m.pid
                << (m.unresponsive ? "  unresponsive" : "")
                << (m.consideredDead ? "  considered dead" : "") << "\n";
        }
    }
    return out.str();
}

std::string kernelText(const dx::NodeDiagnosis& n) {
    std::ostringstream out;
    out << "source: " << (n.kernelLogSource.empty() ? "-" : n.kernelLogSource) << "\n";
    if (!n.kernelLogMissing.empty()) {
        out << "missing: " << n.kernelLogMissing << "\n";
    }
    if (n.kernelLogTruncated) {
        out << "(older lines of the window were dropped: the newest are kept)\n";
    }
    if (n.kernelLines.empty() && n.kernelLogMissing.empty()) {
        out << "no Xid, OOM kill, segfault or GPU-lost line in the run's window\n";
    }
    for (const auto& k : n.kernelLines) {
        char stamp[48];
        std::snprintf(stamp, sizeof stamp, "[%12.6f]", k.bootSeconds);
        out << stamp << " " << k.kind << ": " << k.text << "\n";
    }
    return out.str();
}

std::string outputText(const dx::NodeDiagnosis& n) {
    std::ostringstream out;
    if (!n.outputMissing.empty()) {
        out << "missing: " << n.outputMissing << "\n";
    }
    out << "== stdout (last " << n.stdoutTail.size() << " lines) ==\n";
    for (const auto& l : n.stdoutTail) {
        out << l << "\n";
    }
    out << "== stderr (last " << n.stderrTail.size() << " lines) ==\n";
    for (const auto& l : n.stderrTail) {
        out << l << "\n";
    }
    return out.str();
}

// The last `lines` lines of text, at most maxBytes (cut at a line start).
std::string lastLines(const std::string& text, std::size_t lines, std::size_t maxBytes) {
    std::size_t start = text.size();
    std::size_t seen = 0;
    std::size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') {
        --pos;
    }
    while (pos > 0 && seen < lines) {
        const auto nl = text.rfind('\n', pos - 1);
        start = nl == std::string::npos ? 0 : nl + 1;
        ++seen;
        if (nl == std::string::npos) {
            break;
        }
        pos = nl;
    }
    if (text.size() - start > maxBytes) {
        start = text.size() - maxBytes;
        const auto nl = text.find('\n', start);
        start = nl == std::string::npos ? start : nl + 1;
    }
    return text.substr(start);
}

// The history's part: run record, recipe, events, output tails, the diagnoses listing.
void addHistoryFiles(db::History& h, const DiagnosisArchiveSource& source,
                     std::vector<ArchiveFile>& files, std::vector<std::string>& missing) {
    auto run = h.run(source.runId);
    if (!run.ok() || !*run) {
        missing.push_back("the run: " + (run.ok() ? "no run '" + source.runId.value() + "' in " +
                                                        source.historyPath
                                                  : run.error()));
    } else {
        const auto& r = **run;
        json nodes = json::array();
        for (const auto& n : r.nodes) {
            nodes.push_back(n);
        }
        const json j = {{"id", r.id.value()},
                        {"name", r.name},
                        {"state", std::string(db::toString(r.state))},
                        {"started_ns", r.startedNs},
                        {"started", r.startedNs > 0 ? utcTime(r.startedNs) : ""},
                        {"ended_ns", r.endedNs},
                        {"ended", r.endedNs > 0 ? utcTime(r.endedNs) : ""},
                        {"nodes", nodes},
                        {"message", r.message},
                        {"provenance", json::parse(r.provenanceJson, nullptr, false).is_discarded()
                                           ? json(r.provenanceJson)
                                           : json::parse(r.provenanceJson)}};
        files.push_back({"run.json", j.dump(2) + "\n"});
        if (!r.recipeYaml.empty()) {
            files.push_back({"recipe.yaml", r.recipeYaml});
        } else {
            missing.push_back("recipe.yaml: the run was recorded without a recipe");
        }
    }
    db::EventFilter filter;
    filter.runId = source.runId;
    filter.limit = 100000;
    if (auto events = h.listEvents(filter); events.ok()) {
        std::ostringstream out;
        const std::size_t from =
            events->size() > source.eventCount ? events->size() - source.eventCount : 0;
        if (from > 0) {
            out << "(" << from << " older events left out)\n";
        }
        for (std::size_t i = from; i < events->size(); ++i) {
            const auto& e = (*events)[i];
            out << utcTime(e.tNs) << "  " << e.nodeId.value() << "  " << e.kind << "  " << e.message
                << "\n";
        }
        if (events->empty()) {
            out << "no event of the run in the history\n";
        }
        files.push_back({"events.txt", out.str()});
    } else {
        missing.push_back("events.txt: " + events.error());
    }
    for (const std::string stream : {"stdout", "stderr"}) {
        auto log = h.readRunLog(source.runId, stream);
        const std::string path = "logs/" + stream + ".tail.txt";
        if (!log.ok()) {
            missing.push_back(path + ": " + log.error());
            continue;
        }
        if (log->endOffset == 0) {
            missing.push_back(path + ": the history stored no " + stream + " of the run");
            continue;
        }
        files.push_back({path, lastLines(log->shown(), source.logLines, kArchiveLogBytes)});
    }
    if (auto listed = h.listDiagnoses(source.runId, false); listed.ok()) {
        std::ostringstream out;
        for (const auto& d : *listed) {
            out << d.id << "  " << utcTime(d.tNs) << "  " << d.trigger << "  " << d.headline
                << "\n";
        }
        if (!listed->empty()) {
            files.push_back({"diagnoses.txt", out.str()});
        }
    }
}

bool matchesDoc(const std::string& pattern, const std::string& path) {
    const auto star = pattern.find('*');
    if (star == std::string::npos) {
        return pattern.back() == '/' ? path.rfind(pattern, 0) == 0 : path == pattern;
    }
    const std::string head = pattern.substr(0, star);
    const std::string tail = pattern.substr(star + 1);  // "/name"
    return path.rfind(head, 0) == 0 && path.size() > head.size() + tail.size() &&
           path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
}

std::string readme(const DiagnosisArchiveSource& source, const dx::RunDiagnosis& d, std::int64_t id,
                   const std::vector<ArchiveFile>& files, const std::vector<std::string>& missing) {
    std::ostringstream out;
    out << "Runplane diagnosis of run " << source.runId.value() << "\n\n"
        << "verdict:   " << d.verdict.headline << "\n"
        << "trigger:   " << d.trigger << "\n"
        << "taken:     " << utcTime(d.tUnixNs) << " (" << d.tookMs << " ms, " << d.nodes.size()
        << " nodes)\n";
    if (id > 0) {
        out << "stored as: diagnosis " << id << " in " << source.historyPath << "\n";
    }
    out << "\nWhat each file is (docs/diagnosis.md in Runplane's sources says how each piece is "
           "collected and judged):\n\n";
    for (const auto& doc : fileDocs()) {
        bool present = std::string(doc.path) == "README.txt";
        for (const auto& f : files) {
            present = present || matchesDoc(doc.path, f.path);
        }
        if (present) {
            char line[64];
            std::snprintf(line, sizeof line, "%-26s", doc.path);
            out << line << " " << doc.what << "\n";
        }
    }
    if (!missing.empty()) {
        out << "\nNot in this archive:\n";
        for (const auto& m : missing) {
            out << "- " << m << "\n";
        }
    }
    return out.str();
}

}  // namespace

std::string diagnosisArchiveFolder(const RunId& runId, std::int64_t diagnosisId) {
    return "runplane-diagnosis-" + safeName(runId.value()) +
           (diagnosisId > 0 ? "-" + std::to_string(diagnosisId) : std::string());
}

Result<DiagnosisArchiveContent> diagnosisArchiveFiles(const DiagnosisArchiveSource& source) {
    db::OpenOptions readOnly;
    readOnly.readOnly = true;
    std::unique_ptr<db::History> history;
    std::string historyError;
    std::error_code ec;
    if (source.historyPath.empty()) {
        historyError = "no history given";
    } else if (!std::filesystem::exists(source.historyPath, ec)) {
        historyError = "no history at " + source.historyPath;
    } else if (auto h = db::History::open(source.historyPath, readOnly); h.ok()) {
        history = std::move(*h);
    } else {
        historyError = h.error();
    }
    std::string text = source.diagnosisJson;
    std::int64_t id = 0;
    if (text.empty()) {
        if (!history) {
            return Error{"no stored diagnosis to export: " + historyError};
        }
        auto stored = history->listDiagnoses(source.runId, true);
        if (!stored.ok()) {
            return stored.failure();
        }
        for (const auto& r : *stored) {
            if (source.diagnosisId == 0 || r.id == source.diagnosisId) {
                text = r.json;
                id = r.id;
                break;
            }
        }
        if (text.empty()) {
            return Error{"no stored diagnosis" +
                         (source.diagnosisId > 0 ? " " + std::to_string(source.diagnosisId)
                                                 : std::string()) +
                         " of run '" + source.runId.value() + "' in " + source.historyPath};
        }
    }
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        return Error{"the diagnosis" + (id > 0 ? " " + std::to_string(id) : std::string()) +
                     " is not a JSON object"};
    }
    auto d = dx::runDiagnosisFromJson(doc);
    if (!d.ok()) {
        return d.failure();
    }
    std::vector<ArchiveFile> files;
    std::vector<std::string> missing;
    files.push_back({"verdict.txt", dx::formatDiagnosis(*d)});
    files.push_back({"diagnosis.json", doc.dump(2) + "\n"});
    if (history) {
        addHistoryFiles(*history, source, files, missing);
    } else {
        missing.push_back("the run's record, recipe, events and output: " + historyError);
    }
    const json* nodesJson =
        doc.contains("nodes") && doc["nodes"].is_array() ? &doc["nodes"] : nullptr;
    for (std::size_t i = 0; i < d->nodes.size(); ++i) {
        const auto& n = d->nodes[i];
        char index[24];
        std::snprintf(index, sizeof index, "%02zu", i + 1);
        const std::string host = !n.hostname.empty()  ? n.hostname
                                 : !n.address.empty() ? n.address
                                                      : n.nodeId;
        const std::string dir = "nodes/" + std::string(index) + "-" + safeName(host) + "/";
        const json nodeJson =
            nodesJson != nullptr && i < nodesJson->size() ? (*nodesJson)[i] : dx::toJson(n);
        files.push_back({dir + "node.json", nodeJson.dump(2) + "\n"});
        if (!n.error.empty()) {
            missing.push_back(dir + ": the node gave no diagnosis: " + n.error);
            continue;
        }
        files.push_back({dir + "stacks.txt", stacksText(n)});
        files.push_back({dir + "ras.txt", rasText(n)});
        if (nodeJson.contains("ras")) {
            files.push_back({dir + "ras.json", nodeJson["ras"].dump(2) + "\n"});
        }
        files.push_back({dir + "kernel.log", kernelText(n)});
        files.push_back(
            {dir + "gpus.json",
             (n.gpusMissing.empty() ? n.gpus : json{{"missing", n.gpusMissing}}).dump(2) + "\n"});
        files.push_back({dir + "output.tail.txt", outputText(n)});
    }
    if (!source.diagnosisJson.empty() && history) {
        // The document given may be the one just stored: name it when it is the newest.
        if (auto listed = history->listDiagnoses(source.runId, false);
            listed.ok() && !listed->empty() && listed->front().tNs == d->tUnixNs) {
            id = listed->front().id;
        }
    }
    files.insert(files.begin(), ArchiveFile{"README.txt", readme(source, *d, id, files, missing)});
    return DiagnosisArchiveContent{id, std::move(files)};
}

Result<DiagnosisArchiveWritten> writeTarGz(const std::string& outPath, const std::string& folder,
                                           const std::vector<ArchiveFile>& files) {
    const std::string tmp = outPath + ".tmp";
    std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(),
                                                              &archive_write_free);
    if (!a) {
        return Error{outPath + ": cannot create an archive writer"};
    }
    auto fail = [&](const std::string& what) -> Error {
        std::string why = archive_error_string(a.get()) ? archive_error_string(a.get()) : "";
        a.reset();
        std::error_code ec;
        std::filesystem::remove(tmp, ec);
        return Error{outPath + ": " + what + (why.empty() ? "" : ": " + why)};
    };
    if (archive_write_add_filter_gzip(a.get()) != ARCHIVE_OK ||
        archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK) {
        return fail("cannot set up gzip tar");
    }
    if (archive_write_open_filename(a.get(), tmp.c_str()) != ARCHIVE_OK) {
        return fail("cannot write " + tmp);
    }
    const std::time_t now = std::time(nullptr);
    DiagnosisArchiveWritten out;
    out.path = outPath;
    out.folder = folder;
    std::set<std::string> dirs;
    auto addDir = [&](const std::string& path) -> bool {
        if (!dirs.insert(path).second) {
            return true;
        }
        std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(),
                                                                        &archive_entry_free);
        archive_entry_set_pathname(e.get(), path.c_str());
        archive_entry_set_filetype(e.get(), AE_IFDIR);
        archive_entry_set_perm(e.get(), 0755);
        archive_entry_set_mtime(e.get(), now, 0);
        return archive_write_header(a.get(), e.get()) == ARCHIVE_OK;
    };
    if (!addDir(folder + "/")) {
        return fail("cannot write the folder " + folder);
    }
    for (const auto& f : files) {
        const std::string full = folder + "/" + f.path;
        for (auto slash = f.path.find('/'); slash != std::string::npos;
             slash = f.path.find('/', slash + 1)) {
            if (!addDir(folder + "/" + f.path.substr(0, slash + 1))) {
                return fail("cannot write the folder of " + full);
            }
        }
        std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(),
                                                                        &archive_entry_free);
        archive_entry_set_pathname(e.get(), full.c_str());
        archive_entry_set_size(e.get(), static_cast<la_int64_t>(f.content.size()));
        archive_entry_set_filetype(e.get(), AE_IFREG);
        archive_entry_set_perm(e.get(), 0644);
        archive_entry_set_mtime(e.get(), now, 0);
        if (archive_write_header(a.get(), e.get()) != ARCHIVE_OK) {
            return fail("cannot write " + full);
        }
        if (!f.content.empty() && archive_write_data(a.get(), f.content.data(), f.content.size()) !=
                                      static_cast<la_ssize_t>(f.content.size())) {
            return fail("cannot write " + full);
        }
        out.files.push_back(f.path);
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK) {
        return fail("cannot finish " + tmp);
    }
    a.reset();
    std::error_code ec;
    std::filesystem::rename(tmp, outPath, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        return Error{outPath + ": cannot move " + tmp + " into place: " + ec.message()};
    }
    out.bytes = std::filesystem::file_size(outPath, ec);
    return out;
}

Result<DiagnosisArchiveWritten> exportDiagnosisArchive(const DiagnosisArchiveSource& source,
                                                       const std::string& outPath) {
    auto files = diagnosisArchiveFiles(source);
    if (!files.ok()) {
        return files.failure();
    }
    return writeTarGz(outPath, diagnosisArchiveFolder(source.runId, files->diagnosisId),
                      files->files);
}

namespace {
std::string archiveError(archive* a) {
    const char* why = archive_error_string(a);
    return why != nullptr ? why : "unreadable";
}
}  // namespace

Result<std::vector<ArchiveFile>> readArchive(const std::string& path, std::uint64_t maxBytes) {
    std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(),
                                                             &archive_read_free);
    if (!a) {
        return Error{path + ": cannot create an archive reader"};
    }
    archive_read_support_filter_all(a.get());
    archive_read_support_format_all(a.get());
    if (archive_read_open_filename(a.get(), path.c_str(), 64 << 10) != ARCHIVE_OK) {
        return Error{path + ": " + archiveError(a.get())};
    }
    std::vector<ArchiveFile> out;
    std::uint64_t total = 0;
    archive_entry* e = nullptr;
    while (true) {
        const int r = archive_read_next_header(a.get(), &e);
        if (r == ARCHIVE_EOF) {
            break;
        }
        if (r != ARCHIVE_OK) {
            return Error{path + ": " + archiveError(a.get())};
        }
        if (archive_entry_filetype(e) != AE_IFREG) {
            continue;
        }
        ArchiveFile f;
        f.path = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
        char buf[16384];
        while (true) {
            const la_ssize_t n = archive_read_data(a.get(), buf, sizeof buf);
            if (n < 0) {
                return Error{path + ": " + f.path + ": " + archiveError(a.get())};
            }
            if (n == 0) {
                break;
            }
            total += static_cast<std::uint64_t>(n);
            if (total > maxBytes) {
                return Error{path + ": more than " + std::to_string(maxBytes) + " bytes of files"};
            }
            f.content.append(buf, static_cast<std::size_t>(n));
        }
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace runplane::control
