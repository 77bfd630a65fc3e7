// YAML -> Recipe. The scalar fields are read by walking the field table (recipe_fields.h); the
// structured parts (model, environment.env, eval.datasets, analysis.metric_kinds, extra_args)
// by the code below, at their place in the walk. Every section is read by a MapReader, so
// unknown keys, wrong types and duplicate keys become diagnostics with line:column, and every
// field's location is recorded.

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <type_traits>

#include "backend/plan/detail/model_shape_yaml.h"
#include "backend/plan/detail/text_checks.h"
#include "backend/plan/detail/yaml_support.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_fields.h"
#include "backend/plan/recipe_limits.h"

namespace runplane::plan {
namespace {

using detail::locOf;
using detail::MapReader;
using detail::ParseContext;

void readModel(MapReader& top, ModelRef& m) {
    const YAML::Node node = top.child("model");
    if (node.IsDefined() && node.IsScalar()) {
        m.name = node.Scalar();  // shorthand: "model: qwen3-4B"
        return;
    }
    MapReader r(top.context(), node, "model");
    r.get("name", m.name);
    r.get("variant", m.variant);
    const YAML::Node shape = r.child("shape");
    if (shape.IsDefined()) {
        MapReader s(top.context(), shape, "model.shape");
        ModelShape parsed;
        detail::readModelShape(s, parsed);
        s.finish();
        m.shape = std::move(parsed);
    }
    r.finish();
}

// environment.env, after environment.nccl_so_path.
void readEnv(MapReader& section, Recipe& recipe) {
    const YAML::Node env = section.child("env");
    if (!env.IsDefined()) {
        return;
    }
    const ParseContext& ctx = section.context();
    MapReader vars(ctx, env, "environment.env");
    if (vars.isMap()) {
        for (auto it = env.begin(); it != env.end(); ++it) {
            const std::string key = it->first.Scalar();
            if (!detail::isEnvName(key)) {
                ctx.error(
                    "environment.env", locOf(it->first.Mark()),
                    "environment variable name '" + key + "' must match [A-Za-z_][A-Za-z0-9_]*");
                vars.present(key.c_str());  // reported here, not again as an unknown key
                continue;
            }
            std::string value;
            vars.get(key.c_str(), value);
            recipe.environment.env.emplace_back(key, value);
        }
    }
    vars.finish();
}

// eval.datasets, after eval.interval.
void readEvalDatasets(MapReader& section, Recipe& recipe) {
    const YAML::Node datasets = section.child("datasets");
    if (!datasets.IsDefined()) {
        return;
    }
    const ParseContext& ctx = section.context();
    if (!datasets.IsSequence()) {
        ctx.error("eval.datasets", locOf(datasets.Mark()),
                  "'eval.datasets' must be a list of {name, path}");
        return;
    }
    for (std::size_t i = 0; i < datasets.size(); ++i) {
        const std::string path = "eval.datasets[" + std::to_string(i) + "]";
        MapReader d(ctx, datasets[i], path);
        EvalDataset dataset;
        d.get("name", dataset.name);
        d.get("path", dataset.path);
        d.finish();
        recipe.eval.datasets.push_back(std::move(dataset));
    }
}

// analysis.metric_kinds, after analysis.primary_metric: series name (or prefix ending in '*') ->
// kind, or -> {kind, direction}.
void readMetricKinds(MapReader& section, Recipe& recipe) {
    Analysis& a = recipe.analysis;
    const YAML::Node kinds = section.child("metric_kinds");
    if (kinds.IsDefined()) {
        const ParseContext& ctx = section.context();
        MapReader entries(ctx, kinds, "analysis.metric_kinds");
        if (entries.isMap()) {
            for (auto it = kinds.begin(); it != kinds.end(); ++it) {
                const std::string key = it->first.Scalar();
                const std::string path = entries.pathOf(key);
                metrics::KindOverride o;
                o.pattern = key;
                if (key.empty() || key == "*") {
                    ctx.error(path, locOf(it->first.Mark()),
                              "'analysis.metric_kinds' keys must name a series or a prefix "
                              "ending in '*' (e.g. eval/arith/time, perf/*)");
                    entries.present(key.c_str());
                    continue;
                }
                if (it->second.IsMap()) {
                    MapReader m(ctx, entries.child(key.c_str()), path);
                    if (!m.present("kind")) {
                        ctx.error(path, locOf(it->second.Mark()),
                                  "'" + path +
                                      "' needs a kind (score, loss, count, time, tokens, "
                                      "bytes, rate, ratio, other)");
                    }
                    m.getEnum("kind", o.kind);
                    m.getEnum("direction", o.direction);
                    m.finish();
                } else if (!it->second.IsScalar()) {
                    ctx.error(path, locOf(it->second.Mark()),
                              "'" + path + "' must be a kind or {kind, direction}");
                    entries.present(key.c_str());
                    continue;
                } else {
                    entries.getEnum(key.c_str(), o.kind);
                }
                a.metricKinds.push_back(std::move(o));
            }
        }
        entries.finish();
    }
}

// analysis.phase_seconds, after analysis.memory_alarm_gb: phase name -> the seconds one
// occurrence of it is expected to last (a number > 0, at most 30 days).
void readPhaseSeconds(MapReader& section, Recipe& recipe) {
    const YAML::Node phases = section.child("phase_seconds");
    if (!phases.IsDefined()) {
        return;
    }
    constexpr double kMaxPhaseSeconds = 30 * 86400.0;
    const ParseContext& ctx = section.context();
    MapReader entries(ctx, phases, "analysis.phase_seconds");
    if (entries.isMap()) {
        for (auto it = phases.begin(); it != phases.end(); ++it) {
            const std::string key = it->first.Scalar();
            const std::string path = entries.pathOf(key);
            double seconds = 0;
            const std::size_t before = ctx.diagnostics->size();
            entries.get(key.c_str(), seconds);
            if (ctx.diagnostics->size() != before) {
                continue;  // not a number: reported by get
            }
            if (key.empty()) {
                ctx.error(path, locOf(it->first.Mark()),
                          "'analysis.phase_seconds' keys must name a phase (rollout, train, ...)");
                continue;
            }
            if (!(seconds > 0) || seconds > kMaxPhaseSeconds) {
                ctx.error(path, locOf(it->second.Mark()),
                          "'" + path + "' must be seconds > 0 and at most 2592000 (30 days)");
                continue;
            }
            recipe.analysis.phaseSeconds.emplace_back(key, seconds);
        }
    }
    entries.finish();
}

std::vector<std::string> splitWords(const std::string& text) {
    std::vector<std::string> words;
    std::istringstream stream(text);
    std::string word;
    while (stream >> word) {
        words.push_back(word);
    }
    return words;
}

void readExtraArgs(MapReader& top, std::vector<ExtraArg>& out) {
    const YAML::Node list = top.child("extra_args");
    if (!list.IsDefined()) {
        return;
    }
    const ParseContext& ctx = top.context();
    if (!list.IsSequence()) {
        ctx.error("extra_args", locOf(list.Mark()),
                  "'extra_args' must be a list of flags, e.g. [\"--lr 1e-5\"]");
        return;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        const YAML::Node item = list[i];
        const std::string path = "extra_args[" + std::to_string(i) + "]";
        ExtraArg arg;
        if (item.IsScalar()) {
            auto words = splitWords(item.Scalar());
            if (!words.empty()) {
                arg.flag = words.front();
                arg.values.assign(words.begin() + 1, words.end());
            }
        } else {
            MapReader r(ctx, item, path);
            r.get("flag", arg.flag);
            r.get("values", arg.values);
            r.get("source", arg.source);
            r.finish();
        }
        ctx.sources->set(path, locOf(item.Mark()));
        if (arg.flag.rfind("--", 0) != 0 && !isSpliceWord(arg.flag)) {
            ctx.error(path, locOf(item.Mark()),
                      "'" + path +
                          "' must start with a flag such as --lr (or be a splice such as "
                          "${MODEL_ARGS[@]}), got '" +
                          arg.flag + "'");
            continue;
        }
        out.push_back(std::move(arg));
    }
}

// The readers of the sections the table walk is in, outermost first. Sections are contiguous
// in the table, so each is opened (and finished, reporting its unknown keys) once.
class SectionReaders {
  public:
    explicit SectionReaders(MapReader& top) : m_top(top) {}
    SectionReaders(const SectionReaders&) = delete;
    SectionReaders& operator=(const SectionReaders&) = delete;

    MapReader& enter(std::string_view section) {
        while (!m_open.empty() && section != m_open.back().path &&
               !(section.starts_with(m_open.back().path) &&
                 section.size() > m_open.back().path.size() &&
                 section[m_open.back().path.size()] == '.')) {
            m_open.back().reader->finish();
            m_open.pop_back();
        }
        while (current() != section) {
            const std::string& at = current();
            const std::size_t from = at.empty() ? 0 : at.size() + 1;
            const std::size_t dot = section.find('.', from);
            const std::string key(section.substr(
                from, dot == std::string_view::npos ? std::string_view::npos : dot - from));
            MapReader& parent = m_open.empty() ? m_top : *m_open.back().reader;
            std::string path = at.empty() ? key : at + "." + key;
            auto reader =
                std::make_unique<MapReader>(m_top.context(), parent.child(key.c_str()), path);
            m_open.push_back({std::move(path), std::move(reader)});
        }
        return m_open.empty() ? m_top : *m_open.back().reader;
    }
    void leaveAll() {
        while (!m_open.empty()) {
            m_open.back().reader->finish();
            m_open.pop_back();
        }
    }

  private:
    struct Open {
        std::string path;
        std::unique_ptr<MapReader> reader;
    };
    const std::string& current() const {
        static const std::string kTop;
        return m_open.empty() ? kTop : m_open.back().path;
    }
    MapReader& m_top;
    std::vector<Open> m_open;
};

template <typename T>
void readAs(MapReader& m, const RecipeField& f, Recipe& r) {
    constexpr bool kList = std::is_same_v<T, std::vector<int>> ||
                           std::is_same_v<T, std::vector<std::string>>;  // never optional
    if constexpr (!kList) {
        if (f.optional) {
            std::optional<T> value;
            m.get(f.key, value);
            if (value.has_value()) {
                f.set(r, FieldValue{std::move(*value)});
            }
            return;
        }
    }
    const FieldValue current = f.get(r);
    T value{};
    if (const T* p = std::get_if<T>(&current)) {
        value = *p;
    }
    m.get(f.key, value);
    f.set(r, FieldValue{std::move(value)});
}

void readField(MapReader& m, const RecipeField& f, Recipe& r) {
    switch (f.kind) {
        case FieldKind::Bool:
            readAs<bool>(m, f, r);
            break;
        case FieldKind::Int:
            readAs<int>(m, f, r);
            break;
        case FieldKind::Double:
            readAs<double>(m, f, r);
            break;
        case FieldKind::String:
            readAs<std::string>(m, f, r);
            break;
        case FieldKind::Enum: {
            std::string name;
            if (m.getChoice(f.key, f.choices, name)) {
                f.set(r, FieldValue{std::move(name)});
            }
            break;
        }
        case FieldKind::IntList:
            readAs<std::vector<int>>(m, f, r);
            break;
        case FieldKind::StringList:
            readAs<std::vector<std::string>>(m, f, r);
            break;
    }
}

void readModelHook(MapReader& top, Recipe& r) {
    readModel(top, r.model);
}

// The structured parts, each read right after the table field it follows in the YAML.
struct ReadHook {
    std::string_view after;
    void (*read)(MapReader& section, Recipe& r);
};
constexpr ReadHook kReadHooks[] = {
    {"framework", readModelHook},
    {"environment.nccl_so_path", readEnv},
    {"eval.interval", readEvalDatasets},
    {"analysis.primary_metric", readMetricKinds},
    {"analysis.memory_alarm_gb", readPhaseSeconds},
};

/// Every table field, in order, with the structured parts where they sit.
void readFields(MapReader& top, Recipe& r) {
    SectionReaders readers(top);
    for (const RecipeField& f : recipeFields()) {
        if (f.bespokeYaml) {
            continue;
        }
        MapReader& section = readers.enter(f.section);
        readField(section, f, r);
        for (const ReadHook& hook : kReadHooks) {
            if (hook.after == f.path) {
                hook.read(section, r);
            }
        }
    }
    readers.leaveAll();  // not on an exception: the document is reported broken instead
}

void requireField(const ParseContext& ctx, bool present, const std::string& path, SourceLoc loc,
                  const std::string& what) {
    if (!present) {
        ctx.error(path, loc, "'" + path + "' is required (" + what + ")");
    }
}

}  // namespace

ParseOutcome parseRecipeDetailed(std::string_view text, std::string_view fileName) {
    (void)fileName;
    ParseOutcome outcome;
    Recipe recipe;
    std::optional<YAML::Node> document = detail::loadSingleDocument(text, outcome.diagnostics);
    if (!document.has_value()) {
        return outcome;
    }
    const YAML::Node root = *document;
    ParseContext ctx{&outcome.diagnostics, &recipe.sources};
    if (!root.IsDefined() || root.IsNull()) {
        ctx.error("", SourceLoc{1, 1}, "the recipe is empty (expected 'schema_version: 1')");
        return outcome;
    }
    try {
        MapReader top(ctx, root, "");
        if (!top.isMap()) {
            return outcome;
        }
        const bool hasVersion = top.present("schema_version");
        top.get("schema_version", recipe.schemaVersion);
        if (!hasVersion) {
            ctx.error("schema_version", SourceLoc{1, 1},
                      "'schema_version' is required (this build reads schema_version: 1)");
        } else if (recipe.schemaVersion != kRecipeSchemaVersion) {
            ctx.error("schema_version", recipe.sources.find("schema_version"),
                      "unsupported schema_version " + std::to_string(recipe.schemaVersion) +
                          " (this build reads schema_version: 1)");
        }
        readFields(top, recipe);
        readExtraArgs(top, recipe.extraArgs);
        top.finish();
    } catch (const YAML::Exception& e) {
        // yaml-cpp only throws here on malformed trees; report it at its mark.
        ctx.error("", locOf(e.mark), "YAML error: " + e.msg);
    }
    requireField(ctx, !recipe.model.name.empty() || recipe.model.shape.has_value(), "model.name",
                 recipe.sources.find("model"), "a catalog model name or an inline model.shape");
    // Written but out of range (0 included) is a bound error below, not "required".
    requireField(
        ctx,
        recipe.batch.rolloutBatchSize != 0 || recipe.sources.contains("batch.rollout_batch_size"),
        "batch.rollout_batch_size", recipe.sources.find("batch"), "prompts per rollout step");
    for (auto& v : checkRecipeLimits(recipe)) {
        ctx.error(v.path, recipe.sources.find(v.path), std::move(v.message));
    }
    if (outcome.diagnostics.empty()) {
        outcome.recipe = std::move(recipe);
    }
    return outcome;
}

Result<Recipe> parseRecipe(std::string_view text, std::string_view fileName) {
    ParseOutcome outcome = parseRecipeDetailed(text, fileName);
    if (outcome.recipe.has_value()) {
        return std::move(*outcome.recipe);
    }
    return Error{formatDiagnostics(outcome.diagnostics, fileName)};
}

Result<std::string> readRecipeText(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        return Error{path + ": is a directory, not a recipe file"};
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return Error{path + ": cannot open the recipe file"};
    }
    // Read at most one byte past the limit (the path may be a pipe or /dev/zero).
    std::string text(kMaxRecipeBytes + 1, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(std::size_t(in.gcount()));
    if (in.bad()) {
        return Error{path + ": cannot read the recipe file"};
    }
    if (text.size() > kMaxRecipeBytes) {
        return Error{path + ": the file is over " + std::to_string(kMaxRecipeBytes) +
                     " bytes (256 KiB), the most a recipe may have (a recipe is a few KB)"};
    }
    return text;
}

Result<Recipe> loadRecipe(const std::string& path) {
    Result<std::string> text = readRecipeText(path);
    if (!text.ok()) {
        return Error{text.error()};
    }
    return parseRecipe(*text, path);
}

}  // namespace runplane::plan
