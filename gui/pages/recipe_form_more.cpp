// RecipeForm, second part (issue 19): editors for the fields the planner's findings point at that
// the first form (recipe_form.cpp) had none for, the analysis section, the hardware-profile
// picker, and the finding-path -> editor resolution the findings list uses. Split from
// recipe_form.cpp to keep both files short; the enum editors' templates are instantiated there.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/pages/recipe_form.h"

namespace runplane::gui {

namespace {

using plan::Recipe;

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QStringList toList(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) {
        out << qs(s);
    }
    return out;
}

std::vector<std::string> fromList(const QStringList& list) {
    std::vector<std::string> out;
    for (const QString& s : list) {
        if (!s.trimmed().isEmpty()) {
            out.push_back(s.trimmed().toStdString());
        }
    }
    return out;
}

// Where a finding's path has no editor of its own, the editor that changes it.
struct Alias {
    const char* path;
    const char* editor;
};
constexpr Alias kAliases[] = {
    // An inline shape lives in the YAML only; the model picker replaces it with a catalog model.
    {"model.shape", "model.name"},
    // Whole-recipe findings (recipe.limits without a field) go to the first field.
    {"recipe", "name"},
};

QString extraArgLine(const plan::ExtraArg& arg) {
    QString line = qs(arg.flag);
    for (const std::string& v : arg.values) {
        line += QLatin1Char(' ') + qs(v);
    }
    return line;
}

std::vector<plan::ExtraArg> parseExtraArgLines(const QString& text,
                                               const std::vector<plan::ExtraArg>& previous) {
    std::vector<plan::ExtraArg> out;
    for (const QString& raw : text.split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (line.isEmpty()) {
            continue;
        }
        // An unchanged line keeps its argument as it was (its source, values with blanks).
        const auto same = std::find_if(previous.begin(), previous.end(),
                                       [&](const auto& a) { return extraArgLine(a) == line; });
        if (same != previous.end()) {
            out.push_back(*same);
            continue;
        }
        const QStringList words = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (!words.front().startsWith(QLatin1String("--"))) {
            continue;  // not a flag (yet): the recipe format needs "--flag"
        }
        plan::ExtraArg arg;
        arg.flag = words.front().toStdString();
        for (qsizetype i = 1; i < words.size(); ++i) {
            arg.values.push_back(words[i].toStdString());
        }
        out.push_back(std::move(arg));
    }
    return out;
}

}  // namespace

const std::vector<HardwareProfile>& hardwareProfiles() {
    // Per node. Sources: NVIDIA DGX H100 / DGX H200 / DGX B200 datasheets (8 GPUs, 80 / 141 /
    // 180 GB HBM per GPU, 2 TB system memory); GB200 NVL72 and GB300 NVL72 compute trays (2 Grace
    // + 4 GPUs, 2 x 480 GB LPDDR5X; 13.4 TB / 72 = 186 GB and 288 GB HBM3e per GPU). GB300's
    // 956 GB is the RAM the OS reports on those trays (shared/docs/domain.md seed 001,
    // docs/memory-model.md), below the 960 GB nominal.
    static const std::vector<HardwareProfile> profiles = {
        {"H100", "H100 SXM (DGX H100): 8 x 80 GB, 2 TB RAM", 80, 8, 2048, plan::CpuArch::X86_64},
        {"H200", "H200 SXM (DGX H200): 8 x 141 GB, 2 TB RAM", 141, 8, 2048, plan::CpuArch::X86_64},
        {"B200", "B200 (DGX B200): 8 x 180 GB, 2 TB RAM", 180, 8, 2048, plan::CpuArch::X86_64},
        {"GB200", "GB200 NVL72 tray: 4 x 186 GB, 960 GB RAM (aarch64)", 186, 4, 960,
         plan::CpuArch::Aarch64},
        {"GB300", "GB300 NVL72 tray: 4 x 288 GB, 956 GB RAM (aarch64)", 288, 4, 956,
         plan::CpuArch::Aarch64},
    };
    return profiles;
}

int matchingProfile(const plan::Hardware& h) {
    const auto& p = hardwareProfiles();
    for (size_t i = 0; i < p.size(); ++i) {
        if (h.gpu == p[i].gpu && h.gpuMemoryGb == p[i].gpuMemoryGb &&
            h.gpusPerNode == p[i].gpusPerNode && h.hostRamGb == p[i].hostRamGb &&
            h.cpuArch == p[i].cpuArch) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::vector<metrics::KindOverride> parseMetricKindLines(const QString& text, QStringList* errors) {
    std::vector<metrics::KindOverride> out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString line = lines[i].trimmed();
        if (line.isEmpty()) {
            continue;
        }
        auto fail = [&](const QString& why) {
            if (errors != nullptr) {
                *errors << QObject::tr("line %1: %2").arg(i + 1).arg(why);
            }
        };
        // The pattern may hold ':' itself; the kind follows the last ": ".
        const qsizetype colon = line.lastIndexOf(QLatin1Char(':'));
        if (colon <= 0) {
            fail(QObject::tr("expected 'PATTERN: KIND [DIRECTION]'"));
            continue;
        }
        metrics::KindOverride o;
        o.pattern = line.left(colon).trimmed().toStdString();
        const QStringList words = line.mid(colon + 1).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (o.pattern.empty() || o.pattern == "*") {
            fail(QObject::tr("name a series or a prefix ending in '*'"));
            continue;
        }
        if (words.isEmpty() || words.size() > 2) {
            fail(QObject::tr("expected a kind and at most a direction after ':'"));
            continue;
        }
        if (!metrics::kindFromName(words[0].toStdString(), o.kind)) {
            fail(QObject::tr("unknown kind '%1' (score, loss, count, time, tokens, bytes, rate, "
                             "ratio, other)")
                     .arg(words[0]));
            continue;
        }
        if (words.size() == 2) {
            metrics::Direction d{};
            if (!metrics::directionFromName(words[1].toStdString(), d)) {
                fail(QObject::tr("unknown direction '%1' (higher, lower, none)").arg(words[1]));
                continue;
            }
            o.direction = d;
        }
        out.push_back(std::move(o));
    }
    return out;
}

QString metricKindLines(const std::vector<metrics::KindOverride>& overrides) {
    QStringList lines;
    for (const metrics::KindOverride& o : overrides) {
        QString line =
            qs(o.pattern) + QStringLiteral(": ") + qs(std::string(metrics::kindName(o.kind)));
        if (o.direction.has_value()) {
            line += QLatin1Char(' ') + qs(std::string(metrics::directionName(*o.direction)));
        }
        lines << line;
    }
    return lines.join(QLatin1Char('\n'));
}

QFormLayout* RecipeForm::sectionForm(const QString& prefix) {
    for (const auto& [p, box] : m_sectionBoxes) {
        if (p == prefix) {
            return qobject_cast<QFormLayout*>(box->layout());
        }
    }
    return section(prefix, prefix);
}

void RecipeForm::addHardwareProfile(QFormLayout* f) {
    auto* combo = new QComboBox;
    combo->addItem(tr("custom (the fields below)"));
    for (const HardwareProfile& p : hardwareProfiles()) {
        combo->addItem(tr(p.label));
    }
    Binding& b = bind(
        f, QStringLiteral("hardware"), tr("Profile"), combo,
        [combo](const Recipe& r) { combo->setCurrentIndex(matchingProfile(r.hardware) + 1); },
        [combo](Recipe& r) {
            const int i = combo->currentIndex() - 1;
            if (i < 0 || i >= static_cast<int>(hardwareProfiles().size())) {
                return;  // custom: the fields stay as they are
            }
            const HardwareProfile& p = hardwareProfiles()[static_cast<size_t>(i)];
            r.hardware.gpu = p.gpu;
            r.hardware.gpuMemoryGb = p.gpuMemoryGb;
            r.hardware.gpusPerNode = p.gpusPerNode;
            r.hardware.hostRamGb = p.hostRamGb;
            r.hardware.cpuArch = p.cpuArch;
            r.hardware.nvlink = true;
        },
        Reason{}, tr("sets GPU, HBM per GPU, GPUs per node, host RAM and CPU from a known node"));
    connect(combo, &QComboBox::activated, this, [this, &b] { commit(b); });
}

void RecipeForm::addListText(QFormLayout* f, const QString& path, const QString& label,
                             std::function<std::vector<std::string>&(Recipe&)> ref, Reason why,
                             const QString& tooltip) {
    auto* edit = new QLineEdit;
    edit->setPlaceholderText(tr("comma-separated"));
    Binding& b = bind(
        f, path, label, edit,
        [edit, ref](const Recipe& r) {
            const QString v = toList(ref(const_cast<Recipe&>(r))).join(QStringLiteral(", "));
            if (edit->text() != v) {
                edit->setText(v);
            }
        },
        [edit, ref](Recipe& r) { ref(r) = fromList(edit->text().split(QLatin1Char(','))); },
        std::move(why), tooltip);
    connect(edit, &QLineEdit::textEdited, this, [this, &b] { commit(b); });
}

void RecipeForm::addArgv(QFormLayout* f) {
    auto* edit = new QPlainTextEdit;
    edit->setPlaceholderText(tr("one argument per line"));
    edit->setMaximumHeight(110);
    Binding& b = bind(
        f, QStringLiteral("launcher.argv"), tr("Command (argv)"), edit,
        [edit](const Recipe& r) {
            const QString v = toList(r.launcher.argv).join(QLatin1Char('\n'));
            if (edit->toPlainText() != v) {
                edit->setPlainText(v);
            }
        },
        [edit](Recipe& r) {
            r.launcher.argv = fromList(edit->toPlainText().split(QLatin1Char('\n')));
        },
        [](const Recipe& r) {
            return r.launcher.kind == plan::LauncherKind::Command
                       ? QString()
                       : tr("only for launcher kind command");
        });
    connect(edit, &QPlainTextEdit::textChanged, this, [this, &b] { commit(b); });
}

void RecipeForm::addFindingFields() {
    const Reason loraOff = [](const Recipe& r) {
        return r.lora.rank <= 0 ? tr("LoRA is off (rank 0)") : QString();
    };
    const Reason ppOnly = [](const Recipe& r) {
        return r.trainer.pp <= 1 ? tr("needs PP > 1") : QString();
    };
    QFormLayout* f = sectionForm(QStringLiteral("hardware"));
    addHardwareProfile(f);

    f = sectionForm(QStringLiteral("trainer"));
    addOptInt(
        f, QStringLiteral("trainer.decoder_first_pipeline_num_layers"), tr("First PP stage layers"),
        [](Recipe& r) -> std::optional<int>& { return r.trainer.decoderFirstPipelineNumLayers; }, 1,
        4096, ppOnly);
    addOptInt(
        f, QStringLiteral("trainer.decoder_last_pipeline_num_layers"), tr("Last PP stage layers"),
        [](Recipe& r) -> std::optional<int>& { return r.trainer.decoderLastPipelineNumLayers; }, 1,
        4096, ppOnly);
    addOptInt(
        f, QStringLiteral("trainer.num_layers_per_virtual_stage"), tr("Layers per virtual stage"),
        [](Recipe& r) -> std::optional<int>& { return r.trainer.numLayersPerVirtualStage; }, 1,
        4096, ppOnly);

    f = sectionForm(QStringLiteral("rollout"));
    addOptInt(
        f, QStringLiteral("rollout.engines"), tr("Engines (cross-check)"),
        [](Recipe& r) -> std::optional<int>& { return r.rollout.engines; }, 1, 65536, Reason{},
        tr("= rollout GPUs / GPUs per engine"));
    addInt(
        f, QStringLiteral("rollout.pp_size"), tr("Engine PP"),
        [](Recipe& r) -> int& { return r.rollout.ppSize; }, 1, 64);
    addDouble(
        f, QStringLiteral("rollout.temperature"), tr("Sampling temperature"),
        [](Recipe& r) -> double& { return r.rollout.temperature; }, 0, 10, 2, Reason{},
        tr("--rollout-temperature (default 1.0)"));
    addOptInt(
        f, QStringLiteral("rollout.max_prompt_len"), tr("Max prompt length"),
        [](Recipe& r) -> std::optional<int>& { return r.rollout.maxPromptLen; }, 1, 1 << 22);
    addOptInt(
        f, QStringLiteral("rollout.max_context_len"), tr("Max context length"),
        [](Recipe& r) -> std::optional<int>& { return r.rollout.maxContextLen; }, 1, 1 << 22);
    addText(f, QStringLiteral("rollout.moe_backend"), tr("MoE backend"),
            [](Recipe& r) -> std::string& { return r.rollout.moeBackend; });
    addText(
        f, QStringLiteral("rollout.lora_backend"), tr("LoRA backend"),
        [](Recipe& r) -> std::string& { return r.rollout.loraBackend; }, loraOff,
        tr("MoE LoRA on SGLang needs triton"));

    f = sectionForm(QStringLiteral("batch"));
    addOptInt(
        f, QStringLiteral("batch.num_steps_per_rollout"), tr("Optimizer steps per rollout"),
        [](Recipe& r) -> std::optional<int>& { return r.batch.numStepsPerRollout; }, 1, 1 << 20);
    addBool(f, QStringLiteral("batch.dynamic_batch_size"), tr("Dynamic batch size"),
            [](Recipe& r) -> bool& { return r.batch.dynamicBatchSize; });
    addOptInt(
        f, QStringLiteral("batch.max_tokens_per_gpu"), tr("Max tokens per GPU"),
        [](Recipe& r) -> std::optional<int>& { return r.batch.maxTokensPerGpu; }, 1, 1 << 24,
        Reason{}, tr("token budget per GPU per micro-batch (× CP with context parallelism)"));
    addOptInt(
        f, QStringLiteral("batch.over_sampling_batch_size"), tr("Over-sampling batch size"),
        [](Recipe& r) -> std::optional<int>& { return r.batch.overSamplingBatchSize; }, 1, 1 << 20);
    addOptInt(
        f, QStringLiteral("batch.num_epoch"), tr("Epochs"),
        [](Recipe& r) -> std::optional<int>& { return r.batch.numEpoch; }, 1, 1 << 20);

    f = sectionForm(QStringLiteral("algorithm"));
    addText(f, QStringLiteral("algorithm.kl_loss_type"), tr("KL loss type"),
            [](Recipe& r) -> std::string& { return r.algorithm.klLossType; });
    addDouble(
        f, QStringLiteral("algorithm.kl_coef"), tr("KL reward coefficient"),
        [](Recipe& r) -> double& { return r.algorithm.klCoef; }, 0, 100, 4, Reason{},
        tr("reward-shaping KL (--kl-coef): loads the reference model when > 0"));
    addDouble(
        f, QStringLiteral("algorithm.entropy_coef"), tr("Entropy coefficient"),
        [](Recipe& r) -> double& { return r.algorithm.entropyCoef; }, 0, 100, 4);
    addBool(f, QStringLiteral("algorithm.use_tis"), tr("TIS"),
            [](Recipe& r) -> bool& { return r.algorithm.useTis; });

    f = sectionForm(QStringLiteral("lora"));
    addListText(
        f, QStringLiteral("lora.target_modules"), tr("Target modules"),
        [](Recipe& r) -> std::vector<std::string>& { return r.lora.targetModules; }, loraOff,
        tr("all-linear, or q_proj, k_proj, v_proj, o_proj ..."));

    f = sectionForm(QStringLiteral("memory"));
    addEnum<plan::OffloadTarget>(
        f, QStringLiteral("memory.offload_train_target"), tr("Offload trainer to"),
        [](Recipe& r) -> plan::OffloadTarget& { return r.memory.offloadTrainTarget; },
        {plan::OffloadTarget::Cpu, plan::OffloadTarget::Disk});

    f = sectionForm(QStringLiteral("eval"));
    addOptInt(
        f, QStringLiteral("eval.max_response_len"), tr("Eval max response length"),
        [](Recipe& r) -> std::optional<int>& { return r.eval.maxResponseLen; }, 1, 1 << 22);
    addBool(f, QStringLiteral("eval.skip_eval_before_train"), tr("Skip eval before training"),
            [](Recipe& r) -> bool& { return r.eval.skipEvalBeforeTrain; });

    f = section(tr("Launcher"), QStringLiteral("launcher"));
    addOptEnum<plan::LauncherKind>(
        f, QStringLiteral("launcher.kind"), tr("Kind"),
        [](Recipe& r) -> std::optional<plan::LauncherKind>& { return r.launcher.kind; },
        {plan::LauncherKind::MilesScript, plan::LauncherKind::SlimeBash,
         plan::LauncherKind::Command},
        tr("default (miles_script for miles, slime_bash otherwise)"));
    addText(
        f, QStringLiteral("launcher.entry_point"), tr("Entry point"),
        [](Recipe& r) -> std::string& { return r.launcher.entryPoint; }, Reason{},
        tr("train.py (synchronous) or train_async.py (cannot colocate)"));
    addText(f, QStringLiteral("launcher.script"), tr("Script"),
            [](Recipe& r) -> std::string& { return r.launcher.script; });
    addArgv(f);
    addText(f, QStringLiteral("launcher.workdir"), tr("Working directory"),
            [](Recipe& r) -> std::string& { return r.launcher.workdir; });

    addRuleFields();
    addAnalysisFields();
}

// Fields newer rules point at (OPD, advantages, weight updates, extra_args).
void RecipeForm::addRuleFields() {
    const Reason opdOff = [](const Recipe& r) {
        return r.algorithm.useOpd ? QString() : tr("on-policy distillation is off");
    };
    QFormLayout* f = sectionForm(QStringLiteral("algorithm"));
    addBool(
        f, QStringLiteral("algorithm.normalize_advantages"), tr("Normalize advantages"),
        [](Recipe& r) -> bool& { return r.algorithm.normalizeAdvantages; }, Reason{},
        tr("--normalize-advantages (reinforce++ needs it)"));
    addBool(
        f, QStringLiteral("algorithm.use_rollout_logprobs"), tr("Use rollout logprobs"),
        [](Recipe& r) -> bool& { return r.algorithm.useRolloutLogprobs; }, Reason{},
        tr("--use-rollout-logprobs (exclusive with TIS)"));
    addBool(
        f, QStringLiteral("algorithm.use_opd"), tr("On-policy distillation"),
        [](Recipe& r) -> bool& { return r.algorithm.useOpd; }, Reason{}, tr("--use-opd"));
    addOptEnum<plan::OpdType>(
        f, QStringLiteral("algorithm.opd_type"), tr("OPD teacher runs in"),
        [](Recipe& r) -> std::optional<plan::OpdType>& { return r.algorithm.opdType; },
        {plan::OpdType::Sglang, plan::OpdType::Megatron}, tr("unset (required with OPD)"), opdOff);

    f = sectionForm(QStringLiteral("checkpoints"));
    addText(
        f, QStringLiteral("checkpoints.opd_teacher_load"), tr("OPD teacher checkpoint"),
        [](Recipe& r) -> std::string& { return r.checkpoints.opdTeacherLoad; }, Reason{},
        tr("--opd-teacher-load: the megatron OPD teacher"));

    f = section(tr("Weight update"), QStringLiteral("weight_update"));
    const Reason diskOnly = [](const Recipe& r) {
        return r.weightUpdate.transport == plan::WeightTransport::Disk
                   ? QString()
                   : tr("only for transport disk");
    };
    addEnum<plan::WeightUpdateMode>(
        f, QStringLiteral("weight_update.mode"), tr("Mode"),
        [](Recipe& r) -> plan::WeightUpdateMode& { return r.weightUpdate.mode; },
        {plan::WeightUpdateMode::Full, plan::WeightUpdateMode::Delta});
    addEnum<plan::WeightTransport>(
        f, QStringLiteral("weight_update.transport"), tr("Transport"),
        [](Recipe& r) -> plan::WeightTransport& { return r.weightUpdate.transport; },
        {plan::WeightTransport::Nccl, plan::WeightTransport::Disk});
    addText(
        f, QStringLiteral("weight_update.disk_dir"), tr("Shared disk directory"),
        [](Recipe& r) -> std::string& { return r.weightUpdate.diskDir; }, diskOnly,
        tr("--update-weight-disk-dir (shared by trainer and engines)"));
    addText(
        f, QStringLiteral("weight_update.local_checkpoint_dir"), tr("Local checkpoint directory"),
        [](Recipe& r) -> std::string& { return r.weightUpdate.localCheckpointDir; }, diskOnly,
        tr("--update-weight-local-checkpoint-dir (rollout-host NVMe)"));
    addBool(
        f, QStringLiteral("weight_update.release_train"), tr("Release trainer every step"),
        [](Recipe& r) -> bool& { return r.weightUpdate.releaseTrain; }, Reason{},
        tr("--release-train"));

    addExtraArgs(section(tr("Extra arguments"), QStringLiteral("extra_args")));
}

void RecipeForm::addExtraArgs(QFormLayout* f) {
    auto* edit = new QPlainTextEdit;
    edit->setPlaceholderText(
        tr("one flag and its values per line, e.g. --rollout-max-concurrency 8"));
    edit->setMaximumHeight(110);
    Binding& b = bind(
        f, QStringLiteral("extra_args"), tr("Flags the recipe does not model"), edit,
        [edit](const Recipe& r) {
            if (parseExtraArgLines(edit->toPlainText(), r.extraArgs) != r.extraArgs) {
                QStringList lines;
                for (const plan::ExtraArg& a : r.extraArgs) {
                    lines << extraArgLine(a);
                }
                edit->setPlainText(lines.join(QLatin1Char('\n')));
            }
        },
        [edit](Recipe& r) { r.extraArgs = parseExtraArgLines(edit->toPlainText(), r.extraArgs); },
        Reason{}, tr("appended verbatim to the launch command (--flag value ...)"));
    connect(edit, &QPlainTextEdit::textChanged, this, [this, &b] { commit(b); });
}

// The analysis section (docs/recipe.md "analysis"): what the Runs table, the plots and the
// memory panel read from the run's recipe.
void RecipeForm::addAnalysisFields() {
    QFormLayout* f = section(tr("Analysis"), QStringLiteral("analysis"));
    addText(
        f, QStringLiteral("analysis.primary_metric"), tr("Primary metric"),
        [](Recipe& r) -> std::string& { return r.analysis.primaryMetric; }, Reason{},
        tr("the series the Runs table shows, e.g. eval/gsm8k (empty: the first score-kind "
           "eval/* series)"));

    auto* kinds = new QPlainTextEdit;
    kinds->setPlaceholderText(tr("eval/arith/time: time\neval/judge/*: score lower"));
    kinds->setMaximumHeight(90);
    const QString kindsTip =
        tr("one 'PATTERN: KIND [DIRECTION]' per line; a pattern ending in "
           "'*' is a prefix; overrides the naming table (docs/gui.md)");
    Binding& kb = bind(
        f, QStringLiteral("analysis.metric_kinds"), tr("Metric kinds"), kinds,
        [kinds](const Recipe& r) {
            // Keep what is being typed when it reads as the same overrides.
            if (parseMetricKindLines(kinds->toPlainText()) != r.analysis.metricKinds) {
                kinds->setPlainText(metricKindLines(r.analysis.metricKinds));
            }
        },
        [kinds, kindsTip](Recipe& r) {
            QStringList errors;
            r.analysis.metricKinds = parseMetricKindLines(kinds->toPlainText(), &errors);
            kinds->setToolTip(errors.isEmpty() ? kindsTip
                                               : kindsTip + QStringLiteral("\n\n") +
                                                     errors.join(QLatin1Char('\n')));
        },
        Reason{}, kindsTip);
    connect(kinds, &QPlainTextEdit::textChanged, this, [this, &kb] { commit(kb); });

    auto* alarm = new QDoubleSpinBox;
    alarm->setRange(0, 1048576);
    alarm->setDecimals(2);
    alarm->setSuffix(tr(" GB"));
    alarm->setSpecialValueText(tr("default (750/956 of RAM)"));
    alarm->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    Binding& ab = bind(
        f, QStringLiteral("analysis.memory_alarm_gb"), tr("Memory alarm line"), alarm,
        [alarm](const Recipe& r) { alarm->setValue(r.analysis.memoryAlarmGb.value_or(0)); },
        [alarm](Recipe& r) {
            r.analysis.memoryAlarmGb =
                alarm->value() > 0 ? std::optional<double>(alarm->value()) : std::nullopt;
        },
        Reason{},
        tr("host memory per node, decimal GB: the memory panel's alarm line and the "
           "memory.host-over-alarm rule"));
    connect(alarm, &QDoubleSpinBox::valueChanged, this, [this, &ab] { commit(ab); });
}

QString RecipeForm::editorPathFor(const QString& path) const {
    if (editor(path) != nullptr) {
        return path;
    }
    for (const Alias& a : kAliases) {
        if (path == QLatin1String(a.path) && editor(QLatin1String(a.editor)) != nullptr) {
            return QLatin1String(a.editor);
        }
    }
    // A parent path ("rollout.eplb", "trainer") -> its first bound child.
    for (const auto& b : m_bindings) {
        if (b->path.startsWith(path + QLatin1Char('.'))) {
            return b->path;
        }
    }
    // A child of a bound field ("eval.datasets[1].path") -> the nearest bound parent.
    QString p = path;
    while (!p.isEmpty()) {
        const qsizetype cut =
            std::max(p.lastIndexOf(QLatin1Char('.')), p.lastIndexOf(QLatin1Char('[')));
        p = cut > 0 ? p.left(cut) : QString();
        if (!p.isEmpty() && editor(p) != nullptr) {
            return p;
        }
    }
    return {};
}

}  // namespace runplane::gui
