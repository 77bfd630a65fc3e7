// Over 600 lines on purpose: one declarative row per recipe field (the form reads top to bottom as
// the recipe does); the editors issue 19 added live in recipe_form_more.cpp.
#include "gui/pages/recipe_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

#include "backend/plan/catalog.h"

namespace runplane::gui {

namespace {

using plan::Recipe;

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
QString qs(const char* s) {
    return QString::fromLatin1(s);
}

const char* kHighlightStyle = "border: 2px solid #1565c0; background: #e3f2fd;";

bool colocate(const Recipe& r) {
    return r.placement == plan::Placement::Colocate;
}
bool vllm(const Recipe& r) {
    return plan::effectiveEngine(r) == plan::RolloutEngine::Vllm;
}
bool loraOff(const Recipe& r) {
    return r.lora.rank <= 0;
}
bool fsdp(const Recipe& r) {
    return r.trainer.backend == plan::TrainBackend::Fsdp;
}

}  // namespace

RecipeForm::RecipeForm(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    auto* content = new QWidget(m_scroll);
    m_sections = new QVBoxLayout(content);
    m_scroll->setWidget(content);
    outer->addWidget(m_scroll);

    const Reason never;

    QFormLayout* f = section(tr("Run"), QStringLiteral("name"));
    addText(f, QStringLiteral("name"), tr("Name"),
            [](Recipe& r) -> std::string& { return r.name; });
    addEnum<plan::Framework>(
        f, QStringLiteral("framework"), tr("Framework"),
        [](Recipe& r) -> plan::Framework& { return r.framework; },
        {plan::Framework::Miles, plan::Framework::Slime, plan::Framework::Vime}, never,
        tr("miles, slime, or the vLLM-based variant (vime)"));

    f = section(tr("Model"), QStringLiteral("model"));
    addModelFields(f);

    f = section(tr("Hardware"), QStringLiteral("hardware"));
    addText(f, QStringLiteral("hardware.gpu"), tr("GPU"),
            [](Recipe& r) -> std::string& { return r.hardware.gpu; });
    addDouble(
        f, QStringLiteral("hardware.gpu_memory_gb"), tr("HBM per GPU (GB)"),
        [](Recipe& r) -> double& { return r.hardware.gpuMemoryGb; }, 1, 1000, 1);
    addInt(
        f, QStringLiteral("hardware.gpus_per_node"), tr("GPUs per node"),
        [](Recipe& r) -> int& { return r.hardware.gpusPerNode; }, 0, 64);
    addDouble(
        f, QStringLiteral("hardware.host_ram_gb"), tr("Host RAM per node (GB)"),
        [](Recipe& r) -> double& { return r.hardware.hostRamGb; }, 1, 100000, 0);
    addEnum<plan::CpuArch>(f, QStringLiteral("hardware.cpu_arch"), tr("CPU"),
                           [](Recipe& r) -> plan::CpuArch& { return r.hardware.cpuArch; },
                           {plan::CpuArch::X86_64, plan::CpuArch::Aarch64});
    addBool(f, QStringLiteral("hardware.nvlink"), tr("NVLink"),
            [](Recipe& r) -> bool& { return r.hardware.nvlink; });

    f = section(tr("Cluster and placement"), QStringLiteral("cluster"));
    addInt(
        f, QStringLiteral("cluster.nodes"), tr("Nodes"),
        [](Recipe& r) -> int& { return r.cluster.nodes; }, 1, 4096);
    addText(
        f, QStringLiteral("cluster.master_addr"), tr("Master address"),
        [](Recipe& r) -> std::string& { return r.cluster.masterAddr; }, never,
        tr("the head's LAN IP (never 127.0.0.1 for multi-node); empty = decided at launch"));
    addEnum<plan::Placement>(
        f, QStringLiteral("placement"), tr("Placement"),
        [](Recipe& r) -> plan::Placement& { return r.placement; },
        {plan::Placement::Disaggregated, plan::Placement::Colocate}, never,
        tr("colocate: trainer and engines share GPUs and take turns"));

    f = section(tr("Trainer parallelism"), QStringLiteral("trainer"));
    addEnum<plan::TrainBackend>(f, QStringLiteral("trainer.backend"), tr("Backend"),
                                [](Recipe& r) -> plan::TrainBackend& { return r.trainer.backend; },
                                {plan::TrainBackend::Megatron, plan::TrainBackend::Fsdp});
    addOptInt(
        f, QStringLiteral("trainer.nodes"), tr("Trainer nodes"),
        [](Recipe& r) -> std::optional<int>& { return r.trainer.nodes; }, 1, 4096,
        [](const Recipe& r) {
            return colocate(r) ? tr("under colocate the trainer uses every node") : QString();
        });
    addOptInt(
        f, QStringLiteral("trainer.gpus_per_node"), tr("Trainer GPUs per node"),
        [](Recipe& r) -> std::optional<int>& { return r.trainer.gpusPerNode; }, 1, 64);
    const Reason megatronOnly = [](const Recipe& r) {
        return fsdp(r)
                   ? tr("FSDP shards by data parallelism only: Megatron parallelism does not apply")
                   : QString();
    };
    addInt(
        f, QStringLiteral("trainer.tp"), tr("TP"), [](Recipe& r) -> int& { return r.trainer.tp; },
        1, 64, megatronOnly);
    addInt(
        f, QStringLiteral("trainer.pp"), tr("PP"), [](Recipe& r) -> int& { return r.trainer.pp; },
        1, 256, megatronOnly);
    addInt(
        f, QStringLiteral("trainer.cp"), tr("CP"), [](Recipe& r) -> int& { return r.trainer.cp; },
        1, 64, megatronOnly);
    const Reason moeOnly = [this, megatronOnly](const Recipe& r) {
        const QString m = megatronOnly(r);
        if (!m.isEmpty()) {
            return m;
        }
        const plan::ModelShape* model = currentModel();
        return model != nullptr && !model->isMoe()
                   ? tr("%1 is dense: it has no experts to shard").arg(qs(model->name))
                   : QString();
    };
    addInt(
        f, QStringLiteral("trainer.ep"), tr("EP"), [](Recipe& r) -> int& { return r.trainer.ep; },
        1, 1024, moeOnly);
    addOptInt(
        f, QStringLiteral("trainer.etp"), tr("ETP"),
        [](Recipe& r) -> std::optional<int>& { return r.trainer.etp; }, 1, 64, moeOnly,
        tr("default: = TP"));
    addBool(
        f, QStringLiteral("trainer.sequence_parallel"), tr("Sequence parallel"),
        [](Recipe& r) -> bool& { return r.trainer.sequenceParallel; },
        [](const Recipe& r) {
            return r.trainer.tp <= 1 ? tr("sequence parallelism needs TP > 1") : QString();
        });
    addBool(f, QStringLiteral("trainer.recompute"), tr("Activation recompute"),
            [](Recipe& r) -> bool& { return r.trainer.recompute; });

    f = section(tr("Rollout engines"), QStringLiteral("rollout"));
    addOptEnum<plan::RolloutEngine>(
        f, QStringLiteral("rollout.engine"), tr("Engine"),
        [](Recipe& r) -> std::optional<plan::RolloutEngine>& { return r.rollout.engine; },
        {plan::RolloutEngine::Sglang, plan::RolloutEngine::Vllm},
        tr("default (vllm for vime, sglang otherwise)"));
    addOptInt(
        f, QStringLiteral("rollout.num_gpus"), tr("Rollout GPUs"),
        [](Recipe& r) -> std::optional<int>& { return r.rollout.numGpus; }, 1, 65536,
        [](const Recipe& r) {
            return colocate(r) ? tr("under colocate the engines use the trainer's GPUs")
                               : QString();
        });
    addInt(
        f, QStringLiteral("rollout.gpus_per_engine"), tr("GPUs per engine"),
        [](Recipe& r) -> int& { return r.rollout.gpusPerEngine; }, 1, 1024);
    addInt(
        f, QStringLiteral("rollout.dp_size"), tr("Engine DP"),
        [](Recipe& r) -> int& { return r.rollout.dpSize; }, 1, 256);
    addInt(
        f, QStringLiteral("rollout.ep_size"), tr("Engine EP (SGLang)"),
        [](Recipe& r) -> int& { return r.rollout.epSize; }, 1, 1024,
        [](const Recipe& r) {
            return vllm(r) ? tr("vLLM derives EP = TP × DP from expert parallel") : QString();
        });
    addBool(
        f, QStringLiteral("rollout.dp_attention"), tr("DP attention (SGLang)"),
        [](Recipe& r) -> bool& { return r.rollout.dpAttention; },
        [](const Recipe& r) {
            return vllm(r) ? tr("an SGLang option; vLLM uses DP with expert parallel") : QString();
        });
    addBool(
        f, QStringLiteral("rollout.expert_parallel"), tr("Expert parallel (vLLM)"),
        [](Recipe& r) -> bool& { return r.rollout.expertParallel; },
        [](const Recipe& r) {
            return vllm(r) ? QString() : tr("a vLLM option; SGLang sets EP with ep_size");
        });
    const Reason eplbWhy = [](const Recipe& r) {
        if (!vllm(r)) {
            return tr("EPLB here is vLLM's expert-parallel load balancer");
        }
        return r.rollout.expertParallel ? QString() : tr("needs expert parallel");
    };
    addBool(
        f, QStringLiteral("rollout.eplb.enabled"), tr("EPLB"),
        [](Recipe& r) -> bool& { return r.rollout.eplb.enabled; }, eplbWhy);
    addInt(
        f, QStringLiteral("rollout.eplb.redundant_experts"), tr("Redundant experts"),
        [](Recipe& r) -> int& { return r.rollout.eplb.redundantExperts; }, 0, 4096,
        [eplbWhy](const Recipe& r) {
            const QString w = eplbWhy(r);
            return !w.isEmpty() ? w : (r.rollout.eplb.enabled ? QString() : tr("EPLB is off"));
        });
    addDouble(
        f, QStringLiteral("rollout.mem_fraction"), tr("Memory fraction"),
        [](Recipe& r) -> double& { return r.rollout.memFraction; }, 0.05, 0.99, 2);
    addBool(f, QStringLiteral("rollout.cuda_graph"), tr("CUDA graphs"),
            [](Recipe& r) -> bool& { return r.rollout.cudaGraph; });
    addEnum<plan::WeightDtype>(
        f, QStringLiteral("rollout.weight_dtype"), tr("Engine weights"),
        [](Recipe& r) -> plan::WeightDtype& { return r.rollout.weightDtype; },
        {plan::WeightDtype::Bf16, plan::WeightDtype::Fp16, plan::WeightDtype::Fp8,
         plan::WeightDtype::Nvfp4, plan::WeightDtype::Mxfp4, plan::WeightDtype::Int4});
    addEnum<plan::QuantScope>(
        f, QStringLiteral("rollout.quant_scope"), tr("Quantised weights"),
        [](Recipe& r) -> plan::QuantScope& { return r.rollout.quantScope; },
        {plan::QuantScope::All, plan::QuantScope::Experts},
        [](const Recipe& r) {
            return r.rollout.weightDtype == plan::WeightDtype::Bf16
                       ? tr("weights are BF16: nothing is quantised")
                       : QString();
        });
    addOptInt(
        f, QStringLiteral("rollout.max_response_len"), tr("Max response length"),
        [](Recipe& r) -> std::optional<int>& { return r.rollout.maxResponseLen; }, 1, 1 << 22);

    f = section(tr("Batch"), QStringLiteral("batch"));
    addInt(
        f, QStringLiteral("batch.rollout_batch_size"), tr("Rollout batch size"),
        [](Recipe& r) -> int& { return r.batch.rolloutBatchSize; }, 0, 1 << 20);
    addInt(
        f, QStringLiteral("batch.n_samples_per_prompt"), tr("Samples per prompt"),
        [](Recipe& r) -> int& { return r.batch.nSamplesPerPrompt; }, 1, 4096);
    addOptInt(
        f, QStringLiteral("batch.global_batch_size"), tr("Global batch size"),
        [](Recipe& r) -> std::optional<int>& { return r.batch.globalBatchSize; }, 1, 1 << 24,
        Reason{}, tr("must equal rollout batch size × samples per prompt"));
    addInt(
        f, QStringLiteral("batch.micro_batch_size"), tr("Micro batch size"),
        [](Recipe& r) -> int& { return r.batch.microBatchSize; }, 1, 4096);
    addOptInt(
        f, QStringLiteral("batch.num_rollout"), tr("Rollouts"),
        [](Recipe& r) -> std::optional<int>& { return r.batch.numRollout; }, 1, 1 << 24);

    f = section(tr("Algorithm"), QStringLiteral("algorithm"));
    addEnum<plan::AdvantageEstimator>(
        f, QStringLiteral("algorithm.advantage_estimator"), tr("Advantage"),
        [](Recipe& r) -> plan::AdvantageEstimator& { return r.algorithm.advantageEstimator; },
        {plan::AdvantageEstimator::Grpo, plan::AdvantageEstimator::Gspo,
         plan::AdvantageEstimator::Cispo, plan::AdvantageEstimator::ReinforcePlusPlus,
         plan::AdvantageEstimator::ReinforcePlusPlusBaseline, plan::AdvantageEstimator::Ppo});
    addDouble(
        f, QStringLiteral("algorithm.lr"), tr("Learning rate"),
        [](Recipe& r) -> double& { return r.algorithm.lr; }, 0, 1, 8);
    addDouble(
        f, QStringLiteral("algorithm.eps_clip"), tr("Clip ε"),
        [](Recipe& r) -> double& { return r.algorithm.epsClip; }, 0, 10, 3);
    addBool(
        f, QStringLiteral("algorithm.use_kl_loss"), tr("KL loss"),
        [](Recipe& r) -> bool& { return r.algorithm.useKlLoss; }, Reason{},
        tr("loads the full reference model even with a zero coefficient"));
    addDouble(
        f, QStringLiteral("algorithm.kl_loss_coef"), tr("KL loss coefficient"),
        [](Recipe& r) -> double& { return r.algorithm.klLossCoef; }, 0, 100, 4,
        [](const Recipe& r) { return r.algorithm.useKlLoss ? QString() : tr("KL loss is off"); });

    f = section(tr("Optimizer"), QStringLiteral("optimizer"));
    addBool(f, QStringLiteral("optimizer.distributed"), tr("Distributed optimizer"),
            [](Recipe& r) -> bool& { return r.optimizer.distributed; });
    addBool(f, QStringLiteral("optimizer.cpu_offload"), tr("CPU Adam (offload)"),
            [](Recipe& r) -> bool& { return r.optimizer.cpuOffload; });
    const Reason offloadOnly = [](const Recipe& r) {
        return r.optimizer.cpuOffload ? QString() : tr("CPU offload is off");
    };
    addBool(
        f, QStringLiteral("optimizer.overlap_cpu_optimizer_d2h_h2d"), tr("Overlap D2H/H2D"),
        [](Recipe& r) -> bool& { return r.optimizer.overlapCpuOptimizerD2hH2d; }, offloadOnly);
    addBool(f, QStringLiteral("optimizer.precision_aware"), tr("Precision-aware optimizer"),
            [](Recipe& r) -> bool& { return r.optimizer.precisionAware; });
    addDouble(
        f, QStringLiteral("optimizer.offload_fraction"), tr("Offload fraction"),
        [](Recipe& r) -> double& { return r.optimizer.offloadFraction; }, 0, 1, 2, offloadOnly);

    f = section(tr("LoRA"), QStringLiteral("lora"));
    addInt(
        f, QStringLiteral("lora.rank"), tr("Rank (0 = off)"),
        [](Recipe& r) -> int& { return r.lora.rank; }, 0, 4096);
    const Reason loraWhy = [](const Recipe& r) {
        return loraOff(r) ? tr("LoRA is off (rank 0)") : QString();
    };
    addDouble(
        f, QStringLiteral("lora.alpha"), tr("Alpha"),
        [](Recipe& r) -> double& { return r.lora.alpha; }, 0, 100000, 1, loraWhy);
    addDouble(
        f, QStringLiteral("lora.dropout"), tr("Dropout"),
        [](Recipe& r) -> double& { return r.lora.dropout; }, 0, 1, 2, loraWhy);
    addBool(
        f, QStringLiteral("lora.base_cpu_backup"), tr("Base weights CPU backup"),
        [](Recipe& r) -> bool& { return r.lora.baseCpuBackup; }, loraWhy,
        tr("--lora-base-cpu-backup: engines keep a host mirror; weight sync sends LoRA deltas "
           "only"));

    f = section(tr("Memory safeguards"), QStringLiteral("memory"));
    addOptBool(f, QStringLiteral("memory.offload_train"), tr("Offload trainer while rolling out"),
               [](Recipe& r) -> std::optional<bool>& { return r.memory.offloadTrain; });
    addOptBool(f, QStringLiteral("memory.offload_rollout"), tr("Offload engines while training"),
               [](Recipe& r) -> std::optional<bool>& { return r.memory.offloadRollout; });
    addBool(
        f, QStringLiteral("memory.drop_checkpoint_page_cache_after_load"),
        tr("Drop checkpoint page cache"),
        [](Recipe& r) -> bool& { return r.memory.dropCheckpointPageCacheAfterLoad; }, Reason{},
        tr("the multi-TB checkpoint read leaves page cache competing with the pinned peak"));
    addEnum<plan::PeakDevice>(
        f, QStringLiteral("memory.colocate_memory_peak_device"), tr("Colocate peak device"),
        [](Recipe& r) -> plan::PeakDevice& { return r.memory.colocateMemoryPeakDevice; },
        {plan::PeakDevice::Cpu, plan::PeakDevice::Gpu},
        [](const Recipe& r) { return colocate(r) ? QString() : tr("only used under colocate"); });
    addEnum<plan::BackupMode>(
        f, QStringLiteral("memory.backup_mode"), tr("Weight-sync backup"),
        [](Recipe& r) -> plan::BackupMode& { return r.memory.backupMode; },
        {plan::BackupMode::ZeroCopy, plan::BackupMode::Clone}, Reason{},
        tr("clone leaves ~75 GB per rank of malloc arena behind after every update"));
    addDouble(
        f, QStringLiteral("memory.update_weight_buffer_gb"), tr("Weight-update bucket (GB)"),
        [](Recipe& r) -> double& { return r.memory.updateWeightBufferGb; }, 0, 1000, 3);
    // Fixed budgets (docs/memory-model.md section 5): measured defaults, editable per site.
    addDouble(
        f, QStringLiteral("memory.process_host_gb"), tr("Host RAM per GPU process (GB)"),
        [](Recipe& r) -> double& { return r.memory.processHostGb; }, 0, 1024, 2);
    addDouble(
        f, QStringLiteral("memory.process_gpu_gb"), tr("HBM per GPU process (GB)"),
        [](Recipe& r) -> double& { return r.memory.processGpuGb; }, 0, 1024, 2);
    addDouble(
        f, QStringLiteral("memory.allocator_fragmentation"), tr("Allocator fragmentation"),
        [](Recipe& r) -> double& { return r.memory.allocatorFragmentation; }, 0, 10, 2);
    addDouble(
        f, QStringLiteral("cluster.ray_object_store_max_gb"), tr("Ray object store cap (GB)"),
        [](Recipe& r) -> double& { return r.cluster.rayObjectStoreMaxGb; }, 0, 1048576, 0);

    f = section(tr("NCCL"), QStringLiteral("environment"));
    addText(
        f, QStringLiteral("environment.nccl_version"), tr("NCCL version"),
        [](Recipe& r) -> std::string& { return r.environment.ncclVersion; }, Reason{},
        tr("the NCCL the run loads, e.g. 2.30.7 (cross-node CUDA-graph rollout needs >= 2.30.7)"));
    addText(f, QStringLiteral("environment.nccl_so_path"), tr("libnccl path"),
            [](Recipe& r) -> std::string& { return r.environment.ncclSoPath; });

    f = section(tr("Checkpoints"), QStringLiteral("checkpoints"));
    addText(f, QStringLiteral("checkpoints.model_dir"), tr("Model dir"),
            [](Recipe& r) -> std::string& { return r.checkpoints.modelDir; });
    addText(f, QStringLiteral("checkpoints.hf_checkpoint"), tr("HF checkpoint"),
            [](Recipe& r) -> std::string& { return r.checkpoints.hfCheckpoint; });
    addText(f, QStringLiteral("checkpoints.ref_load"), tr("Reference (torch_dist)"),
            [](Recipe& r) -> std::string& { return r.checkpoints.refLoad; });
    addText(f, QStringLiteral("checkpoints.load"), tr("Load"),
            [](Recipe& r) -> std::string& { return r.checkpoints.load; });
    addText(f, QStringLiteral("checkpoints.save"), tr("Save"),
            [](Recipe& r) -> std::string& { return r.checkpoints.save; });
    addOptInt(
        f, QStringLiteral("checkpoints.save_interval"), tr("Save interval"),
        [](Recipe& r) -> std::optional<int>& { return r.checkpoints.saveInterval; }, 1, 1 << 24);
    addOptInt(
        f, QStringLiteral("checkpoints.converted_ep"), tr("Checkpoint converted with EP"),
        [](Recipe& r) -> std::optional<int>& { return r.checkpoints.convertedEp; }, 1, 1024,
        Reason{}, tr("must equal the trainer's EP, else loading may hang"));

    f = section(tr("Eval"), QStringLiteral("eval"));
    addOptInt(
        f, QStringLiteral("eval.interval"), tr("Interval (rollouts)"),
        [](Recipe& r) -> std::optional<int>& { return r.eval.interval; }, 1, 1 << 20);
    addEvalDatasets(f);
    addInt(
        f, QStringLiteral("eval.n_samples_per_eval_prompt"), tr("Samples per eval prompt"),
        [](Recipe& r) -> int& { return r.eval.nSamplesPerEvalPrompt; }, 1, 4096);
    addFindingFields();  // recipe_form_more.cpp
    m_sections->addStretch(1);
}

RecipeForm::~RecipeForm() = default;

QFormLayout* RecipeForm::section(const QString& title, const QString& prefix) {
    auto* box = new QGroupBox(title);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_sections->addWidget(box);
    m_sectionBoxes.emplace_back(prefix, box);
    return form;
}

RecipeForm::Binding& RecipeForm::bind(QFormLayout* form, const QString& path, const QString& label,
                                      QWidget* editor, std::function<void(const Recipe&)> load,
                                      std::function<void(Recipe&)> store, Reason why,
                                      const QString& tooltip) {
    auto b = std::make_unique<Binding>();
    b->path = path;
    b->editor = editor;
    auto* l = new QLabel(label);
    l->setBuddy(editor);
    b->label = l;
    b->section = qobject_cast<QGroupBox*>(form->parentWidget());
    b->load = std::move(load);
    b->store = std::move(store);
    b->disabledWhy = std::move(why);
    b->baseTooltip = tooltip.isEmpty() ? path : path + QStringLiteral(": ") + tooltip;
    editor->setObjectName(path);
    editor->setToolTip(b->baseTooltip);
    form->addRow(l, editor);
    m_bindings.push_back(std::move(b));
    return *m_bindings.back();
}

void RecipeForm::commit(const Binding& binding) {
    if (m_loading) {
        return;
    }
    Recipe next = m_recipe;
    binding.store(next);
    if (next == m_recipe) {
        return;
    }
    m_recipe = next;
    if (binding.path.startsWith(QLatin1String("model."))) {
        refreshVariants();
    }
    refreshEnabled();
    emit edited(m_recipe, binding.path);
}

void RecipeForm::addInt(QFormLayout* f, const QString& path, const QString& label,
                        std::function<int&(Recipe&)> ref, int min, int max, Reason why,
                        const QString& tooltip) {
    auto* spin = new QSpinBox;
    spin->setRange(min, max);
    spin->setKeyboardTracking(true);
    Binding& b = bind(
        f, path, label, spin,
        [spin, ref](const Recipe& r) { spin->setValue(ref(const_cast<Recipe&>(r))); },
        [spin, ref](Recipe& r) { ref(r) = spin->value(); }, std::move(why), tooltip);
    connect(spin, &QSpinBox::valueChanged, this, [this, &b] { commit(b); });
}

void RecipeForm::addOptInt(QFormLayout* f, const QString& path, const QString& label,
                           std::function<std::optional<int>&(Recipe&)> ref, int min, int max,
                           Reason why, const QString& tooltip) {
    auto* spin = new QSpinBox;
    spin->setRange(min - 1, max);
    spin->setSpecialValueText(tr("default"));
    Binding& b = bind(
        f, path, label, spin,
        [spin, ref, min](const Recipe& r) {
            const auto& v = ref(const_cast<Recipe&>(r));
            spin->setValue(v ? *v : min - 1);
        },
        [spin, ref, min](Recipe& r) {
            ref(r) = spin->value() < min ? std::nullopt : std::optional<int>(spin->value());
        },
        std::move(why), tooltip);
    connect(spin, &QSpinBox::valueChanged, this, [this, &b] { commit(b); });
}

void RecipeForm::addDouble(QFormLayout* f, const QString& path, const QString& label,
                           std::function<double&(Recipe&)> ref, double min, double max,
                           int decimals, Reason why, const QString& tooltip) {
    auto* spin = new QDoubleSpinBox;
    spin->setRange(min, max);
    spin->setDecimals(decimals);
    spin->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    Binding& b = bind(
        f, path, label, spin,
        [spin, ref](const Recipe& r) { spin->setValue(ref(const_cast<Recipe&>(r))); },
        [spin, ref](Recipe& r) { ref(r) = spin->value(); }, std::move(why), tooltip);
    connect(spin, &QDoubleSpinBox::valueChanged, this, [this, &b] { commit(b); });
}

void RecipeForm::addBool(QFormLayout* f, const QString& path, const QString& label,
                         std::function<bool&(Recipe&)> ref, Reason why, const QString& tooltip) {
    auto* check = new QCheckBox;
    Binding& b = bind(
        f, path, label, check,
        [check, ref](const Recipe& r) { check->setChecked(ref(const_cast<Recipe&>(r))); },
        [check, ref](Recipe& r) { ref(r) = check->isChecked(); }, std::move(why), tooltip);
    connect(check, &QCheckBox::toggled, this, [this, &b] { commit(b); });
}

void RecipeForm::addOptBool(QFormLayout* f, const QString& path, const QString& label,
                            std::function<std::optional<bool>&(Recipe&)> ref, Reason why,
                            const QString& tooltip) {
    auto* combo = new QComboBox;
    combo->addItem(tr("default"));
    combo->addItem(tr("on"));
    combo->addItem(tr("off"));
    Binding& b = bind(
        f, path, label, combo,
        [combo, ref](const Recipe& r) {
            const auto& v = ref(const_cast<Recipe&>(r));
            combo->setCurrentIndex(!v ? 0 : (*v ? 1 : 2));
        },
        [combo, ref](Recipe& r) {
            const int i = combo->currentIndex();
            ref(r) = i == 0 ? std::nullopt : std::optional<bool>(i == 1);
        },
        std::move(why), tooltip);
    connect(combo, &QComboBox::currentIndexChanged, this, [this, &b] { commit(b); });
}

void RecipeForm::addText(QFormLayout* f, const QString& path, const QString& label,
                         std::function<std::string&(Recipe&)> ref, Reason why,
                         const QString& tooltip) {
    auto* edit = new QLineEdit;
    Binding& b = bind(
        f, path, label, edit,
        [edit, ref](const Recipe& r) {
            const QString v = qs(ref(const_cast<Recipe&>(r)));
            if (edit->text() != v) {
                edit->setText(v);
            }
        },
        [edit, ref](Recipe& r) { ref(r) = edit->text().toStdString(); }, std::move(why), tooltip);
    connect(edit, &QLineEdit::textEdited, this, [this, &b] { commit(b); });
}

template <typename E>
void RecipeForm::addEnum(QFormLayout* f, const QString& path, const QString& label,
                         std::function<E&(Recipe&)> ref, std::initializer_list<E> values,
                         Reason why, const QString& tooltip) {
    auto* combo = new QComboBox;
    std::vector<E> list(values);
    for (E v : list) {
        combo->addItem(qs(plan::toString(v)));
    }
    Binding& b = bind(
        f, path, label, combo,
        [combo, ref, list](const Recipe& r) {
            const E v = ref(const_cast<Recipe&>(r));
            combo->setCurrentIndex(
                static_cast<int>(std::find(list.begin(), list.end(), v) - list.begin()));
        },
        [combo, ref, list](Recipe& r) {
            const int i = combo->currentIndex();
            if (i >= 0 && static_cast<size_t>(i) < list.size()) {
                ref(r) = list[static_cast<size_t>(i)];
            }
        },
        std::move(why), tooltip);
    connect(combo, &QComboBox::currentIndexChanged, this, [this, &b] { commit(b); });
}

template <typename E>
void RecipeForm::addOptEnum(QFormLayout* f, const QString& path, const QString& label,
                            std::function<std::optional<E>&(Recipe&)> ref,
                            std::initializer_list<E> values, const QString& defaultText, Reason why,
                            const QString& tooltip) {
    auto* combo = new QComboBox;
    std::vector<E> list(values);
    combo->addItem(defaultText);
    for (E v : list) {
        combo->addItem(qs(plan::toString(v)));
    }
    Binding& b = bind(
        f, path, label, combo,
        [combo, ref, list](const Recipe& r) {
            const auto& v = ref(const_cast<Recipe&>(r));
            combo->setCurrentIndex(
                !v ? 0
                   : 1 + static_cast<int>(std::find(list.begin(), list.end(), *v) - list.begin()));
        },
        [combo, ref, list](Recipe& r) {
            const int i = combo->currentIndex();
            ref(r) = i <= 0 ? std::nullopt : std::optional<E>(list[static_cast<size_t>(i - 1)]);
        },
        std::move(why), tooltip);
    connect(combo, &QComboBox::currentIndexChanged, this, [this, &b] { commit(b); });
}

void RecipeForm::addModelFields(QFormLayout* f) {
    m_modelCombo = new QComboBox;
    m_modelCombo->setEditable(true);
    m_modelCombo->setInsertPolicy(QComboBox::NoInsert);
    Binding& name = bind(
        f, QStringLiteral("model.name"), tr("Model"), m_modelCombo,
        [this](const Recipe& r) { m_modelCombo->setCurrentText(qs(r.model.name)); },
        [this](Recipe& r) { r.model.name = m_modelCombo->currentText().trimmed().toStdString(); },
        Reason{}, tr("a model of the catalog (recipes/models)"));
    connect(m_modelCombo, &QComboBox::currentTextChanged, this, [this, &name] { commit(name); });
    m_variantCombo = new QComboBox;
    Binding& variant = bind(
        f, QStringLiteral("model.variant"), tr("Variant"), m_variantCombo,
        [this](const Recipe& r) {
            const int at = m_variantCombo->findData(qs(r.model.variant));
            if (at < 0 && !r.model.variant.empty()) {
                m_variantCombo->addItem(qs(r.model.variant), qs(r.model.variant));
                m_variantCombo->setCurrentIndex(m_variantCombo->count() - 1);
            } else {
                m_variantCombo->setCurrentIndex(std::max(0, at));
            }
        },
        [this](Recipe& r) {
            r.model.variant = m_variantCombo->currentData().toString().toStdString();
        },
        [this](const Recipe&) {
            const plan::ModelShape* m = currentModel();
            return m != nullptr && m->variants.empty() ? tr("%1 has no variants").arg(qs(m->name))
                                                       : QString();
        });
    connect(m_variantCombo, &QComboBox::currentIndexChanged, this,
            [this, &variant] { commit(variant); });
}

void RecipeForm::addEvalDatasets(QFormLayout* f) {
    auto* edit = new QLineEdit;
    edit->setPlaceholderText(tr("name=path, name=path"));
    Binding& b = bind(
        f, QStringLiteral("eval.datasets"), tr("Datasets"), edit,
        [edit](const Recipe& r) {
            QStringList parts;
            for (const auto& d : r.eval.datasets) {
                parts << qs(d.name) + QLatin1Char('=') + qs(d.path);
            }
            const QString v = parts.join(QStringLiteral(", "));
            if (edit->text() != v) {
                edit->setText(v);
            }
        },
        [edit](Recipe& r) {
            r.eval.datasets.clear();
            for (const QString& part : edit->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                const qsizetype eq = part.indexOf(QLatin1Char('='));
                plan::EvalDataset d;
                d.name = (eq < 0 ? part : part.left(eq)).trimmed().toStdString();
                d.path = eq < 0 ? std::string() : part.mid(eq + 1).trimmed().toStdString();
                r.eval.datasets.push_back(std::move(d));
            }
        },
        Reason{}, tr("eval datasets as name=path pairs"));
    connect(edit, &QLineEdit::textEdited, this, [this, &b] { commit(b); });
}

const plan::ModelShape* RecipeForm::currentModel() const {
    if (!m_catalog) {
        return nullptr;
    }
    return m_catalog->find(m_recipe.model.name);
}

void RecipeForm::refreshVariants() {
    const bool wasLoading = m_loading;
    m_loading = true;
    m_variantCombo->clear();
    const plan::ModelShape* m = currentModel();
    QString def;
    if (m != nullptr) {
        def = qs(m->defaultVariant);
    }
    m_variantCombo->addItem(def.isEmpty() ? tr("default") : tr("default (%1)").arg(def), QString());
    if (m != nullptr) {
        for (const plan::ModelVariant& v : m->variants) {
            m_variantCombo->addItem(qs(v.name), qs(v.name));
        }
    }
    for (const auto& b : m_bindings) {
        if (b->path == QLatin1String("model.variant")) {
            b->load(m_recipe);
        }
    }
    m_loading = wasLoading;
}

void RecipeForm::setCatalog(std::shared_ptr<const plan::ModelCatalog> catalog) {
    m_catalog = std::move(catalog);
    const bool wasLoading = m_loading;
    m_loading = true;
    const QString current = qs(m_recipe.model.name);
    m_modelCombo->clear();
    if (m_catalog) {
        for (const plan::ModelShape& m : m_catalog->models()) {
            m_modelCombo->addItem(qs(m.name));
        }
    }
    m_modelCombo->setCurrentText(current);
    m_loading = wasLoading;
    refreshVariants();
    refreshEnabled();
}

void RecipeForm::setRecipe(const Recipe& recipe) {
    m_recipe = recipe;
    m_loading = true;
    for (const auto& b : m_bindings) {
        if (b->path != QLatin1String("model.variant")) {
            b->load(m_recipe);
        }
    }
    m_loading = false;
    refreshVariants();
    refreshEnabled();
}

void RecipeForm::refreshEnabled() {
    for (const auto& b : m_bindings) {
        const QString why = b->disabledWhy ? b->disabledWhy(m_recipe) : QString();
        b->editor->setEnabled(why.isEmpty());
        b->label->setEnabled(why.isEmpty());
        b->editor->setToolTip(why.isEmpty() ? b->baseTooltip : tr("disabled: %1").arg(why));
        b->label->setToolTip(b->editor->toolTip());
    }
}

void RecipeForm::setFindings(const std::vector<plan::Finding>& findings) {
    for (const auto& b : m_bindings) {
        if (b->editor != m_highlighted) {
            b->editor->setStyleSheet(QString());
        }
    }
    for (const plan::Finding& f : findings) {
        if (f.severity == plan::Severity::Info) {
            continue;
        }
        for (const auto& b : m_bindings) {
            if (b->path == qs(f.fieldPath) && b->editor != m_highlighted) {
                const bool error = f.severity == plan::Severity::Error;
                if (error || b->editor->styleSheet().isEmpty()) {
                    b->editor->setStyleSheet(error ? QStringLiteral("background: #ffebee;")
                                                   : QStringLiteral("background: #fff3e0;"));
                }
            }
        }
    }
}

QWidget* RecipeForm::editor(const QString& path) const {
    for (const auto& b : m_bindings) {
        if (b->path == path) {
            return b->editor;
        }
    }
    return nullptr;
}

QString RecipeForm::disabledReason(const QString& path) const {
    for (const auto& b : m_bindings) {
        if (b->path == path) {
            return b->disabledWhy ? b->disabledWhy(m_recipe) : QString();
        }
    }
    return {};
}

QStringList RecipeForm::boundPaths() const {
    QStringList out;
    for (const auto& b : m_bindings) {
        out << b->path;
    }
    return out;
}

bool RecipeForm::focusField(const QString& path) {
    const QString bound = editorPathFor(path);
    QWidget* target = bound.isEmpty() ? nullptr : editor(bound);
    if (target == nullptr) {
        const QString head = path.section(QLatin1Char('.'), 0, 0);
        for (const auto& [prefix, box] : m_sectionBoxes) {
            if (prefix == head || prefix.section(QLatin1Char('.'), 0, 0) == head) {
                m_scroll->ensureWidgetVisible(box);
                box->setFocus();
                return true;
            }
        }
        return false;
    }
    if (m_highlighted != nullptr && m_highlighted != target) {
        m_highlighted->setStyleSheet(QString());
    }
    m_highlighted = target;
    target->setStyleSheet(QString::fromLatin1(kHighlightStyle));
    m_scroll->ensureWidgetVisible(target, 40, 80);
    target->setFocus(Qt::OtherFocusReason);
    return true;
}

// Used by recipe_form_more.cpp.
template void RecipeForm::addEnum<plan::OffloadTarget>(QFormLayout*, const QString&, const QString&,
                                                       std::function<plan::OffloadTarget&(Recipe&)>,
                                                       std::initializer_list<plan::OffloadTarget>,
                                                       Reason, const QString&);
template void RecipeForm::addEnum<plan::WeightUpdateMode>(
    QFormLayout*, const QString&, const QString&, std::function<plan::WeightUpdateMode&(Recipe&)>,
    std::initializer_list<plan::WeightUpdateMode>, Reason, const QString&);
template void RecipeForm::addEnum<plan::WeightTransport>(
    QFormLayout*, const QString&, const QString&, std::function<plan::WeightTransport&(Recipe&)>,
    std::initializer_list<plan::WeightTransport>, Reason, const QString&);
template void RecipeForm::addOptEnum<plan::OpdType>(
    QFormLayout*, const QString&, const QString&,
    std::function<std::optional<plan::OpdType>&(Recipe&)>, std::initializer_list<plan::OpdType>,
    const QString&, Reason, const QString&);
template void RecipeForm::addOptEnum<plan::LauncherKind>(
    QFormLayout*, const QString&, const QString&,
    std::function<std::optional<plan::LauncherKind>&(Recipe&)>,
    std::initializer_list<plan::LauncherKind>, const QString&, Reason, const QString&);

}  // namespace runplane::gui
