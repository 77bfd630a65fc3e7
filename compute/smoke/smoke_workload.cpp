#include "compute/smoke/smoke_workload.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>

#include "compute/smoke/arith_task.h"
#include "compute/smoke/colocate.h"
#include "compute/smoke/grpo_math.h"
#include "compute/smoke/host_memory.h"
#include "compute/smoke/metrics_log.h"
#include "compute/smoke/policy_model.h"

namespace runplane::smoke {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMaxGradNorm = 1.0;  // slime's default --clip-grad
constexpr int kSftProbeInterval = 25;
constexpr int kSftProbeSize = 256;

double since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void syncDevice(torch::Device device) {
    if (device.is_cuda()) {
        torch::cuda::synchronize();
    }
}

torch::Tensor tokenTensor(const std::vector<std::vector<int>>& rows, torch::Device device) {
    const auto m = static_cast<std::int64_t>(rows.size());
    const auto len = static_cast<std::int64_t>(rows.empty() ? 0 : rows[0].size());
    torch::Tensor t = torch::empty({m, len}, torch::kInt64);
    auto acc = t.accessor<std::int64_t, 2>();
    for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < len; ++j) {
            acc[i][j] = rows[i][j];
        }
    }
    return t.to(device);
}

/// Responses cut after their first EOS (inclusive), read back on the host.
std::vector<std::vector<int>> decodeResponses(const torch::Tensor& tokens, int promptLength) {
    torch::Tensor cpu = tokens.slice(1, promptLength).to(torch::kCPU).contiguous();
    auto acc = cpu.accessor<std::int64_t, 2>();
    std::vector<std::vector<int>> out(static_cast<std::size_t>(cpu.size(0)));
    for (std::int64_t i = 0; i < cpu.size(0); ++i) {
        for (std::int64_t j = 0; j < cpu.size(1); ++j) {
            out[i].push_back(static_cast<int>(acc[i][j]));
            if (acc[i][j] == ArithTask::kEos) {
                break;
            }
        }
    }
    return out;
}

/// Mean over samples of the per-sample token mean (slime's default loss reduction).
torch::Tensor sampleMean(const torch::Tensor& perToken, const torch::Tensor& mask) {
    return ((perToken * mask).sum(1) / mask.sum(1).clamp_min(1.0)).mean();
}

double cpuSeconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto secs = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
    return secs(usage.ru_utime) + secs(usage.ru_stime);
}

double mb(std::size_t bytes) {
    return static_cast<double>(bytes) / kMiB;
}

struct EvalResult {
    double accuracy = 0;
    double responseLenMean = 0;
    double truncatedRatio = 0;
};

EvalResult evaluate(PolicyModel& model, const ArithTask& task,
                    const std::vector<ArithProblem>& problems, torch::Device device) {
    constexpr std::size_t kChunk = 1024;
    double correct = 0, lenSum = 0, truncated = 0;
    for (std::size_t start = 0; start < problems.size(); start += kChunk) {
        const std::size_t end = std::min(problems.size(), start + kChunk);
        std::vector<std::vector<int>> prompts;
        for (std::size_t i = start; i < end; ++i) {
            prompts.push_back(task.promptTokens(problems[i]));
        }
        Generation g = generate(model, tokenTensor(prompts, device), task.answerLength(), 1.0,
                                /*greedy=*/true, ArithTask::kEos);
        auto responses = decodeResponses(g.tokens, task.promptLength());
        for (std::size_t i = start; i < end; ++i) {
            const auto& r = responses[i - start];
            correct += task.reward(problems[i], r);
            lenSum += static_cast<double>(r.size());
            truncated += (r.empty() || r.back() != ArithTask::kEos) ? 1 : 0;
        }
    }
    const auto n = static_cast<double>(problems.size());
    return {correct / n, lenSum / n, truncated / n};
}

class Workload {
  public:
    Workload(const SmokeConfig& config, std::FILE* out)
        : m_cfg(config),
          m_log(out),
          m_device(config.device == DeviceKind::kCuda ? torch::Device(torch::kCUDA, 0)
                                                      : torch::Device(torch::kCPU)),
          m_task(config.digits, config.evalSize, config.seed),
          m_rng(config.seed) {}

    Result<SmokeSummary> run();

  private:
    void warmStart(PolicyModel& model);
    double probeAccuracy(PolicyModel& model, const std::vector<ArithProblem>& probe) {
        return evaluate(model, m_task, probe, m_device).accuracy;
    }
    Status rlPhase(Trainer& trainer, RolloutEngine& engine);
    void logEval(int rolloutId, bool beforeRl, RolloutEngine& engine);
    std::vector<Metric> memoryMetrics(const Trainer& trainer, const RolloutEngine& engine,
                                      double rssRollout, double rssTrain) const;

    const SmokeConfig& m_cfg;
    MetricsLog m_log;
    torch::Device m_device;
    ArithTask m_task;
    SplitMix64 m_rng;
    SmokeSummary m_summary;
};

void Workload::warmStart(PolicyModel& model) {
    m_log.phase("sft");
    model.setRlMode(false);
    AdamState adam;
    adam.reset(model.baseParameters(), m_cfg.sftLr);
    const int answerLen = m_task.answerLength();
    std::vector<ArithProblem> probe;
    for (int i = 0; i < kSftProbeSize; ++i) {
        probe.push_back(m_task.sampleTrain(m_rng));
    }
    for (int step = 0; step < m_cfg.sftSteps; ++step) {
        std::vector<std::vector<int>> rows;
        for (int i = 0; i < m_cfg.sftBatchSize; ++i) {
            ArithProblem p = m_task.sampleTrain(m_rng);
            std::vector<int> row = m_task.promptTokens(p);
            auto answer = m_task.answerTokens(p);
            row.insert(row.end(), answer.begin(), answer.end());
            rows.push_back(std::move(row));
        }
        torch::Tensor tokens = tokenTensor(rows, m_device);
        // Cross-entropy of the answer tokens given the prompt (teacher forcing).
        torch::Tensor logp = responseLogProbs(model, tokens, answerLen, 1.0, nullptr);
        torch::Tensor loss = -logp.mean();
        adam.zeroGrad();
        loss.backward();
        torch::nn::utils::clip_grad_norm_(adam.params, kMaxGradNorm);
        adam.apply();
        const bool last = step + 1 == m_cfg.sftSteps;
        if (step % kSftProbeInterval == 0 || last) {
            m_summary.sftLoss = loss.item<double>();
            std::vector<Metric> metrics{{"sft/loss", m_summary.sftLoss}};
            bool reached = false;
            if (m_cfg.sftTargetAccuracy > 0 && step > 0) {
                // Greedy accuracy on training prompts (never the held-out set) decides when the
                // warm start is good enough to be a mediocre base policy.
                const double acc = probeAccuracy(model, probe);
                metrics.push_back({"sft/train_accuracy", acc});
                reached = acc >= m_cfg.sftTargetAccuracy;
            }
            metrics.push_back({"sft/step", static_cast<std::int64_t>(step)});
            m_log.metrics("sft", step, metrics);
            if (reached) {
                break;
            }
        }
    }
    adam.zeroGrad();
}

void Workload::logEval(int rolloutId, bool beforeRl, RolloutEngine& engine) {
    m_log.phase("eval");
    const auto start = Clock::now();
    EvalResult r = evaluate(engine.model(), m_task, m_task.evalSet(), m_device);
    m_summary.evalCurve.push_back({rolloutId, beforeRl, r.accuracy});
    m_log.metrics("eval", rolloutId,
                  {{"eval/arith", r.accuracy},
                   {"eval/arith-truncated_ratio", r.truncatedRatio},
                   {"eval/arith/response_len/mean", r.responseLenMean},
                   {"eval/arith/time", since(start)}});
}

std::vector<Metric> Workload::memoryMetrics(const Trainer& trainer, const RolloutEngine& engine,
                                            double rssRollout, double rssTrain) const {
    (void)trainer;
    ProcessMemory now = readProcessMemory();
    return {{"memory/host_rss_rollout_mb", rssRollout},
            {"memory/host_rss_train_mb", rssTrain},
            {"memory/host_rss_mb", now.rssMb},
            {"memory/host_peak_rss_mb", now.peakRssMb},
            {"memory/clone_retained_mb", mb(engine.retainedCloneBytes())}};
}

Status Workload::rlPhase(Trainer& trainer, RolloutEngine& engine) {
    const int n = m_cfg.nSamplesPerPrompt;
    const int stepsPerRollout = m_cfg.numStepsPerRollout();
    const int gbs = m_cfg.globalBatchSize;
    const int answerLen = m_task.answerLength();
    for (int rollout = 0; rollout < m_cfg.rlSteps; ++rollout) {
        const auto stepStart = Clock::now();
        // ---- rollout: engine awake, trainer backed up on host ----
        m_log.phase("rollout");
        auto t0 = Clock::now();
        std::vector<ArithProblem> problems;
        std::vector<std::vector<int>> prompts;
        for (int i = 0; i < m_cfg.rolloutBatchSize; ++i) {
            ArithProblem p = m_task.sampleTrain(m_rng);
            for (int j = 0; j < n; ++j) {
                problems.push_back(p);
                prompts.push_back(m_task.promptTokens(p));
            }
        }
        Generation gen = generate(engine.model(), tokenTensor(prompts, m_device), answerLen,
                                  m_cfg.temperature, /*greedy=*/false, ArithTask::kEos);
        auto responses = decodeResponses(gen.tokens, m_task.promptLength());
        std::vector<float> rewards;
        double lenSum = 0;
        for (std::size_t i = 0; i < problems.size(); ++i) {
            rewards.push_back(m_task.reward(problems[i], responses[i]));
            lenSum += static_cast<double>(responses[i].size());
        }
        const std::vector<float> adv = groupAdvantages(rewards, n);
        const double rolloutTime = since(t0);
        const double samples = static_cast<double>(rewards.size());
        double rewardMean = 0, advMean = 0;
        for (std::size_t i = 0; i < rewards.size(); ++i) {
            rewardMean += rewards[i] / samples;
            advMean += adv[i] / samples;
        }
        int allZero = 0, allOne = 0;
        for (std::size_t g = 0; g < rewards.size(); g += n) {
            bool zero = true, one = true;
            for (int j = 0; j < n; ++j) {
                zero = zero && rewards[g + j] == 0.0F;
                one = one && rewards[g + j] == 1.0F;
            }
            allZero += zero ? 1 : 0;
            allOne += one ? 1 : 0;
        }
        torch::Tensor advT = torch::tensor(adv).to(m_device);
        const double rolloutLogp = sampleMean(gen.logProbs, gen.mask).item<double>();
        m_log.metrics(
            "rollout", rollout,
            {{"rollout/raw_reward", rewardMean},
             {"rollout/rewards", advMean},
             {"rollout/response_lengths", lenSum / samples},
             {"rollout/log_probs", rolloutLogp},
             {"rollout/rollout_log_probs", rolloutLogp},
             {"rollout/advantages",
              sampleMean(advT.unsqueeze(1).expand_as(gen.mask), gen.mask).item<double>()}});
        const double rssRollout = readProcessMemory().rssMb;

        // ---- switch: engine sleeps (KV dropped, base mirrored), trainer wakes ----
        t0 = Clock::now();
        if (Status st = engine.sleep(); !st) {
            return st;
        }
        syncDevice(m_device);
        double sleepTime = since(t0);
        t0 = Clock::now();
        if (Status st = trainer.wake(); !st) {
            return st;
        }
        syncDevice(m_device);
        const double wakeTime = since(t0);

        // ---- train: GRPO policy-gradient steps on the LoRA adapters ----
        m_log.phase("train");
        const auto trainStart = Clock::now();
        PolicyModel& model = trainer.model();
        AdamState& adam = trainer.optimizer();
        t0 = Clock::now();
        torch::Tensor oldLogp;
        {
            torch::NoGradGuard noGrad;
            oldLogp = responseLogProbs(model, gen.tokens, answerLen, m_cfg.temperature, nullptr);
        }
        const double logProbsTime = since(t0);
        const double logpAbsDiff =
            sampleMean((oldLogp - gen.logProbs).abs(), gen.mask).item<double>();
        for (int k = 0; k < stepsPerRollout; ++k) {
            const std::int64_t lo = static_cast<std::int64_t>(k) * gbs;
            const std::int64_t hi = lo + gbs;
            torch::Tensor mask = gen.mask.slice(0, lo, hi);
            torch::Tensor old = oldLogp.slice(0, lo, hi);
            torch::Tensor a = advT.slice(0, lo, hi).unsqueeze(1);
            torch::Tensor entropy;
            torch::Tensor logp = responseLogProbs(model, gen.tokens.slice(0, lo, hi), answerLen,
                                                  m_cfg.temperature, &entropy);
            // PPO-clipped policy gradient (ratio == 1 on the first step of a rollout).
            torch::Tensor ratio = torch::exp(logp - old);
            torch::Tensor pg1 = -a * ratio;
            torch::Tensor pg2 = -a * torch::clamp(ratio, 1.0 - m_cfg.epsClip, 1.0 + m_cfg.epsClip);
            torch::Tensor pgLoss = sampleMean(torch::max(pg1, pg2), mask);
            torch::Tensor loss = pgLoss;  // entropy coefficient 0, no KL term (slime defaults)
            adam.zeroGrad();
            loss.backward();
            const double gradNorm = torch::nn::utils::clip_grad_norm_(adam.params, kMaxGradNorm);
            adam.apply();
            torch::NoGradGuard noGrad;
            const double clipFrac =
                sampleMean(pg2.gt(pg1).to(torch::kFloat32), mask).item<double>();
            const double ppoKl = sampleMean(old - logp, mask).item<double>();
            const std::int64_t stepId = static_cast<std::int64_t>(rollout) * stepsPerRollout + k;
            m_log.metrics("step", stepId,
                          {{"train/loss", loss.item<double>()},
                           {"train/pg_loss", pgLoss.item<double>()},
                           {"train/entropy_loss", sampleMean(entropy, mask).item<double>()},
                           {"train/pg_clipfrac", clipFrac},
                           {"train/ppo_kl", ppoKl},
                           {"train/train_rollout_logprob_abs_diff", logpAbsDiff},
                           {"train/grad_norm", gradNorm},
                           {"train/lr-pg_0", adam.lr},
                           {"train/step", stepId}});
            ++m_summary.optimizerSteps;
        }
        syncDevice(m_device);
        const double trainTime = since(trainStart);
        const double rssTrain = readProcessMemory().rssMb;

        // ---- weight sync: trainer backs up to host, engine wakes from its mirror, LoRA moves
        m_log.phase("weight_sync");
        t0 = Clock::now();
        if (Status st = trainer.sleep(); !st) {
            return st;
        }
        syncDevice(m_device);
        sleepTime += since(t0);
        t0 = Clock::now();
        auto shipped = engine.wakeAndSync(trainer);
        if (!shipped) {
            return Error{shipped.error()};
        }
        syncDevice(m_device);
        const double updateTime = since(t0);

        if ((rollout + 1) % m_cfg.evalInterval == 0 || rollout + 1 == m_cfg.rlSteps) {
            logEval(rollout, false, engine);
        }
        const double tokens = lenSum;
        m_log.metrics(
            "perf", rollout,
            {{"rollout/response_len/mean", lenSum / samples},
             {"rollout/zero_std/count_0", static_cast<std::int64_t>(allZero)},
             {"rollout/zero_std/count_1", static_cast<std::int64_t>(allOne)},
             {"perf/rollout_time", rolloutTime},
             {"perf/tokens_per_gpu_per_sec", tokens / std::max(rolloutTime, 1e-9)},
             {"perf/sleep_time", sleepTime},
             {"perf/wake_up_time", wakeTime},
             {"perf/log_probs_time", logProbsTime},
             {"perf/actor_train_time", trainTime - logProbsTime},
             {"perf/train_time", trainTime},
             {"perf/actor_train_tok_per_s", tokens / std::max(trainTime - logProbsTime, 1e-9)},
             {"perf/update_weights_time", updateTime},
             {"perf/update_weights_mb", mb(shipped.value())},
             {"perf/step_time", since(stepStart)}});
        m_log.metrics("memory", rollout, memoryMetrics(trainer, engine, rssRollout, rssTrain));
    }
    return {};
}

Result<SmokeSummary> Workload::run() {
    const auto start = Clock::now();
    const int threads = std::max(1, m_cfg.threads);
    torch::set_num_threads(threads);
    // Debian's LibTorch calls the system BLAS; OpenBLAS's own pthread pool would spin beside
    // LibTorch's threads on these small matrices. Pin it to one thread when it is OpenBLAS.
    using SetThreads = void (*)(int);
    if (auto* fn = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
        fn(1);
    }
    torch::manual_seed(m_cfg.seed);
    if (m_device.is_cuda()) {
        torch::cuda::manual_seed_all(m_cfg.seed);
    }
    if (!m_cfg.metricsJsonl.empty()) {
        if (Status st = m_log.openJsonl(m_cfg.metricsJsonl); !st) {
            return Error{st.error()};
        }
    }
    PolicyShape shape;
    shape.vocab = ArithTask::kVocabSize;
    shape.maxLen = m_task.sequenceLength();
    shape.dModel = m_cfg.dModel;
    shape.heads = m_cfg.heads;
    shape.layers = m_cfg.layers;
    shape.ffn = 4 * m_cfg.dModel;
    shape.loraRank = m_cfg.loraRank;
    shape.loraAlpha = m_cfg.loraAlpha;
    auto model = std::make_unique<PolicyModel>(shape, m_device);
    {
        std::ostringstream head;
        head << "[runplane-smoke] libtorch " << TORCH_VERSION
             << " device=" << deviceName(m_cfg.device) << " threads=" << threads
             << " layers=" << shape.layers << " d_model=" << shape.dModel
             << " heads=" << shape.heads << " params=" << model->parameterCount(false)
             << " lora_params=" << model->parameterCount(true) << " lora_rank=" << shape.loraRank
             << " lora_alpha=" << shape.loraAlpha
             << " rollout_batch_size=" << m_cfg.rolloutBatchSize
             << " n_samples_per_prompt=" << m_cfg.nSamplesPerPrompt
             << " global_batch_size=" << m_cfg.globalBatchSize
             << " num_steps_per_rollout=" << m_cfg.numStepsPerRollout()
             << " backup_mode=" << backupModeName(m_cfg.backupMode)
             << " backup_scale_mb=" << m_cfg.backupScaleMb
             << " lora_base_cpu_backup=" << (m_cfg.loraBaseCpuBackup ? "on" : "off")
             << " seed=" << m_cfg.seed << " eval_size=" << m_task.evalSet().size();
        m_log.line(head.str());
    }
    warmStart(*model);

    // RL setup: base frozen, adapters trainable; the engine gets a full initial weight copy.
    model->setRlMode(true);
    const std::size_t scale = static_cast<std::size_t>(m_cfg.backupScaleMb) << 20;
    auto trainer = std::make_unique<Trainer>(std::move(model), m_device, scale);
    trainer->optimizer().reset(trainer->model().loraParameters(), m_cfg.rlLr);
    auto engine = std::make_unique<RolloutEngine>(std::make_unique<PolicyModel>(shape, m_device),
                                                  m_device, scale / 2, scale, m_cfg.backupMode,
                                                  m_cfg.loraBaseCpuBackup);
    engine->loadFrom(trainer->model());
    m_log.phase("weight_sync");
    if (Status st = trainer->sleep(); !st) {
        return Error{st.error()};
    }
    logEval(0, true, *engine);
    if (Status st = rlPhase(*trainer, *engine); !st) {
        return Error{st.error()};
    }
    m_log.phase("done");
    m_summary.wallSeconds = since(start);
    m_summary.peakRssMb = readProcessMemory().peakRssMb;
    const double before = m_summary.evalCurve.front().accuracy;
    const double after = m_summary.evalCurve.back().accuracy;
    std::ostringstream tail;
    tail << "[runplane-smoke] summary: eval/arith " << pythonFloatRepr(before) << " -> "
         << pythonFloatRepr(after) << " (" << (after >= before ? "+" : "")
         << pythonFloatRepr(after - before) << ") over " << m_cfg.rlSteps << " rollouts, "
         << m_summary.optimizerSteps << " optimizer steps; wall " << m_summary.wallSeconds
         << " s (cpu " << cpuSeconds() << " s); peak host RSS " << m_summary.peakRssMb << " MiB";
    m_log.line(tail.str());
    return m_summary;
}

}  // namespace

Status checkDevice(const SmokeConfig& config) {
    if (config.device == DeviceKind::kCuda && !torch::cuda::is_available()) {
        return Error{
            std::string("runplane-smoke: --device cuda: no CUDA device is available to this "
                        "LibTorch build (") +
            TORCH_VERSION + "); use --device cpu"};
    }
    return {};
}

Result<SmokeSummary> runSmoke(const SmokeConfig& config, std::FILE* out) {
    try {
        Workload workload(config, out);
        return workload.run();
    } catch (const std::exception& e) {
        return Error{std::string("runplane-smoke: LibTorch error: ") + e.what()};
    }
}

}  // namespace runplane::smoke
