// Which runs a path holds, and the table of formats (docs/imports.md).
#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "db/imports/run_import.h"

namespace runplane::imports {
namespace fs = std::filesystem;

namespace {

bool isEventFile(const fs::path& p) {
    return p.filename().string().find("tfevents") != std::string::npos;
}

std::string extensionFormat(const fs::path& p) {
    const std::string ext = p.extension().string();
    if (ext == ".csv") {
        return "csv";
    }
    if (ext == ".jsonl" || ext == ".ndjson") {
        return "jsonl";
    }
    if (ext == ".wandb") {
        return "wandb";
    }
    return "";
}

}  // namespace

const std::vector<ImportFormat>& importFormats() {
    static const std::vector<ImportFormat> kFormats{
        {"tensorboard",
         "a file whose name contains `tfevents`; all of them in one folder are one run",
         &readTensorBoard},
        {"wandb", "a `.wandb` file (W&B's `wandb/offline-run-*/run-*.wandb`); named by its folder",
         &readWandb},
        {"csv", "a `.csv` file: a header row naming step, wall_time and the metrics", &readCsv},
        {"jsonl", "a `.jsonl` / `.ndjson` file: one JSON object per line", &readJsonLines},
        {"miles",
         "a folder `dashboard` holding `meta.json` (miles' `--dump-details DIR "
         "--use-miles-dashboard` writes DIR/dashboard/); every file under it is this run's",
         &readMilesDashboard},
    };
    return kFormats;
}

std::size_t ImportedRun::pointCount() const {
    std::size_t n = 0;
    for (const auto& s : series) {
        n += s.points.size();
    }
    return n;
}

RunId importedRunId(const ImportedRun& run) {
    return RunId{"import-" + run.contentSha256.substr(0, 16)};
}

Result<std::vector<ImportSource>> findImportSources(const std::string& path) {
    std::error_code ec;
    const fs::path root(path);
    const auto status = fs::status(root, ec);
    if (ec || !fs::exists(status)) {
        return Error{path + ": no such file or folder"};
    }
    std::vector<ImportSource> out;
    if (fs::is_regular_file(status)) {
        if (isEventFile(root)) {  // the one file; its siblings are not asked for
            out.push_back({"tensorboard",
                           root.parent_path().filename().string(),
                           {fs::absolute(root).string()}});
        } else if (const std::string f = extensionFormat(root); !f.empty()) {
            out.push_back({f,
                           f == "wandb" ? fs::absolute(root).parent_path().filename().string()
                                        : root.stem().string(),
                           {fs::absolute(root).string()}});
        } else {
            return Error{path +
                         ": not a format import-runs reads (tfevents, .wandb, .csv, .jsonl)"};
        }
        return out;
    }
    std::map<fs::path, std::vector<std::string>> eventDirs;  // sorted: stable order
    std::vector<fs::path> tables;
    std::vector<fs::path> milesDirs;
    const bool rootIsMiles = isMilesDashboardDir(fs::absolute(root).lexically_normal().string());
    if (rootIsMiles) {
        milesDirs.push_back(root);  // PATH is the dashboard folder itself: nothing else in it
    }
    for (fs::recursive_directory_iterator
             it(root, fs::directory_options::skip_permission_denied, ec),
         end;
         !rootIsMiles && !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec) && isMilesDashboardDir(it->path().string())) {
            milesDirs.push_back(it->path());  // its .jsonl streams are this run, not tables
            it.disable_recursion_pending();
            continue;
        }
        if (!it->is_regular_file(ec)) {
            continue;
        }
        const fs::path& p = it->path();
        if (isEventFile(p)) {
            eventDirs[p.parent_path()].push_back(fs::absolute(p).string());
        } else if (!extensionFormat(p).empty()) {
            tables.push_back(p);
        }
    }
    if (ec) {
        return Error{path + ": cannot list: " + ec.message()};
    }
    const fs::path base = fs::absolute(root).lexically_normal();
    auto label = [&](const fs::path& p) {
        std::string rel = fs::absolute(p).lexically_normal().lexically_relative(base).string();
        if (rel.empty() || rel == ".") {
            rel = base.filename().string();
            if (rel.empty()) {
                rel = base.parent_path().filename().string();
            }
        }
        return rel;
    };
    for (auto& [dir, files] : eventDirs) {
        std::sort(files.begin(), files.end());  // names carry the writer's start time
        out.push_back({"tensorboard", label(dir), files});
    }
    std::sort(tables.begin(), tables.end());
    for (const auto& p : tables) {
        fs::path l = p;
        l.replace_extension();
        const std::string f = extensionFormat(p);
        out.push_back(
            {f, f == "wandb" ? label(p.parent_path()) : label(l), {fs::absolute(p).string()}});
    }
    std::sort(milesDirs.begin(), milesDirs.end());
    for (const auto& d : milesDirs) {
        // Named by the folder that holds `dashboard` (the --dump-details folder).
        const fs::path abs = fs::absolute(d).lexically_normal();
        out.push_back(
            {"miles",
             abs == base ? abs.parent_path().filename().string() : label(abs.parent_path()),
             {abs.string()}});
    }
    if (out.empty()) {
        return Error{
            path +
            ": holds no run import-runs reads (tfevents files, .wandb, .csv, .jsonl, miles "
            "dashboard folders)"};
    }
    return out;
}

Result<ImportedRun> readImportSource(const ImportSource& source) {
    for (const ImportFormat& f : importFormats()) {
        if (source.format == f.name) {
            return f.read(source);
        }
    }
    return Error{"unknown import format " + source.format};
}

}  // namespace runplane::imports
