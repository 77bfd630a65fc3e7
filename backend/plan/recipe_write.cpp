// Recipe -> YAML: schema order, only fields that differ from their default, so a written recipe
// reads like a hand-written one and parse(write(r)) == r. The scalar fields come from walking the
// field table (recipe_fields.h); the structured parts are written at their place in the walk.

#include <memory>
#include <optional>

#include "backend/plan/detail/model_shape_yaml.h"
#include "backend/plan/detail/yaml_support.h"
#include "backend/plan/recipe.h"
#include "backend/plan/recipe_fields.h"

namespace runplane::plan {
namespace {

using detail::SectionWriter;

void writeModel(SectionWriter& top, const ModelRef& m) {
    SectionWriter w(top.emitter(), "model", &top);
    w.field("name", m.name);
    w.field("variant", m.variant);
    if (m.shape.has_value()) {
        SectionWriter s(top.emitter(), "shape", &w);
        detail::writeModelShape(s, *m.shape);
        s.open();
    }
}

void writeModelHook(SectionWriter& top, const Recipe& r) {
    writeModel(top, r.model);
}

// environment.env, after environment.nccl_so_path.
void writeEnv(SectionWriter& section, const Recipe& r) {
    if (r.environment.env.empty()) {
        return;
    }
    SectionWriter vars(section.emitter(), "env", &section);
    for (const auto& [key, value] : r.environment.env) {
        vars.keyLine(key.c_str());
        detail::emitString(section.emitter(), value);
    }
}

// eval.datasets, after eval.interval.
void writeEvalDatasets(SectionWriter& section, const Recipe& r) {
    if (r.eval.datasets.empty()) {
        return;
    }
    section.keyLine("datasets");
    YAML::Emitter& out = section.emitter();
    out << YAML::BeginSeq;
    for (const auto& dataset : r.eval.datasets) {
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value;
        detail::emitString(out, dataset.name);
        out << YAML::Key << "path" << YAML::Value;
        detail::emitString(out, dataset.path);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
}

// analysis.metric_kinds, after analysis.primary_metric.
void writeMetricKinds(SectionWriter& section, const Recipe& r) {
    if (r.analysis.metricKinds.empty()) {
        return;
    }
    SectionWriter kinds(section.emitter(), "metric_kinds", &section);
    YAML::Emitter& out = section.emitter();
    for (const metrics::KindOverride& o : r.analysis.metricKinds) {
        kinds.keyLine(o.pattern.c_str());
        if (o.direction.has_value()) {
            out << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value
                << detail::enumName(o.kind) << YAML::Key << "direction" << YAML::Value
                << detail::enumName(*o.direction) << YAML::EndMap;
        } else {
            out << detail::enumName(o.kind);
        }
    }
}

// analysis.phase_seconds, after analysis.memory_alarm_gb.
void writePhaseSeconds(SectionWriter& section, const Recipe& r) {
    if (r.analysis.phaseSeconds.empty()) {
        return;
    }
    SectionWriter phases(section.emitter(), "phase_seconds", &section);
    for (const auto& [phase, seconds] : r.analysis.phaseSeconds) {
        phases.field(phase.c_str(), std::optional<double>(seconds));
    }
}

// The structured parts, each written right after the table field it follows.
struct WriteHook {
    std::string_view after;
    void (*write)(SectionWriter& section, const Recipe& r);
};
constexpr WriteHook kWriteHooks[] = {
    {"framework", writeModelHook},
    {"environment.nccl_so_path", writeEnv},
    {"eval.interval", writeEvalDatasets},
    {"analysis.primary_metric", writeMetricKinds},
    {"analysis.memory_alarm_gb", writePhaseSeconds},
};

/// The writers of the sections the table walk is in, outermost first (a section's key line is
/// written only when its first non-default field arrives).
class SectionWriters {
  public:
    explicit SectionWriters(SectionWriter& top) : m_top(top) {}
    ~SectionWriters() { leaveAll(); }
    SectionWriters(const SectionWriters&) = delete;
    SectionWriters& operator=(const SectionWriters&) = delete;

    SectionWriter& enter(std::string_view section) {
        while (!m_open.empty() && section != m_open.back()->path &&
               !(section.starts_with(m_open.back()->path) &&
                 section.size() > m_open.back()->path.size() &&
                 section[m_open.back()->path.size()] == '.')) {
            m_open.pop_back();  // closes its mapping
        }
        while ((m_open.empty() ? std::string_view() : std::string_view(m_open.back()->path)) !=
               section) {
            const std::string at = m_open.empty() ? std::string() : m_open.back()->path;
            const std::size_t from = at.empty() ? 0 : at.size() + 1;
            const std::size_t dot = section.find('.', from);
            auto open = std::make_unique<Open>();
            open->key = std::string(section.substr(
                from, dot == std::string_view::npos ? std::string_view::npos : dot - from));
            open->path = at.empty() ? open->key : at + "." + open->key;
            SectionWriter& parent = m_open.empty() ? m_top : *m_open.back()->writer;
            open->writer =
                std::make_unique<SectionWriter>(m_top.emitter(), open->key.c_str(), &parent);
            m_open.push_back(std::move(open));
        }
        return m_open.empty() ? m_top : *m_open.back()->writer;
    }
    void leaveAll() {
        while (!m_open.empty()) {
            m_open.pop_back();
        }
    }

  private:
    struct Open {
        std::string key;  // the writer keeps a pointer to it
        std::string path;
        std::unique_ptr<SectionWriter> writer;
    };
    SectionWriter& m_top;
    std::vector<std::unique_ptr<Open>> m_open;
};

void writeField(SectionWriter& w, const RecipeField& f, const Recipe& r) {
    const FieldValue value = f.get(r);
    if (std::holds_alternative<std::monostate>(value)) {
        return;  // an optional field left unset
    }
    if (!f.optional && !f.alwaysWritten && value == f.defaultValue()) {
        return;
    }
    w.keyLine(f.key);
    YAML::Emitter& out = w.emitter();
    if (const auto* b = std::get_if<bool>(&value)) {
        out << (*b ? "true" : "false");
    } else if (const auto* i = std::get_if<int>(&value)) {
        out << *i;
    } else if (const auto* d = std::get_if<double>(&value)) {
        out << detail::formatDouble(*d);
    } else if (const auto* s = std::get_if<std::string>(&value)) {
        if (f.kind == FieldKind::Enum) {
            out << *s;
        } else {
            detail::emitString(out, *s);
        }
    } else if (const auto* ints = std::get_if<std::vector<int>>(&value)) {
        out << YAML::Flow << YAML::BeginSeq;
        for (int v : *ints) {
            out << v;
        }
        out << YAML::EndSeq;
    } else if (const auto* words = std::get_if<std::vector<std::string>>(&value)) {
        out << YAML::Flow << YAML::BeginSeq;
        for (const auto& v : *words) {
            detail::emitString(out, v);
        }
        out << YAML::EndSeq;
    }
}

/// Every table field, in order, with the structured parts where they sit.
void writeFields(SectionWriter& top, const Recipe& r) {
    SectionWriters writers(top);
    for (const RecipeField& f : recipeFields()) {
        if (f.bespokeYaml) {
            continue;
        }
        SectionWriter& section = writers.enter(f.section);
        writeField(section, f, r);
        for (const WriteHook& hook : kWriteHooks) {
            if (hook.after == f.path) {
                hook.write(section, r);
            }
        }
    }
}

bool plainWords(const ExtraArg& arg) {
    if (!arg.source.empty() || arg.flag.empty()) {
        return false;
    }
    for (const auto& v : arg.values) {
        if (v.empty() || v.find_first_of(" \t\n") != std::string::npos) {
            return false;
        }
    }
    return arg.flag.find_first_of(" \t\n") == std::string::npos;
}

void writeExtraArgs(SectionWriter& top, const std::vector<ExtraArg>& args) {
    if (args.empty()) {
        return;
    }
    top.keyLine("extra_args");
    YAML::Emitter& out = top.emitter();
    out << YAML::BeginSeq;
    for (const auto& arg : args) {
        if (plainWords(arg)) {
            std::string line = arg.flag;
            for (const auto& v : arg.values) {
                line += ' ';
                line += v;
            }
            detail::emitString(out, line);
            continue;
        }
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "flag" << YAML::Value;
        detail::emitString(out, arg.flag);
        if (!arg.values.empty()) {
            out << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq;
            for (const auto& v : arg.values) {
                detail::emitString(out, v);
            }
            out << YAML::EndSeq;
        }
        if (!arg.source.empty()) {
            out << YAML::Key << "source" << YAML::Value;
            detail::emitString(out, arg.source);
        }
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
}

}  // namespace

std::string writeRecipe(const Recipe& r) {
    YAML::Emitter out;
    out.SetIndent(2);
    {
        SectionWriter top(out, nullptr);
        top.keyLine("schema_version");
        out << r.schemaVersion;
        writeFields(top, r);
        writeExtraArgs(top, r.extraArgs);
    }
    std::string text = out.c_str();
    text += '\n';
    return text;
}

}  // namespace runplane::plan
