// A launch's parent from its argv (issue 49, docs/history.md "Run lineage"): the checkpoint it
// loads, found in a known run's save folder.
#include <filesystem>
#include <fstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "db/history/run_lineage.h"

namespace runplane::db {

namespace {

namespace fs = std::filesystem;

enum class CheckpointFlag { Load, Save, Step };

struct CheckpointFlagRow {
    std::string_view flag;
    CheckpointFlag role;
    const char* who;  // whose flag (docs)
};

// Flags that name checkpoints, one row each (docs/history.md "Run lineage" lists them).
constexpr CheckpointFlagRow kCheckpointFlags[] = {
    {"--load", CheckpointFlag::Load, "Megatron / slime / miles: the actor checkpoint to resume"},
    {"--save", CheckpointFlag::Save, "Megatron / slime / miles: where checkpoints are written"},
    {"--ckpt-step", CheckpointFlag::Step, "slime / miles: which iteration of --load"},
    {"--resume_from_checkpoint", CheckpointFlag::Load, "Hugging Face Trainer scripts"},
    {"--output_dir", CheckpointFlag::Save, "Hugging Face Trainer scripts"},
};

std::string normalised(const std::string& path, const std::string& workdir) {
    if (path.empty()) {
        return "";
    }
    fs::path p(path);
    if (p.is_relative() && !workdir.empty() && fs::path(workdir).is_absolute()) {
        p = fs::path(workdir) / p;
    }
    std::string s = p.lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') {
        s.pop_back();
    }
    return s;
}

std::optional<std::int64_t> parseStep(const std::string& text) {
    if (text.empty() || text.size() > 18) {
        return std::nullopt;
    }
    std::int64_t v = 0;
    for (const char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        v = v * 10 + (c - '0');
    }
    return v;
}

}  // namespace

LaunchCheckpoints launchCheckpoints(const std::vector<std::string>& argv,
                                    const std::string& workdir) {
    LaunchCheckpoints out;
    std::string load;
    std::string save;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        for (const auto& row : kCheckpointFlags) {
            std::string value;
            bool matched = false;
            if (a == row.flag && i + 1 < argv.size()) {
                value = argv[i + 1];
                matched = true;
            } else if (a.size() > row.flag.size() + 1 &&
                       a.compare(0, row.flag.size(), row.flag) == 0 && a[row.flag.size()] == '=') {
                value = a.substr(row.flag.size() + 1);
                matched = true;
            }
            if (!matched) {
                continue;
            }
            switch (row.role) {
                case CheckpointFlag::Load:
                    load = value;
                    break;
                case CheckpointFlag::Save:
                    save = value;
                    break;
                case CheckpointFlag::Step:
                    if (auto s = parseStep(value)) {
                        out.step = *s;
                    }
                    break;
            }
        }
    }
    out.save = normalised(save, workdir);
    out.load = normalised(load, workdir);
    if (!out.load.empty()) {
        const fs::path p(out.load);
        if (auto s = checkpointStepOf(p.filename().string())) {
            out.load = p.parent_path().string();
            if (!out.step) {
                out.step = *s;
            }
        }
    }
    return out;
}

std::optional<History::RunParent> detectParent(const std::vector<RunRecord>& runs,
                                               const std::string& child,
                                               const std::vector<std::string>& argv,
                                               const std::string& workdir) {
    const LaunchCheckpoints launch = launchCheckpoints(argv, workdir);
    if (launch.load.empty()) {
        return std::nullopt;
    }
    const RunRecord* best = nullptr;
    for (const RunRecord& r : runs) {
        if (r.id.value() == child) {
            continue;
        }
        const auto prov = nlohmann::json::parse(r.provenanceJson, nullptr, false);
        if (!prov.is_object() || !prov.contains("argv") || !prov["argv"].is_array()) {
            continue;
        }
        std::vector<std::string> runArgv;
        for (const auto& a : prov["argv"]) {
            if (a.is_string()) {
                runArgv.push_back(a.get<std::string>());
            }
        }
        const std::string runWorkdir = prov.contains("workdir") && prov["workdir"].is_string()
                                           ? prov["workdir"].get<std::string>()
                                           : std::string();
        if (launchCheckpoints(runArgv, runWorkdir).save != launch.load) {
            continue;
        }
        if (best == nullptr || r.startedNs > best->startedNs) {
            best = &r;
        }
    }
    if (best == nullptr) {
        return std::nullopt;
    }
    History::RunParent p;
    p.runId = child;
    p.parentId = best->id.value();
    p.kind = launch.save == launch.load ? "resume" : "fork";
    p.source = "argv";
    if (launch.step) {
        p.step = *launch.step;
    } else {
        std::ifstream tracker(fs::path(launch.load) / "latest_checkpointed_iteration.txt");
        std::string text;
        if (tracker && std::getline(tracker, text)) {
            while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) {
                text.pop_back();
            }
            if (auto s = parseStep(text)) {
                p.step = *s;
            }
        }
    }
    return p;
}

Result<std::pair<std::string, std::int64_t>> parseRunAtStep(const std::string& text) {
    const auto at = text.rfind('@');
    if (at == std::string::npos) {
        if (text.empty()) {
            return Error{"expected RUN or RUN@STEP"};
        }
        return std::make_pair(text, std::int64_t{-1});
    }
    const std::string run = text.substr(0, at);
    const auto step = parseStep(text.substr(at + 1));
    if (run.empty() || !step) {
        return Error{"'" + text + "': expected RUN@STEP with STEP a whole number >= 0"};
    }
    return std::make_pair(run, *step);
}

}  // namespace runplane::db
