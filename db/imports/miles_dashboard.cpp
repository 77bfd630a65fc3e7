// miles' dashboard data (`--dump-details DIR --use-miles-dashboard`): the append-only JSON-lines
// streams under DIR/dashboard/ (docs/imports.md "miles dashboard"), read as one run.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string_view>

#include <nlohmann/json.hpp>

#include "db/imports/content_hash.h"
#include "db/imports/run_import.h"

namespace runplane::imports {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The nearest ns of the double's exact value: whole seconds and the fraction apart (s * 1e9 in
// one double is off by up to 128 ns for today's times: 1.8e18 needs more than 53 bits).
std::int64_t secondsToNs(double s) {
    if (!std::isfinite(s) || s <= -9.2e9 || s >= 9.2e9) {
        return 0;
    }
    const double whole = std::floor(s);
    return static_cast<std::int64_t>(whole) * 1'000'000'000LL +
           static_cast<std::int64_t>(std::nearbyint((s - whole) * 1e9));
}

class SeriesIndex {
  public:
    explicit SeriesIndex(ImportedRun& run) : m_run(run) {}
    void add(const std::string& name, std::int64_t step, std::int64_t tNs, double v) {
        auto [it, fresh] = m_index.try_emplace(name, m_run.series.size());
        if (fresh) {
            m_run.series.push_back(ImportedSeries{name, {}});
        }
        m_run.series[it->second].points.push_back(ImportedPoint{step, tNs, v});
    }

  private:
    ImportedRun& m_run;
    std::map<std::string, std::size_t> m_index;
};

bool finiteNumber(const json& v, const char* key) {
    return v.contains(key) && (v[key].is_number() || v[key].is_boolean());
}
double num(const json& v, const char* key) {
    return v[key].is_boolean() ? (v[key].get<bool>() ? 1.0 : 0.0) : v[key].get<double>();
}
std::string text(const json& v, const char* key) {
    if (!v.contains(key)) {
        return "?";
    }
    return v[key].is_string() ? v[key].get<std::string>() : v[key].dump();
}

// One stream: what a line becomes. Returns false when the object lacks the stream's fields
// (counted as skipped, not a stop: a newer miles may add record kinds).
using LineReader = std::function<bool(const json&, SeriesIndex&, ImportedRun&)>;

bool metricsLine(const json& r, SeriesIndex& out, ImportedRun& run) {
    if (!r.contains("metrics") || !r["metrics"].is_object() || !finiteNumber(r, "ts")) {
        return false;
    }
    const std::int64_t step =
        r.contains("step") && r["step"].is_number() ? stepFromNumber(r["step"].get<double>()) : -1;
    const std::int64_t tNs = secondsToNs(num(r, "ts"));
    std::function<void(const json&, const std::string&)> walk = [&](const json& obj,
                                                                    const std::string& prefix) {
        for (const auto& [key, value] : obj.items()) {
            const std::string name = prefix.empty() ? key : prefix + "/" + key;
            if (value.is_object()) {
                walk(value, name);
            } else if (value.is_number()) {
                out.add(name, step, tNs, value.get<double>());
            } else if (value.is_boolean()) {
                out.add(name, step, tNs, value.get<bool>() ? 1.0 : 0.0);
            } else if (!value.is_null()) {
                ++run.skippedValues;
            }
        }
    };
    walk(r["metrics"], "");
    return true;
}

bool phaseLine(const json& r, SeriesIndex& out, ImportedRun& run) {
    if (!r.contains("name") || !finiteNumber(r, "t0") || !finiteNumber(r, "t1")) {
        return false;
    }
    const double t0 = num(r, "t0");
    const double t1 = num(r, "t1");
    if (t1 == -1.0) {  // miles' OPEN_T1: still running when written; its closing line follows
        ++run.skippedValues;
        return true;
    }
    out.add("miles/phase/" + text(r, "name") + "/rank" + text(r, "rank") + "/seconds", -1,
            secondsToNs(t1), t1 - t0);
    return true;
}

bool gpuLine(const json& r, SeriesIndex& out, ImportedRun& /*run*/) {
    if (!finiteNumber(r, "ts") || !r.contains("node") || !r.contains("gpu")) {
        return false;
    }
    const std::string lane = "miles/gpu/" + text(r, "node") + ":" + text(r, "gpu") + "/";
    const std::int64_t tNs = secondsToNs(num(r, "ts"));
    for (const char* field : {"util", "mem_mb", "power_w"}) {
        if (finiteNumber(r, field)) {
            out.add(lane + field, -1, tNs, num(r, field));
        }
    }
    return true;
}

// One NVML per-process reading (miles' GpuProcessSample): who holds the GPU's memory. The series
// is keyed by the process id and its executable's last path component (NVML's name is a path;
// a `/` in a series name would split it).
bool gpuProcessLine(const json& r, SeriesIndex& out, ImportedRun& /*run*/) {
    if (!finiteNumber(r, "ts") || !r.contains("node") || !r.contains("gpu") || !r.contains("pid") ||
        !finiteNumber(r, "mem_mb")) {
        return false;
    }
    std::string name = r.contains("name") && r["name"].is_string() ? text(r, "name") : "";
    if (const auto slash = name.find_last_of('/'); slash != std::string::npos) {
        name = name.substr(slash + 1);
    }
    out.add("miles/gpu/" + text(r, "node") + ":" + text(r, "gpu") + "/process/" + text(r, "pid") +
                (name.empty() ? "" : " " + name) + "/mem_mb",
            -1, secondsToNs(num(r, "ts")), num(r, "mem_mb"));
    return true;
}

bool engineLine(const json& r, SeriesIndex& out, ImportedRun& /*run*/) {
    if (!finiteNumber(r, "ts") || !r.contains("metric") || !finiteNumber(r, "value")) {
        return false;
    }
    std::string labels;
    if (r.contains("labels") && r["labels"].is_object()) {
        for (const auto& [k, v] : r["labels"].items()) {  // sorted keys: a stable name
            labels += (labels.empty() ? "{" : ",") + k + "=" +
                      (v.is_string() ? v.get<std::string>() : v.dump());
        }
        labels += labels.empty() ? "" : "}";
    }
    out.add("miles/engine/" + text(r, "addr") + "/" + text(r, "metric") + labels, -1,
            secondsToNs(num(r, "ts")), num(r, "value"));
    return true;
}

bool skipLine(const json& /*r*/, SeriesIndex& /*out*/, ImportedRun& run) {
    ++run.skippedValues;  // topology snapshots: who served where, no scalar
    return true;
}

// The streams, in reading order (a row each; docs/imports.md lists them). A partitioned stream
// is STREAM.jsonl (miles' v1 flat file) and then STREAM/YYYYMMDD_HH.jsonl in name (= time) order.
struct StreamRow {
    const char* name;
    LineReader read;
};
const StreamRow kStreams[] = {
    {"metrics", &metricsLine},      {"phases", &phaseLine},  {"gpu_util", &gpuLine},
    {"engine_series", &engineLine}, {"topology", &skipLine}, {"gpu_processes", &gpuProcessLine},
};

std::vector<std::pair<std::string, const StreamRow*>> streamFiles(const fs::path& dir) {
    std::vector<std::pair<std::string, const StreamRow*>> files;
    std::error_code ec;
    for (const StreamRow& s : kStreams) {
        const fs::path flat = dir / (std::string(s.name) + ".jsonl");
        if (fs::is_regular_file(flat, ec)) {
            files.emplace_back(flat.string(), &s);
        }
        std::vector<std::string> parts;
        const fs::path sub = dir / s.name;
        if (fs::is_directory(sub, ec)) {
            for (fs::directory_iterator it(sub, ec), end; !ec && it != end; it.increment(ec)) {
                if (it->is_regular_file(ec) && it->path().extension() == ".jsonl") {
                    parts.push_back(it->path().string());
                }
            }
        }
        std::sort(parts.begin(), parts.end());
        for (auto& p : parts) {
            files.emplace_back(std::move(p), &s);
        }
    }
    return files;
}

constexpr std::uintmax_t kMaxFileBytes = 4ULL << 30;

}  // namespace

bool isMilesDashboardDir(const std::string& dir) {
    std::error_code ec;
    const fs::path p(dir);
    return p.filename() == "dashboard" && fs::is_regular_file(p / "meta.json", ec);
}

Result<ImportedRun> readMilesDashboard(const ImportSource& source) {
    ImportedRun run;
    run.format = "miles";
    run.name = source.name;
    const fs::path dir(source.files.at(0));
    if (!isMilesDashboardDir(dir.string())) {
        return Error{dir.string() + ": not a miles dashboard folder (DIR/dashboard/meta.json)"};
    }
    ContentHash hash;
    std::vector<std::pair<std::string, const StreamRow*>> files;
    files.emplace_back((dir / "meta.json").string(), nullptr);
    for (auto& f : streamFiles(dir)) {
        files.push_back(std::move(f));
    }
    SeriesIndex series(run);
    std::int64_t unreadable = 0;
    for (const auto& [path, stream] : files) {
        std::error_code ec;
        const auto size = fs::file_size(path, ec);
        if (ec || size > kMaxFileBytes) {
            return Error{path + (ec ? ": cannot read: " + ec.message() : ": larger than 4 GiB")};
        }
        std::ifstream in(path, std::ios::binary);
        std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.eof() && in.fail()) {
            return Error{path + ": read error"};
        }
        hash.update(b.data(), b.size());
        run.files.push_back(path);
        if (stream == nullptr) {  // meta.json: {run_name, start_ts, args, schema_version}
            const json meta = json::parse(b, nullptr, false);
            if (!meta.is_object()) {
                return Error{path + ": meta.json is not a JSON object"};
            }
            if (meta.contains("run_name") && meta["run_name"].is_string() &&
                !meta["run_name"].get<std::string>().empty()) {
                run.extra["folder"] = run.name;
                run.name = meta["run_name"].get<std::string>();
            }
            for (const char* key : {"start_ts", "schema_version", "args"}) {
                if (meta.contains(key)) {
                    run.extra[key] = meta[key];
                }
            }
            continue;
        }
        std::size_t at = 0;
        std::int64_t line = 0;
        while (at < b.size()) {
            const std::size_t start = at;
            std::size_t end = b.find('\n', at);
            const bool complete = end != std::string::npos;
            if (!complete) {
                end = b.size();
            }
            at = complete ? end + 1 : end;
            ++line;
            const std::string_view lineText(b.data() + start, end - start);
            if (lineText.find_first_not_of(" \t\r") == std::string_view::npos) {
                continue;
            }
            const json r = json::parse(lineText, nullptr, false);
            if (r.is_discarded() || !r.is_object()) {
                // A stream is append-only: a bad line ends what this file can tell; the other
                // streams are still read (the first stop is the one reported).
                if (run.stopped.empty()) {
                    run.stopped = path + ": stopped at byte " + std::to_string(start) + " (line " +
                                  std::to_string(line) +
                                  "): " + (complete ? "not a JSON object" : "truncated last line");
                }
                break;
            }
            ++run.records;
            if (!stream->read(r, series, run)) {
                ++unreadable;
            }
        }
    }
    run.contentSha256 = hash.hex();
    run.extra["records_without_fields"] = unreadable;
    return run;
}

}  // namespace runplane::imports
