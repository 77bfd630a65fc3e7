#include "backend/plan/recipe.h"

#include "backend/plan/detail/enum_tables.h"

namespace runplane::plan {

void SourceMap::set(std::string path, SourceLoc loc) {
    const auto it = m_index.find(path);
    if (it != m_index.end()) {
        m_entries[it->second].second = loc;
        return;
    }
    m_index.emplace(path, m_entries.size());
    m_entries.emplace_back(std::move(path), loc);
}

SourceLoc SourceMap::find(std::string_view path) const {
    while (!path.empty()) {
        const auto it = m_index.find(path);
        if (it != m_index.end()) {
            return m_entries[it->second].second;
        }
        // Walk up: "eval.datasets[1].path" -> "eval.datasets[1]" -> "eval.datasets" -> "eval".
        const auto cut = path.find_last_of(".[");
        if (cut == std::string_view::npos) {
            break;
        }
        path = path.substr(0, cut);
    }
    return {};
}

bool SourceMap::contains(std::string_view path) const {
    return m_index.find(path) != m_index.end();
}

std::string ParseDiagnostic::format(std::string_view file) const {
    std::string out(file);
    if (loc.known()) {
        out += ':' + std::to_string(loc.line) + ':' + std::to_string(loc.column);
    }
    out += ": error: ";
    out += message;
    return out;
}

std::string formatDiagnostics(const std::vector<ParseDiagnostic>& diagnostics,
                              std::string_view file) {
    std::string message;
    for (const auto& d : diagnostics) {
        if (!message.empty()) {
            message += '\n';
        }
        message += d.format(file);
    }
    return message;
}

const char* toString(Framework v) {
    return detail::enumName(v);
}
const char* toString(Placement v) {
    return detail::enumName(v);
}
const char* toString(TrainBackend v) {
    return detail::enumName(v);
}
const char* toString(RolloutEngine v) {
    return detail::enumName(v);
}
const char* toString(WeightDtype v) {
    return detail::enumName(v);
}
const char* toString(QuantScope v) {
    return detail::enumName(v);
}
const char* toString(CpuArch v) {
    return detail::enumName(v);
}
const char* toString(OffloadTarget v) {
    return detail::enumName(v);
}
const char* toString(PeakDevice v) {
    return detail::enumName(v);
}
const char* toString(BackupMode v) {
    return detail::enumName(v);
}
const char* toString(LauncherKind v) {
    return detail::enumName(v);
}
const char* toString(AdvantageEstimator v) {
    return detail::enumName(v);
}
const char* toString(OpdType v) {
    return detail::enumName(v);
}
const char* toString(WeightUpdateMode v) {
    return detail::enumName(v);
}
const char* toString(WeightTransport v) {
    return detail::enumName(v);
}

int trainerNodes(const Recipe& r) {
    return r.trainer.nodes.value_or(r.cluster.nodes);
}

int trainerGpusPerNode(const Recipe& r) {
    return r.trainer.gpusPerNode.value_or(r.hardware.gpusPerNode);
}

int trainerWorldSize(const Recipe& r) {
    return trainerNodes(r) * trainerGpusPerNode(r);
}

int effectiveEtp(const Recipe& r) {
    return r.trainer.etp.value_or(r.trainer.tp);
}

RolloutEngine effectiveEngine(const Recipe& r) {
    if (r.rollout.engine.has_value()) {
        return *r.rollout.engine;
    }
    return r.framework == Framework::Vime ? RolloutEngine::Vllm : RolloutEngine::Sglang;
}

int rolloutGpus(const Recipe& r) {
    if (r.rollout.numGpus.has_value()) {
        return *r.rollout.numGpus;
    }
    return r.placement == Placement::Colocate ? trainerWorldSize(r) : 0;
}

bool offloadTrainOn(const Recipe& r) {
    return r.memory.offloadTrain.value_or(r.placement == Placement::Colocate);
}

bool offloadRolloutOn(const Recipe& r) {
    return r.memory.offloadRollout.value_or(r.placement == Placement::Colocate);
}

LauncherKind effectiveLauncher(const Recipe& r) {
    if (r.launcher.kind.has_value()) {
        return *r.launcher.kind;
    }
    return r.framework == Framework::Miles ? LauncherKind::MilesScript : LauncherKind::SlimeBash;
}

bool isSpliceWord(std::string_view word) {
    auto nameStart = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    };
    auto nameChar = [&](char c) { return nameStart(c) || (c >= '0' && c <= '9'); };
    if (word.size() >= 2 && word.front() == '"' && word.back() == '"') {
        word = word.substr(1, word.size() - 2);
    }
    if (word.size() < 2 || word[0] != '$') {
        return false;
    }
    const bool braced = word[1] == '{';
    std::size_t i = braced ? 2 : 1;
    if (i >= word.size() || !nameStart(word[i])) {
        return false;
    }
    while (i < word.size() && nameChar(word[i])) {
        ++i;
    }
    if (!braced) {
        return i == word.size();
    }
    const std::string_view rest = word.substr(i);
    if (rest == "}" || rest == "[@]}" || rest == "[*]}") {
        return true;
    }
    // ${NAME:-default} / ${NAME-default} with a plain default
    std::size_t d = rest.rfind(":-", 0) == 0 ? 2 : (rest.rfind('-', 0) == 0 ? 1 : 0);
    if (d == 0 || rest.back() != '}') {
        return false;
    }
    for (; d + 1 < rest.size(); ++d) {
        const char c = rest[d];
        if (!nameChar(c) && std::string_view(".,:/=+@%-").find(c) == std::string_view::npos) {
            return false;
        }
    }
    return true;
}

}  // namespace runplane::plan
