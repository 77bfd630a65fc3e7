// Recipe -> LaunchPlan: which flag goes into which array, the environment, and the residual
// recipe fields (runplane-meta) that no flag of the chosen flavour carries.

#include "backend/launch/export_plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>

#include "backend/launch/flag_rules.h"
#include "backend/launch/miles_launcher.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

const char* const kBashGroupOrder[] = {"CLUSTER_ARGS", "MODEL_ARGS", "CKPT_ARGS", "ROLLOUT_ARGS",
                                       "EVAL_ARGS",    "PERF_ARGS",  "GRPO_ARGS", "OPTIMIZER_ARGS",
                                       "ENGINE_ARGS",  "LORA_ARGS",  "MISC_ARGS", "EXTRA_ARGS"};

std::string engineGroup(Flavour f) {
    return f == Flavour::Vime ? "VLLM_ARGS" : "SGLANG_ARGS";
}

}  // namespace

LaunchNote recipeNote(NoteLevel level, std::string field, std::string message) {
    LaunchNote n;
    n.level = level;
    n.field = std::move(field);
    n.message = std::move(message);
    return n;
}

namespace {

std::string annotationFor(const ExtraArg& arg) {
    return std::string(kSourceMark) + nlohmann::json(arg.source).dump();
}

bool hasEnv(const Recipe& r, std::string_view key) {
    for (const auto& [k, v] : r.environment.env) {
        if (k == key) {
            return true;
        }
    }
    return false;
}

EnvLine param(std::string name, std::string text) {
    EnvLine e;
    e.name = std::move(name);
    e.valueText = std::move(text);
    return e;
}

EnvLine pinned(std::string name, const std::string& value, bool derived) {
    EnvLine e;
    e.name = std::move(name);
    e.valueText = exportWord(value);
    e.pinned = true;
    e.literal = value;
    e.derived = derived;
    return e;
}

void buildEnv(const Recipe& r, LaunchPlan& plan) {
    if (!hasEnv(r, "MASTER_ADDR")) {
        if (!r.cluster.masterAddr.empty()) {
            plan.env.push_back(pinned("MASTER_ADDR", r.cluster.masterAddr, true));
        } else if (plan.multiNode) {
            plan.env.push_back(param("MASTER_ADDR",
                                     "\"${MASTER_ADDR:?set MASTER_ADDR to the LAN IP of the head "
                                     "node, not 127.0.0.1}\""));
        } else {
            plan.env.push_back(param("MASTER_ADDR", "\"${MASTER_ADDR:-127.0.0.1}\""));
        }
    }
    for (const auto& [key, value] : r.environment.env) {
        plan.env.push_back(pinned(key, value, false));
    }
    if (plan.multiNode) {
        if (!hasEnv(r, "NCCL_SOCKET_IFNAME")) {
            plan.env.push_back(param("NCCL_SOCKET_IFNAME",
                                     "\"${NCCL_SOCKET_IFNAME:?set NCCL_SOCKET_IFNAME to the LAN "
                                     "interface of the nodes, e.g. eth0}\""));
        }
        if (!hasEnv(r, "GLOO_SOCKET_IFNAME")) {
            plan.env.push_back(
                param("GLOO_SOCKET_IFNAME", "\"${GLOO_SOCKET_IFNAME:-${NCCL_SOCKET_IFNAME}}\""));
        }
    }
    if (!r.environment.ncclSoPath.empty()) {
        const char* soVar =
            plan.flavour == Flavour::Vime ? "VLLM_NCCL_SO_PATH" : "SGLANG_NCCL_SO_PATH";
        if (!hasEnv(r, soVar)) {
            plan.env.push_back(pinned(soVar, r.environment.ncclSoPath, true));
        }
        if (!hasEnv(r, "LD_PRELOAD")) {
            plan.env.push_back(pinned("LD_PRELOAD", r.environment.ncclSoPath, true));
        }
    }
    if (plan.milesScript && plan.multiNode && !hasEnv(r, "MILES_SCRIPT_EXTERNAL_RAY")) {
        plan.env.push_back(pinned("MILES_SCRIPT_EXTERNAL_RAY", "1", true));
    }
}

std::string jsonShellText(const std::string& literal) {
    // A JSON string value inside a bash double-quoted string.
    const std::string json = nlohmann::json(literal).dump();  // with its quotes
    std::string text = doubleQuoteEscape(json);
    // ${NAME} parameters expand when the script runs (docs/launch-scripts.md, "Parameters")
    for (std::size_t at = text.find("\\${"); at != std::string::npos;
         at = text.find("\\${", at + 1)) {
        std::size_t end = at + 3;
        while (end < text.size() && isNameChar(text[end])) {
            ++end;
        }
        if (end > at + 3 && end < text.size() && text[end] == '}' && isNameStart(text[at + 3])) {
            text.erase(at, 1);
        }
    }
    return text;
}

void buildRuntimeEnv(const Recipe& r, LaunchPlan& plan) {
    auto valueOf = [&](const std::string& key, const std::string& standard) -> std::string {
        for (const auto& e : plan.env) {
            if (e.name == key) {
                return e.pinned ? jsonShellText(e.literal) : "\\\"${" + key + "}\\\"";
            }
        }
        return jsonShellText(standard);
    };
    std::set<std::string> done;
    auto add = [&](const std::string& key, const std::string& standard) {
        plan.runtimeEnv.emplace_back(key, valueOf(key, standard));
        done.insert(key);
    };
    add("PYTHONPATH", "/root/Megatron-LM/");
    add("CUDA_DEVICE_MAX_CONNECTIONS", "1");
    add("NCCL_NVLS_ENABLE", r.hardware.nvlink ? "1" : "0");
    for (const auto& e : plan.env) {
        if (!done.count(e.name)) {
            add(e.name, "");
        }
    }
}

// The flag's words as the export writes them: an alias the recipe recorded
// (launcher.flag_spellings) instead of the rule's spelling.
}  // namespace

ArgLine lineOf(const Recipe& r, const FlagValues& fv) {
    ArgLine line;
    line.words.push_back(spelledFlag(r, fv.flag));
    line.words.insert(line.words.end(), fv.values.begin(), fv.values.end());
    return line;
}

namespace {

// A recorded spelling that is no alias of a rule's flag cannot be written: say so, by its index.
void noteSpellings(const Recipe& r, LaunchPlan& plan) {
    const auto& spellings = r.launcher.flagSpellings;
    for (std::size_t i = 0; i < spellings.size(); ++i) {
        if (isFlagAlias(spellings[i])) {
            continue;
        }
        const std::string where =
            fields::kLauncherFlagSpellings.str() + "[" + std::to_string(i) + "]";
        plan.notes.push_back(recipeNote(NoteLevel::Warning, where,
                                        where + ": '" + spellings[i] +
                                            "' is not another spelling of an engine flag; "
                                            "ignored (the flags are written as the rules spell "
                                            "them)"));
    }
}

void noteUnavailable(const Recipe& r, unsigned bits, LaunchPlan& plan) {
    std::set<std::string> reported;
    for (const auto& rule : flagRules()) {
        // launcher options (kScriptBit only) are no framework's flags: nothing to report
        if ((rule.flavours & bits) != 0 || (rule.flavours & kTrainBits) == 0 ||
            rule.emit == nullptr || reported.count(rule.field.str())) {
            continue;
        }
        std::vector<FlagValues> out;
        rule.emit(rule, r, false, out);
        if (out.empty() || fieldHasFlag(rule.field.view(), bits)) {
            continue;
        }
        reported.insert(rule.field.str());
        plan.notes.push_back(recipeNote(
            NoteLevel::Warning, rule.field.str(),
            rule.field.str() + " is set but " + toString(plan.flavour) + " has no flag for it (" +
                rule.flag + " belongs to another framework); it is " +
                "kept in the runplane-meta block only and the framework will not see it"));
    }
}

}  // namespace

void addExtras(const Recipe& r, unsigned bits, LaunchPlan& plan, ArgGroup& extras,
               ArgGroup* trainArgs) {
    for (std::size_t i = 0; i < r.extraArgs.size(); ++i) {
        const ExtraArg& arg = r.extraArgs[i];
        const std::string where = "extra_args[" + std::to_string(i) + "]";
        if (arg.flag == "--extra-args") {
            ArgLine line;
            std::string text;
            for (const auto& v : arg.values) {
                text += (text.empty() ? "" : " ") + v;
            }
            line.annotation = annotationFor(arg);
            if (trainArgs != nullptr) {
                line.words.push_back(text);
                trainArgs->lines.push_back(std::move(line));
                continue;
            }
            auto words = shellSplit(text);
            if (!words.ok()) {
                plan.notes.push_back(
                    recipeNote(NoteLevel::Error, where, where + ": --extra-args " + words.error()));
                continue;
            }
            line.words = std::move(*words);
            plan.notes.push_back(recipeNote(
                NoteLevel::Info, where,
                where + ": flags meant for the miles launcher's --extra-args are written as "
                        "plain train.py flags in a bash export"));
            extras.lines.push_back(std::move(line));
            continue;
        }
        const FlagRule* rule =
            plan.milesScript ? launcherOptionRule(r, arg.flag) : findRule(arg.flag);
        if (rule != nullptr && (rule->flavours & bits) != 0 && rule->apply != nullptr) {
            plan.notes.push_back(
                recipeNote(NoteLevel::Warning, where,
                           where + " repeats " + arg.flag + ", which the recipe models as " +
                               rule->field.str() + "; import will read it back into that field"));
        }
        ArgLine line;
        line.words.push_back(arg.flag);
        line.words.insert(line.words.end(), arg.values.begin(), arg.values.end());
        line.annotation = annotationFor(arg);
        extras.lines.push_back(std::move(line));
    }
}

namespace {

void buildBashGroups(const Recipe& r, unsigned bits, LaunchPlan& plan) {
    for (const char* name : kBashGroupOrder) {
        ArgGroup g;
        g.name = std::string(name) == "ENGINE_ARGS" ? engineGroup(plan.flavour) : name;
        plan.groups.push_back(std::move(g));
    }
    auto group = [&](const std::string& name) -> ArgGroup& {
        const std::string real = name == "ENGINE_ARGS" ? engineGroup(plan.flavour) : name;
        for (auto& g : plan.groups) {
            if (g.name == real) {
                return g;
            }
        }
        return plan.groups.back();
    };
    for (const auto& rule : flagRules()) {
        if ((rule.flavours & bits) == 0 || rule.emit == nullptr) {
            continue;
        }
        std::vector<FlagValues> out;
        rule.emit(rule, r, rule.alwaysInBash || writtenExplicitly(r, rule), out);
        for (const auto& fv : out) {
            group(rule.group).lines.push_back(lineOf(r, fv));
        }
    }
    addExtras(r, bits, plan, group("EXTRA_ARGS"), nullptr);
}

void buildScriptGroups(const Recipe& r, unsigned bits, LaunchPlan& plan) {
    ArgGroup script{"SCRIPT_ARGS", {}, false};
    std::set<std::string> asOption;
    for (const auto& opt : scriptOptions()) {
        const FlagRule* rule = findScriptOption(opt.option);
        asOption.insert(rule->field.str());
        std::vector<FlagValues> out;
        rule->emit(*rule, r, opt.always || writtenExplicitly(r, *rule), out);
        for (auto& fv : out) {
            fv.flag = opt.option;
            script.lines.push_back(lineOf(r, fv));
        }
    }
    if (const MilesLauncherFacts* facts = milesLauncherFacts(r.launcher.script);
        facts != nullptr && !facts->hardware.empty() &&
        std::find(facts->hardware.begin(), facts->hardware.end(), r.hardware.gpu) ==
            facts->hardware.end()) {
        std::string choices;
        for (const auto& h : facts->hardware) {
            choices += (choices.empty() ? "" : " or ") + std::string(h);
        }
        plan.notes.push_back(recipeNote(NoteLevel::Warning, "hardware.gpu",
                                        std::string(facts->script) + " takes --hardware " +
                                            choices + " only; hardware.gpu " + r.hardware.gpu +
                                            " is written and its option parser will refuse it"));
    }
    ArgGroup extras{"EXTRA_ARGS", {}, false};
    ArgGroup train{"TRAIN_ARGS", {}, true};
    for (const auto& rule : flagRules()) {
        if ((rule.flavours & kMilesBit) == 0 || rule.emit == nullptr ||
            asOption.count(rule.field.str())) {
            continue;
        }
        std::vector<FlagValues> out;
        // The launcher passes an engine memory fraction of its own (run_qwen3_8.py: 0.7) before
        // --extra-args: the recipe's is always written, so the engines run with the plan's.
        emitFor(rule, r, true, alwaysInExtraArgs(rule.field.view()) || writtenExplicitly(r, rule),
                out);
        for (const auto& fv : out) {
            ArgLine line;
            std::vector<std::string> words = lineOf(r, fv).words;
            line.words.push_back(shellJoin(words));
            train.lines.push_back(std::move(line));
        }
    }
    addExtras(r, bits, plan, extras, &train);
    plan.groups.push_back(std::move(script));
    plan.groups.push_back(std::move(extras));
    plan.groups.push_back(std::move(train));
}

std::string buildMeta(const Recipe& r, unsigned bits, Flavour flavour) {
    Recipe m;
    m.model = r.model;
    m.batch.rolloutBatchSize = r.batch.rolloutBatchSize;  // required by the parser; flag-carried
    for (const auto& slot : fieldSlots()) {
        if (isReconciledField(slot.path.view()) || !fieldHasFlag(slot.path.view(), bits)) {
            slot.copy(r, m);
        }
    }
    std::string out = std::string("# ") + kFlavourPrefix + toString(flavour) + "\n";
    std::istringstream yaml(writeRecipe(m));
    std::string line;
    while (std::getline(yaml, line)) {
        out += std::string("# ") + kMetaPrefix + line + "\n";
    }
    return out;
}

}  // namespace

std::string modelFileStem(const Recipe& r, const ModelCatalog* catalog) {
    if (r.model.shape.has_value()) {
        return r.model.shape->name;
    }
    if (catalog != nullptr) {
        if (const ModelShape* shape = catalog->find(r.model.name)) {
            const std::string variant =
                r.model.variant.empty() ? shape->defaultVariant : r.model.variant;
            if (const ModelVariant* v = shape->findVariant(variant)) {
                if (!v->megatronModelType.empty()) {
                    return v->megatronModelType;
                }
            }
        }
    }
    return r.model.variant.empty() ? r.model.name : r.model.name + "_" + r.model.variant;
}

LaunchPlan buildPlan(const Recipe& r, Flavour flavour, const ExportOptions& options) {
    LaunchPlan plan;
    plan.flavour = flavour;
    plan.nodes = r.cluster.nodes;
    plan.gpusPerNode = r.hardware.gpusPerNode;
    plan.multiNode = r.cluster.nodes > 1;
    plan.workdir = r.launcher.workdir;
    plan.preLaunch = r.launcher.preLaunch;
    plan.rayStartArgs = r.launcher.rayStartArgs;
    plan.rayStop = r.launcher.rayStop;
    plan.rayStopArgs = r.launcher.rayStopArgs;
    plan.raySubmitArgs = r.launcher.raySubmitArgs;
    const LauncherKind kind = effectiveLauncher(r);
    if (flavour == Flavour::Miles && kind == LauncherKind::MilesScript) {
        if (r.launcher.script.empty()) {
            plan.notes.push_back(recipeNote(
                NoteLevel::Warning, "launcher.script",
                "the miles launcher is selected but launcher.script is empty; writing a bash "
                "launcher with train.py instead"));
        } else {
            plan.milesScript = true;
        }
    }
    if (kind == LauncherKind::Command) {
        plan.notes.push_back(recipeNote(
            NoteLevel::Warning, "launcher.kind",
            "launcher kind 'command' names its own program; the export runs the framework's "
            "train.py with the recipe's flags and keeps launcher.argv in runplane-meta only"));
    }
    if (r.framework != Framework::Miles && flavour == Flavour::Miles) {
        plan.notes.push_back(recipeNote(
            NoteLevel::Info, "framework",
            std::string("recipe framework is ") + toString(r.framework) + ", writing miles flags"));
    }
    const RolloutEngine flagsEngine =
        flavour == Flavour::Vime ? RolloutEngine::Vllm : RolloutEngine::Sglang;
    if (effectiveEngine(r) != flagsEngine) {
        plan.notes.push_back(recipeNote(
            NoteLevel::Warning, "rollout.engine",
            std::string("the recipe's rollout engine is ") + toString(effectiveEngine(r)) +
                " but " + toString(flavour) + " drives " + toString(flagsEngine) +
                "; engine settings are written as " + toString(flagsEngine) + " flags"));
    }
    plan.python = plan.milesScript ? "python" : "python3";
    plan.program = plan.milesScript ? r.launcher.script
                                    : (r.launcher.entryPoint.empty() ? std::string("train.py")
                                                                     : r.launcher.entryPoint);
    const unsigned bits = flavourBit(flavour) | (plan.milesScript ? kScriptBit : 0U);
    if (!plan.milesScript) {
        // FSDP builds the model from the --hf-checkpoint config: no MODEL_ARGS (as slime's
        // run-qwen3-30B-A3B-fsdp.sh, which sources the model file but never splices it)
        const bool fsdp = r.trainer.backend == TrainBackend::Fsdp;
        // the model's flags written in the script itself (MODEL_ARGS=(...) inline, no model
        // file: issue 45) travel in extra_args; sourcing a model file would repeat them
        const bool inlineModelFlags =
            std::any_of(r.extraArgs.begin(), r.extraArgs.end(),
                        [](const ExtraArg& e) { return e.flag == "--num-layers"; });
        plan.modelFile =
            fsdp || inlineModelFlags ? std::string() : modelFileStem(r, options.catalog);
        if (!fsdp && !inlineModelFlags && r.model.shape.has_value()) {
            plan.notes.push_back(
                recipeNote(NoteLevel::Warning, "model.shape",
                           "the recipe's model is an inline shape; the script sources models/" +
                               plan.modelFile + ".sh, which must hold its MODEL_ARGS"));
        }
        buildBashGroups(r, bits, plan);
        if (fsdp || inlineModelFlags) {
            std::erase_if(plan.groups, [](const ArgGroup& g) { return g.name == "MODEL_ARGS"; });
        }
    } else if (isInklingLauncher(r.launcher.script)) {
        buildInklingGroups(r, bits, plan);
    } else {
        buildScriptGroups(r, bits, plan);
    }
    noteUnavailable(r, bits, plan);
    noteSpellings(r, plan);
    buildEnv(r, plan);
    if (!plan.milesScript) {
        buildRuntimeEnv(r, plan);
    }
    plan.metaBlock = buildMeta(r, bits, flavour);
    return plan;
}

std::vector<std::string> LaunchPlan::expectedArgv(const std::vector<std::string>& modelArgs) const {
    std::vector<std::string> argv;
    if (!subcommand.empty()) {
        argv.push_back(subcommand);
    }
    std::string trainText;
    for (const auto& g : groups) {
        if (g.name == "MODEL_ARGS") {
            argv.insert(argv.end(), modelArgs.begin(), modelArgs.end());
            continue;
        }
        for (const auto& line : g.lines) {
            if (g.shellTextElements) {
                trainText += (trainText.empty() ? "" : " ") + line.words.front();
            } else {
                argv.insert(argv.end(), line.words.begin(), line.words.end());
            }
        }
    }
    if (!trainText.empty()) {
        argv.push_back("--extra-args");
        argv.push_back(trainText);
    }
    return argv;
}

}  // namespace runplane::plan::launch::detail
