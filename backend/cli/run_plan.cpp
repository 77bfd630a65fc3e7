#include "backend/cli/run_plan.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"

namespace runplane::cli {

std::string recipesDirOr(const std::string& given, std::string& why) {
    if (!given.empty()) {
        return given;
    }
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    auto located = plan::locateRecipesDir(ec ? "" : exe.parent_path().string());
    if (!located) {
        why = located.error();
        return {};
    }
    return *located;
}

std::optional<plan::Plan> planOfSnapshot(const std::string& recipeYaml,
                                         const std::string& recipesDir, std::string& why) {
    if (recipeYaml.find_first_not_of(" \t\r\n") == std::string::npos) {
        why = "the run has no recipe snapshot";
        return std::nullopt;
    }
    auto recipe = plan::parseRecipe(recipeYaml, "recipe snapshot");
    if (!recipe) {
        why = recipe.error();
        return std::nullopt;
    }
    const std::string dir = recipesDirOr(recipesDir, why);
    if (dir.empty()) {
        return std::nullopt;
    }
    auto catalog = plan::ModelCatalog::loadDirectory(dir + "/models");
    if (!catalog) {
        why = catalog.error();
        return std::nullopt;
    }
    return plan::planRecipe(*recipe, *catalog);
}

std::optional<plan::Phase> planPhaseNamed(const std::string& name) {
    for (plan::Phase p : plan::kPhases) {
        if (name == plan::toString(p)) {
            return p;
        }
    }
    return std::nullopt;
}

}  // namespace runplane::cli

namespace runplane::cli {

std::vector<PhaseWindow> phaseWindowsOf(db::History& history, const db::RunRecord& run,
                                        const std::string& node) {
    db::EventFilter filter;
    filter.nodeId = NodeId{node};
    filter.runId = run.id;
    filter.kind = "phase";
    std::vector<PhaseWindow> out;
    auto events = history.listEvents(filter);
    if (!events) {
        return out;
    }
    const std::int64_t end =
        run.endedNs > 0 ? run.endedNs : std::numeric_limits<std::int64_t>::max();
    std::optional<PhaseWindow> open;
    for (const auto& e : *events) {
        const auto phase = planPhaseNamed(db::attrText(e.attrs, "phase"));
        const std::string edge = db::attrText(e.attrs, "edge");
        if (open && (edge != "end" || (phase && *phase == open->phase))) {
            open->t1Ns = e.tNs;
            out.push_back(*open);
            open.reset();
        }
        if (phase && edge != "end") {
            open = PhaseWindow{*phase, e.tNs, end};
        }
    }
    if (open) {
        out.push_back(*open);
    }
    return out;
}

double seriesPeakIn(db::History& history, const std::string& node, const std::string& name,
                    std::int64_t t0Ns, std::int64_t t1Ns) {
    auto id = history.findSeries(NodeId{node}, RunId{""}, name);
    if (!id || !*id) {
        return -1;
    }
    db::SeriesQuery q;
    q.seriesId = **id;
    q.t0Ns = t0Ns;
    q.t1Ns = t1Ns;
    auto points = history.querySeries(q);
    if (!points) {
        return -1;
    }
    double peak = -1;
    for (const auto& p : points->points) {
        peak = std::max(peak, p.max);
    }
    for (const auto& b : points->buckets) {
        peak = std::max(peak, b.max);
    }
    return peak;
}

}  // namespace runplane::cli
