// The export of a recipe whose launcher is miles' `scripts/run_inkling.py` (docs/launch-scripts.md,
// "What the miles launcher decides itself"): its `train` subcommand, its own options, and train.py
// flags in --extra-args only where they differ from what the launcher passes itself.

#include <algorithm>
#include <cctype>
#include <iterator>
#include <set>

#include "backend/launch/export_plan.h"
#include "backend/launch/flag_rules.h"
#include "backend/launch/miles_launcher.h"
#include "backend/launch/shell_text.h"

namespace runplane::plan::launch::detail {
namespace {

// run_inkling.py's own options that carry a recipe field (radixark/miles@067dc320
// scripts/run_inkling.py, ScriptArgs): the option (spelled as the train.py flag whose rule carries
// the field), and the launcher's default as its command line spells it ("" = always written: the
// node shape;
// --num-nodes defaults to SLURM_JOB_NUM_NODES, not to the recipe). An option at the launcher's
// default is left out: the launcher takes that value itself. It has no --tp / --pp / --cp / --ep /
// --etp,
// --n-samples-per-prompt, --lora, --recompute, --model-variant or --hardware.
struct InklingOption {
    const char* option;
    const char* launcherDefault;
};
// (LoRA rank / alpha only with a rank: they matter in --train-mode lora alone)
constexpr InklingOption kInklingOptions[] = {
    {"--num-nodes", ""},
    {"--num-gpus-per-node", ""},  // its 4 is a GB300 node's
    {"--num-rollout", "100"},
    {"--rollout-batch-size", "32"},
    {"--global-batch-size", "64"},
    {"--rollout-max-response-len", "4096"},
    {"--lora-rank", "32"},
    {"--lora-alpha", "32"},
    {"--model-dir", "/root/models"},
};
// run_inkling.py _MODEL_REGISTRY: the --model-name values it takes
constexpr std::string_view kInklingModels[] = {"Inkling", "Inkling-4layer", "Inkling-Small",
                                               "Inkling-Small-4layer"};

}  // namespace

// The rule an option of the recipe's launcher stands for, when it stands for one: for
// run_inkling.py only its options above (its --lr, --hf-checkpoint are no train.py flags).
const FlagRule* launcherOptionRule(const Recipe& r, std::string_view option) {
    if (!isInklingLauncher(r.launcher.script)) {
        return findScriptOption(option) != nullptr ? findScriptOption(option) : findRule(option);
    }
    for (const auto& opt : kInklingOptions) {
        if (option == opt.option) {
            return ruleNamed(opt.option);
        }
    }
    return nullptr;
}

// The export of a `python scripts/run_inkling.py train ...` recipe: its own options where it has
// them, the recipe's extra_args (its options kept verbatim: --model-name, --train-mode, ...), and
// in --extra-args (appended last by the launcher, so they win) every train.py flag whose value
// differs from what the launcher passes itself for those options; a value it passes that
// --extra-args cannot take back (a switch: --colocate, --sequence-parallel) is a warning naming
// the field.
void buildInklingGroups(const Recipe& r, unsigned bits, LaunchPlan& plan) {
    plan.subcommand = "train";
    ArgGroup script{"SCRIPT_ARGS", {}, false};
    std::vector<ScriptFlag> options;  // what the launcher is told, for what it decides from them
    std::set<std::string> asOption;
    for (const auto& opt : kInklingOptions) {
        const FlagRule* rule = ruleNamed(opt.option);
        asOption.insert(rule->field.str());
        std::vector<FlagValues> out;
        if (rule->field.str().rfind("lora.", 0) != 0 || r.lora.rank > 0) {
            emitFor(*rule, r, false, true, out);
        }
        for (auto& fv : out) {
            const bool unset = std::any_of(fv.values.begin(), fv.values.end(),
                                           [](const std::string& v) { return v.empty(); });
            if (fv.flag != opt.option || unset ||
                (*opt.launcherDefault != '\0' && fv.values.size() == 1 &&
                 fv.values[0] == opt.launcherDefault)) {
                continue;
            }
            script.lines.push_back(lineOf(r, fv));
            options.push_back({fv.flag, fv.values, "", 0, false, true, false, false});
        }
    }
    bool modelNamed = false;
    for (const auto& arg : r.extraArgs) {
        if (arg.flag != "--extra-args" && !isSpliceWord(arg.flag)) {
            options.push_back({arg.flag, arg.values, "", 0, false, true, false, false});
            modelNamed = modelNamed || arg.flag == "--model-name";
        }
    }
    if (!modelNamed) {
        const std::string wanted = asciiLower(
            r.model.variant.empty() ? r.model.name : r.model.name + "-" + r.model.variant);
        const auto* hit = std::find_if(std::begin(kInklingModels), std::end(kInklingModels),
                                       [&](std::string_view m) { return asciiLower(m) == wanted; });
        if (hit != std::end(kInklingModels)) {
            FlagValues fv{"--model-name", {std::string(*hit)}};
            script.lines.push_back(lineOf(r, fv));
            options.push_back({fv.flag, fv.values, "", 0, false, true, false, false});
        } else {
            plan.notes.push_back(recipeNote(
                NoteLevel::Warning, "model.name",
                "run_inkling.py takes --model-name Inkling, Inkling-4layer, Inkling-Small or "
                "Inkling-Small-4layer only; model " +
                    r.model.name +
                    " has none of them and extra_args give none, so the launcher "
                    "trains its default (Inkling)"));
        }
    }
    // what the launcher passes itself for these options (miles_launcher.cpp)
    Recipe decided;
    decided.model = r.model;
    decided.cluster.nodes = r.cluster.nodes;
    decided.batch.numEpoch = r.batch.numEpoch;
    std::vector<LaunchNote> decidedNotes;
    readInklingLauncher(options, {}, "", 0, decided, decidedNotes);
    for (const auto& n : decidedNotes) {
        if (n.level != NoteLevel::Info) {
            plan.notes.push_back(recipeNote(n.level, n.field, n.message));
        }
    }
    if (decided.launcher.entryPoint != r.launcher.entryPoint) {
        plan.notes.push_back(recipeNote(
            NoteLevel::Warning, fields::kLauncherEntryPoint.str(),
            "run_inkling.py runs " + decided.launcher.entryPoint +
                " for these options (train_async.py only with --fully-async); the recipe's " +
                r.launcher.entryPoint + " cannot be told to it"));
    }
    ArgGroup extras{"EXTRA_ARGS", {}, false};
    ArgGroup train{"TRAIN_ARGS", {}, true};
    std::set<std::string> warned;
    for (const auto& rule : flagRules()) {
        if ((rule.flavours & kMilesBit) == 0 || rule.emit == nullptr ||
            asOption.count(rule.field.str())) {
            continue;
        }
        std::vector<FlagValues> mine;
        std::vector<FlagValues> its;
        emitFor(rule, r, true, true, mine);
        emitFor(rule, decided, true, true, its);
        for (const auto& fv : mine) {
            const bool passed = std::any_of(its.begin(), its.end(), [&](const FlagValues& d) {
                return d.flag == fv.flag && d.values == fv.values;
            });
            const std::string text = shellJoin(lineOf(r, fv).words);
            // the import keeps a flag verbatim too where the generic export would not write it
            const bool inExtraArgs =
                std::any_of(r.extraArgs.begin(), r.extraArgs.end(), [&](const ExtraArg& a) {
                    return a.flag == "--extra-args" && a.values == std::vector<std::string>{text};
                });
            // a flag the imported script spelled out (launcher.explicit_flags) is written even
            // where the launcher passes the same value
            if ((!passed || writtenExplicitly(r, rule)) && !inExtraArgs) {
                ArgLine line;
                line.words.push_back(text);
                train.lines.push_back(std::move(line));
            }
        }
        for (const auto& d : its) {
            const bool told = std::any_of(mine.begin(), mine.end(),
                                          [&](const FlagValues& fv) { return fv.flag == d.flag; });
            if (!told && warned.insert(rule.field.str()).second) {
                std::vector<std::string> words{d.flag};
                words.insert(words.end(), d.values.begin(), d.values.end());
                plan.notes.push_back(recipeNote(
                    NoteLevel::Warning, rule.field.str(),
                    rule.field.str() + ": run_inkling.py passes " + shellJoin(words) +
                        " itself for these options and --extra-args cannot take it back; the "
                        "recipe's value does not reach the framework"));
            }
        }
    }
    addExtras(r, bits, plan, extras, &train);
    plan.groups.push_back(std::move(script));
    plan.groups.push_back(std::move(extras));
    plan.groups.push_back(std::move(train));
}

}  // namespace runplane::plan::launch::detail
