#include "compute/smoke/smoke_config.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>

namespace runplane::smoke {
namespace {

// One flag: its name, whether it takes a value, how to apply the value, and a help line.
struct FlagSpec {
    std::string name;
    bool takesValue = true;
    std::string valueName;
    std::string help;
    std::function<Status(SmokeConfig&, const std::string&)> apply;
};

Status flagError(const std::string& flag, const std::string& value, const std::string& why) {
    return Error{"runplane-smoke: " + flag + " " + (value.empty() ? "''" : value) + ": " + why};
}

std::function<Status(SmokeConfig&, const std::string&)> intFlag(const std::string& flag,
                                                                int SmokeConfig::*field,
                                                                long long lo, long long hi) {
    return [flag, field, lo, hi](SmokeConfig& c, const std::string& v) -> Status {
        long long parsed = 0;
        const char* end = v.data() + v.size();
        auto [ptr, ec] = std::from_chars(v.data(), end, parsed);
        if (ec != std::errc() || ptr != end || v.empty()) {
            return flagError(flag, v, "expected an integer");
        }
        if (parsed < lo || parsed > hi) {
            return flagError(flag, v,
                             "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        }
        c.*field = static_cast<int>(parsed);
        return {};
    };
}

std::function<Status(SmokeConfig&, const std::string&)> doubleFlag(const std::string& flag,
                                                                   double SmokeConfig::*field,
                                                                   double lo, double hi) {
    return [flag, field, lo, hi](SmokeConfig& c, const std::string& v) -> Status {
        double parsed = 0;
        const char* end = v.data() + v.size();
        auto [ptr, ec] = std::from_chars(v.data(), end, parsed);
        if (ec != std::errc() || ptr != end || v.empty() || !std::isfinite(parsed)) {
            return flagError(flag, v, "expected a number");
        }
        if (parsed < lo || parsed > hi) {
            std::ostringstream range;
            range << "must be in [" << lo << ", " << hi << "]";
            return flagError(flag, v, range.str());
        }
        c.*field = parsed;
        return {};
    };
}

const std::vector<FlagSpec>& flagSpecs() {
    static const std::vector<FlagSpec> specs = [] {
        std::vector<FlagSpec> s;
        auto add = [&s](std::string name, std::string valueName, std::string help,
                        std::function<Status(SmokeConfig&, const std::string&)> apply) {
            s.push_back(
                {std::move(name), true, std::move(valueName), std::move(help), std::move(apply)});
        };
        add("--layers", "N", "transformer layers (default 4, mirrors the 4layer smoke variant)",
            intFlag("--layers", &SmokeConfig::layers, 1, 64));
        add("--d-model", "N", "hidden size (default 64; a multiple of the 4 heads)",
            intFlag("--d-model", &SmokeConfig::dModel, 8, 4096));
        add("--digits", "N", "operand digits of the addition task (default 2)",
            intFlag("--digits", &SmokeConfig::digits, 1, 8));
        add("--eval-size", "N", "held-out evaluation prompts (default 500)",
            intFlag("--eval-size", &SmokeConfig::evalSize, 1, 100000));
        add("--sft-target-accuracy", "X",
            "stop the warm start once greedy accuracy on training prompts reaches X, checked "
            "every 25 steps; 0 = always run --sft-steps (default 0.3)",
            doubleFlag("--sft-target-accuracy", &SmokeConfig::sftTargetAccuracy, 0.0, 1.0));
        add("--sft-steps", "N", "maximum supervised warm-start steps (default 600)",
            intFlag("--sft-steps", &SmokeConfig::sftSteps, 0, 1000000));
        add("--sft-lr", "X", "warm-start Adam learning rate (default 3e-3)",
            doubleFlag("--sft-lr", &SmokeConfig::sftLr, 0.0, 1.0));
        add("--rollout-batch-size", "N", "prompts per rollout (default 64)",
            intFlag("--rollout-batch-size", &SmokeConfig::rolloutBatchSize, 1, 1 << 20));
        add("--n-samples-per-prompt", "N", "sampled answers per prompt, the GRPO group (default 8)",
            intFlag("--n-samples-per-prompt", &SmokeConfig::nSamplesPerPrompt, 1, 1 << 16));
        add("--global-batch-size", "N",
            "samples per optimizer step (default 128); rollout_batch_size x n_samples_per_prompt "
            "must be a multiple",
            intFlag("--global-batch-size", &SmokeConfig::globalBatchSize, 1, 1 << 30));
        add("--rl-steps", "N", "rollouts of the RL phase (slime --num-rollout; default 40)",
            intFlag("--rl-steps", &SmokeConfig::rlSteps, 0, 1000000));
        add("--eval-interval", "N", "evaluate after every N rollouts (default 5)",
            intFlag("--eval-interval", &SmokeConfig::evalInterval, 1, 1000000));
        add("--lr", "X", "RL (LoRA) Adam learning rate (default 2e-3)",
            doubleFlag("--lr", &SmokeConfig::rlLr, 0.0, 1.0));
        add("--temperature", "X", "rollout sampling temperature (default 0.3; eval is greedy)",
            doubleFlag("--temperature", &SmokeConfig::temperature, 0.05, 10.0));
        add("--lora-rank", "N", "LoRA rank on attention q,k,v,o (default 8)",
            intFlag("--lora-rank", &SmokeConfig::loraRank, 1, 1024));
        add("--lora-alpha", "X", "LoRA alpha; adapters are scaled by alpha/rank (default 16)",
            doubleFlag("--lora-alpha", &SmokeConfig::loraAlpha, 1e-6, 1e6));
        add("--backup-mode", "zero_copy|clone",
            "how weight sync reads the host mirror (default zero_copy)",
            [](SmokeConfig& c, const std::string& v) -> Status {
                if (v == "zero_copy") {
                    c.backupMode = BackupMode::kZeroCopy;
                } else if (v == "clone") {
                    c.backupMode = BackupMode::kClone;
                } else {
                    return flagError("--backup-mode", v, "expected zero_copy or clone");
                }
                return {};
            });
        add("--backup-scale-mb", "N",
            "MiB of stand-in model state backed up each phase (default 128)",
            intFlag("--backup-scale-mb", &SmokeConfig::backupScaleMb, 0, 1 << 20));
        add("--seed", "N", "random seed (default 1)",
            [](SmokeConfig& c, const std::string& v) -> Status {
                std::uint64_t parsed = 0;
                const char* end = v.data() + v.size();
                auto [ptr, ec] = std::from_chars(v.data(), end, parsed);
                if (ec != std::errc() || ptr != end || v.empty()) {
                    return flagError("--seed", v, "expected a non-negative integer");
                }
                c.seed = parsed;
                return {};
            });
        add("--device", "cpu|cuda", "device for trainer and rollout engine (default cpu)",
            [](SmokeConfig& c, const std::string& v) -> Status {
                if (v == "cpu") {
                    c.device = DeviceKind::kCpu;
                } else if (v == "cuda") {
                    c.device = DeviceKind::kCuda;
                } else {
                    return flagError("--device", v, "expected cpu or cuda");
                }
                return {};
            });
        add("--threads", "N", "intra-op CPU threads (default 1: fastest for these small matrices)",
            intFlag("--threads", &SmokeConfig::threads, 1, 1024));
        add("--metrics-jsonl", "PATH", "also append every metrics line as JSON to PATH",
            [](SmokeConfig& c, const std::string& v) -> Status {
                if (v.empty()) {
                    return flagError("--metrics-jsonl", v, "expected a file path");
                }
                c.metricsJsonl = v;
                return {};
            });
        s.push_back({"--lora-base-cpu-backup", false, "",
                     "mirror the engine's base weights to host while it sleeps (default on)",
                     [](SmokeConfig& c, const std::string&) -> Status {
                         c.loraBaseCpuBackup = true;
                         return {};
                     }});
        s.push_back({"--no-lora-base-cpu-backup", false, "",
                     "no host mirror: every weight sync re-sends the base weights",
                     [](SmokeConfig& c, const std::string&) -> Status {
                         c.loraBaseCpuBackup = false;
                         return {};
                     }});
        s.push_back({"--help", false, "", "print this help and exit",
                     [](SmokeConfig& c, const std::string&) -> Status {
                         c.helpRequested = true;
                         return {};
                     }});
        return s;
    }();
    return specs;
}

}  // namespace

const char* backupModeName(BackupMode mode) {
    return mode == BackupMode::kClone ? "clone" : "zero_copy";
}

const char* deviceName(DeviceKind device) {
    return device == DeviceKind::kCuda ? "cuda" : "cpu";
}

std::string smokeUsage() {
    std::ostringstream out;
    out << "usage: runplane-smoke [flags]\n"
           "A small real GRPO + LoRA post-training run on synthetic addition (see "
           "docs/smoke-workload.md).\n\n";
    for (const FlagSpec& spec : flagSpecs()) {
        std::string left = spec.name + (spec.takesValue ? " " + spec.valueName : "");
        out << "  " << left;
        out << std::string(left.size() < 34 ? 34 - left.size() : 1, ' ') << spec.help << "\n";
    }
    return out.str();
}

Status validateSmokeConfig(const SmokeConfig& c) {
    const long long samples = static_cast<long long>(c.rolloutBatchSize) * c.nSamplesPerPrompt;
    if (c.globalBatchSize > samples || samples % c.globalBatchSize != 0) {
        return Error{
            "runplane-smoke: --global-batch-size " + std::to_string(c.globalBatchSize) +
            ": rollout_batch_size x n_samples_per_prompt = " + std::to_string(c.rolloutBatchSize) +
            " x " + std::to_string(c.nSamplesPerPrompt) + " = " + std::to_string(samples) +
            " must equal global_batch_size x num_steps_per_rollout for a whole number "
            "of steps >= 1 (choose a divisor of " +
            std::to_string(samples) + ")"};
    }
    if (c.dModel % c.heads != 0) {
        return Error{"runplane-smoke: --d-model " + std::to_string(c.dModel) +
                     ": must be a multiple of the " + std::to_string(c.heads) + " attention heads"};
    }
    if (c.loraRank > c.dModel) {
        return Error{"runplane-smoke: --lora-rank " + std::to_string(c.loraRank) +
                     ": must not exceed --d-model " + std::to_string(c.dModel)};
    }
    long long pairs = 1;
    for (int i = 0; i < c.digits; ++i) {
        pairs *= 10;
    }
    pairs *= pairs;
    if (static_cast<long long>(c.evalSize) * 4 > pairs) {
        return Error{"runplane-smoke: --eval-size " + std::to_string(c.evalSize) +
                     ": too large for --digits " + std::to_string(c.digits) + " (" +
                     std::to_string(pairs) +
                     " problems; the held-out set may use at most a quarter of them)"};
    }
    return {};
}

Result<SmokeConfig> parseSmokeArgs(const std::vector<std::string>& args) {
    SmokeConfig config;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        std::string name = arg;
        std::string value;
        bool inlineValue = false;
        if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
            inlineValue = true;
        }
        const FlagSpec* spec = nullptr;
        for (const FlagSpec& candidate : flagSpecs()) {
            if (candidate.name == name) {
                spec = &candidate;
                break;
            }
        }
        if (spec == nullptr) {
            if (arg.rfind("--", 0) != 0) {
                return Error{"runplane-smoke: unexpected argument '" + arg +
                             "' (flags look like --name value; see --help)"};
            }
            return Error{"runplane-smoke: unknown flag " + name + " (see --help)"};
        }
        if (spec->takesValue && !inlineValue) {
            if (i + 1 >= args.size()) {
                return Error{"runplane-smoke: " + name + " needs a value (" + spec->valueName +
                             ")"};
            }
            value = args[++i];
        } else if (!spec->takesValue && inlineValue) {
            return Error{"runplane-smoke: " + name + " takes no value (got '" + value + "')"};
        }
        if (Status st = spec->apply(config, value); !st) {
            return Error{st.error()};
        }
    }
    if (config.helpRequested) {
        return config;
    }
    if (Status st = validateSmokeConfig(config); !st) {
        return Error{st.error()};
    }
    return config;
}

}  // namespace runplane::smoke
