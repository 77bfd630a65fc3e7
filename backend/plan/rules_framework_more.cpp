// Two checks of slime whose conditions live outside slime_validate_args:
// - validate_score_centering_args (slime/utils/score_centering.py, read at THUDM/slime commit
//   2e5cd7cd): score centering (--use-score-centering) runs only on the Megatron backend, with
//   the policy loss, a REINFORCE-family objective, untruncated stochastic sampling and no
//   feature that replaces the sampler's own log-probs (docs/rules.md, check 3);
// - trainer fault tolerance (arguments.py check 49, enabled as training_recovery_enabled in
//   slime/ray/training_recovery.py decides, read at commit 0b0c277d): its replay journal needs a
//   --save-debug-rollout-data path that differs per rollout.
// Every message keeps slime's wording; the settings come from typed fields or extra_args alike.

#include <cmath>
#include <string>

#include "backend/plan/detail/framework_args.h"
#include "backend/plan/detail/rule_context.h"

namespace runplane::plan::detail {
namespace {

constexpr const char* kRule = "algorithm.score-centering";
constexpr const char* kStreamingRollout =
    "slime.rollout.sglang_streaming_rollout.generate_streaming";

void checkTis(const RuleContext& ctx, const RecipeFlags& flags, const std::string& switchField) {
    const BoolSetting tis =
        boolSetting(flags, ctx.recipe.algorithm.useTis, fields::kAlgorithmUseTis, "--use-tis");
    if (!tis.on) {
        return;
    }
    const auto path = flags.value("--custom-tis-function-path");
    if (path && *path != "slime.backends.megatron_utils.loss.vanilla_tis_function" &&
        *path != "slime.backends.megatron_utils.loss.icepop_function") {
        ctx.emitField(kRule, flags.field("--custom-tis-function-path"),
                      "Score centering with --use-tis supports the built-in TIS and "
                      "icepop_function only; custom loss/mask callbacks cannot be applied to the "
                      "head and tail scores (--custom-tis-function-path " +
                          *path + ")",
                      "drop --custom-tis-function-path, or turn score centering off");
    }
    // slime's defaults: --tis-clip 2.0, --tis-clip-low 0.
    const double high = flags.number("--tis-clip").value_or(2.0);
    const double low = flags.number("--tis-clip-low").value_or(0.0);
    if (!std::isfinite(low) || !std::isfinite(high) || low < 0 || high <= 0 || low > high) {
        ctx.emitField(kRule,
                      flags.has("--tis-clip-low") ? flags.field("--tis-clip-low")
                      : flags.has("--tis-clip")   ? flags.field("--tis-clip")
                                                  : switchField,
                      "Score centering IS bounds require finite 0 <= tis_clip_low <= tis_clip and "
                      "tis_clip > 0 (tis_clip_low " +
                          num(low) + ", tis_clip " + num(high) + ")",
                      "set --tis-clip-low and --tis-clip to 0 <= low <= high, high > 0");
    }
}

void checkSampling(const RuleContext& ctx, const RecipeFlags& flags) {
    const double temperature = ctx.recipe.rollout.temperature;
    if (!std::isfinite(temperature) || temperature <= 0) {
        ctx.emit(kRule, fields::kRolloutTemperature,
                 "Score centering requires stochastic sampling (temperature > 0); rollout "
                 "temperature is " +
                     num(temperature),
                 "set rollout.temperature above 0 (1.0 samples the policy itself)");
    }
    struct Untruncated {
        const char* flag;
        const char* key;
        double neutral;
    };
    for (const Untruncated& u : {Untruncated{"--rollout-top-p", "top_p", 1.0},
                                 Untruncated{"--rollout-top-k", "top_k", -1.0}}) {
        const auto value = flags.number(u.flag);
        if (value && *value != u.neutral) {
            ctx.emitField(kRule, flags.field(u.flag),
                          std::string("Score centering requires ") + u.key + "=" + num(u.neutral) +
                              "; truncated sampling is not supported (" + u.flag + " " +
                              num(*value) + ")",
                          std::string("drop ") + u.flag + " (or set it to " + num(u.neutral) + ")");
        }
    }
}

}  // namespace

void checkTrainerRecovery(const RuleContext& ctx, const RecipeFlags& flags) {
    // training_recovery_enabled: durable replay storage (straw transport or saved debug rollout
    // data) on the Megatron backend, rollouts not external, not a debug-only mode.
    // slime's own trainer recovery (training_recovery.py); not applied to miles, whose checks were
    // not read for it and whose public scripts pass --save-debug-rollout-data data.pt.
    if (ctx.recipe.framework != Framework::Slime) {
        return;
    }
    const auto path = flags.value("--save-debug-rollout-data");
    const auto transport = flags.value("--rollout-data-transport");
    const bool replayStorage = path.has_value() || (transport && *transport == "straw");
    const bool enabled = replayStorage && ctx.recipe.trainer.backend == TrainBackend::Megatron &&
                         !flags.on("--rollout-external") && !flags.on("--debug-train-only") &&
                         !flags.on("--debug-rollout-only") &&
                         !flags.has("--load-debug-rollout-data");
    if (enabled && path && path->find("{rollout_id}") == std::string::npos) {
        ctx.emitOneFramework(
            "debug.recovery-rollout-path", flags.field("--save-debug-rollout-data"),
            "Trainer fault tolerance requires a unique --save-debug-rollout-data path "
            "containing {rollout_id} (got " +
                *path + ")",
            "put {rollout_id} in the path, e.g. /data/debug/rollout_{rollout_id}.pt");
    }
}

void checkScoreCentering(const RuleContext& ctx, const RecipeFlags& flags) {
    if (!flags.on("--use-score-centering")) {
        return;
    }
    const Recipe& r = ctx.recipe;
    const std::string switchField = flags.field("--use-score-centering");
    if (r.trainer.backend != TrainBackend::Megatron) {
        ctx.emit(kRule, fields::kTrainerBackend,
                 "Score centering is supported by the Megatron backend only (trainer.backend is " +
                     std::string(toString(r.trainer.backend)) + ")",
                 "set trainer.backend: megatron, or drop --use-score-centering");
    }
    if (flags.value("--custom-generate-function-path") == kStreamingRollout) {
        ctx.emitField(kRule, flags.field("--custom-generate-function-path"),
                      "Score centering does not support streaming rollout.",
                      "use the default generate function, or drop --use-score-centering");
    }
    if (const auto k = flags.number("--score-centering-top-k"); k && *k < 1) {
        ctx.emitField(kRule, flags.field("--score-centering-top-k"),
                      "--score-centering-top-k must be positive (got " + num(*k) + ")",
                      "drop it (slime's default reads the sampler's top 128) or set it >= 1");
    }
    checkTis(ctx, flags, switchField);
    if (const auto loss = flags.value("--loss-type"); loss && *loss != "policy_loss") {
        ctx.emitField(kRule, flags.field("--loss-type"),
                      "--use-score-centering requires --loss-type policy_loss (got " + *loss + ")",
                      "drop --loss-type (policy_loss is the default)");
    }
    struct Exclusive {
        const char* flag;
        bool typed;
        const FieldPath* field;  // the typed field, if any
    };
    for (const Exclusive& e :
         {Exclusive{"--use-opd", r.algorithm.useOpd, &fields::kAlgorithmUseOpd},
          Exclusive{"--use-opsm", false, nullptr},
          Exclusive{"--get-mismatch-metrics", false, nullptr},
          Exclusive{"--use-unbiased-kl", false, nullptr}}) {
        if (e.typed || flags.on(e.flag)) {
            ctx.emitField(kRule, e.typed ? e.field->str() : flags.field(e.flag),
                          std::string("--use-score-centering cannot combine with ") + e.flag + ".",
                          std::string("drop ") + e.flag + " or --use-score-centering");
        }
    }
    if (flags.has("--custom-pg-loss-reducer-function-path")) {
        ctx.emitField(kRule, flags.field("--custom-pg-loss-reducer-function-path"),
                      "Score centering does not support a custom PG reducer.",
                      "drop --custom-pg-loss-reducer-function-path");
    }
    if (flags.has("--rollout-logprob-server-url")) {
        ctx.emitField(kRule, flags.field("--rollout-logprob-server-url"),
                      "Score centering requires original sampler probabilities, not a rollout "
                      "logprob server's recomputation.",
                      "drop --rollout-logprob-server-url");
    }
    const AdvantageEstimator estimator = r.algorithm.advantageEstimator;
    if (estimator == AdvantageEstimator::Gspo || estimator == AdvantageEstimator::Cispo) {
        ctx.emit(kRule, fields::kAlgorithmAdvantageEstimator,
                 "Score centering uses a REINFORCE objective; select grpo or a REINFORCE "
                 "advantage estimator (advantage estimator is " +
                     std::string(toString(estimator)) + ")",
                 "set algorithm.advantage_estimator: grpo (or reinforce_plus_plus)");
    }
    checkSampling(ctx, flags);
}

}  // namespace runplane::plan::detail
