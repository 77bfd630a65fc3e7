#include "compute/smoke/colocate.h"

#include <cmath>
#include <cstring>

#if defined(RUNPLANE_SMOKE_WITH_CUDA) && __has_include(<c10/cuda/CUDACachingAllocator.h>)
#include <c10/cuda/CUDACachingAllocator.h>
#define RUNPLANE_SMOKE_EMPTY_CACHE 1
#endif

namespace runplane::smoke {
namespace {

constexpr std::size_t kAlign = 64;

std::vector<torch::Tensor> concat(std::vector<torch::Tensor> a,
                                  const std::vector<torch::Tensor>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

torch::Tensor restoreTo(const torch::Tensor& hostView, torch::Device device) {
    return torch::empty(hostView.sizes(),
                        torch::TensorOptions().dtype(torch::kFloat32).device(device))
        .copy_(hostView);
}

}  // namespace

HostLayout::HostLayout(const std::vector<torch::Tensor>& tensors) {
    for (const auto& t : tensors) {
        m_shapes.push_back(t.sizes().vec());
        m_offsets.push_back(m_bytes);
        const std::size_t bytes = static_cast<std::size_t>(t.numel()) * sizeof(float);
        m_bytes += (bytes + kAlign - 1) / kAlign * kAlign;
    }
}

torch::Tensor HostLayout::view(const HostBuffer& buffer, std::size_t i) const {
    return torch::from_blob(buffer.data() + m_offsets[i], m_shapes[i], torch::kFloat32);
}

void AdamState::reset(std::vector<torch::Tensor> parameters, double learningRate) {
    params = std::move(parameters);
    expAvg.clear();
    expAvgSq.clear();
    for (const auto& p : params) {
        expAvg.push_back(torch::zeros_like(p));
        expAvgSq.push_back(torch::zeros_like(p));
    }
    step = 0;
    lr = learningRate;
}

void AdamState::apply() {
    torch::NoGradGuard noGrad;
    ++step;
    const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(step));
    const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(step));
    for (std::size_t i = 0; i < params.size(); ++i) {
        const torch::Tensor& g = params[i].grad();
        if (!g.defined()) {
            continue;
        }
        // m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  p -= lr * m_hat / (sqrt(v_hat) + eps)
        expAvg[i].mul_(beta1).add_(g, 1.0 - beta1);
        expAvgSq[i].mul_(beta2).addcmul_(g, g, 1.0 - beta2);
        torch::Tensor denom = (expAvgSq[i] / bc2).sqrt_().add_(eps);
        params[i].addcdiv_(expAvg[i], denom, -lr / bc1);
    }
}

void AdamState::zeroGrad() {
    for (auto& p : params) {
        p.mutable_grad() = torch::Tensor();
    }
}

void releaseStorage(torch::Tensor& t) {
    if (t.defined()) {
        t.set_data(torch::empty({0}, t.options()));
    }
}

void releaseDeviceCache(torch::Device device) {
#if defined(RUNPLANE_SMOKE_EMPTY_CACHE)
    if (device.is_cuda()) {
        c10::cuda::CUDACachingAllocator::emptyCache();
    }
#else
    (void)device;
#endif
}

// ---- Trainer ----

Trainer::Trainer(std::unique_ptr<PolicyModel> model, torch::Device device, std::size_t padBytes)
    : m_model(std::move(model)), m_device(device) {
    // The state shard stands in for the bulk of a large model's weights and optimizer state:
    // real, written memory that is backed up and restored with the rest.
    const auto elems = static_cast<std::int64_t>(padBytes / sizeof(float));
    m_shard = torch::full({elems}, 0.25F, torch::TensorOptions().device(device));
}

std::vector<torch::Tensor*> Trainer::stateTensors() {
    std::vector<torch::Tensor*> out;
    for (auto* list : {&m_adam.expAvg, &m_adam.expAvgSq}) {
        for (auto& t : *list) {
            out.push_back(&t);
        }
    }
    out.push_back(&m_shard);
    return out;
}

Status Trainer::sleep() {
    if (m_asleep) {
        return {};
    }
    m_adam.zeroGrad();
    std::vector<torch::Tensor> all = concat(m_model->baseParameters(), m_model->loraParameters());
    for (torch::Tensor* t : stateTensors()) {
        all.push_back(*t);
    }
    if (m_backup.empty()) {
        m_layout = HostLayout(all);
        auto buffer = HostBuffer::allocate(m_layout.bytes());
        if (!buffer) {
            return Error{"trainer sleep: " + buffer.error()};
        }
        m_backup = std::move(buffer).value();
    }
    torch::NoGradGuard noGrad;
    for (std::size_t i = 0; i < all.size(); ++i) {
        m_layout.view(m_backup, i).copy_(all[i]);
        releaseStorage(all[i]);
    }
    releaseDeviceCache(m_device);
    m_asleep = true;
    return {};
}

Status Trainer::wake() {
    if (!m_asleep) {
        return {};
    }
    std::vector<torch::Tensor> all = concat(m_model->baseParameters(), m_model->loraParameters());
    for (torch::Tensor* t : stateTensors()) {
        all.push_back(*t);
    }
    torch::NoGradGuard noGrad;
    for (std::size_t i = 0; i < all.size(); ++i) {
        all[i].set_data(restoreTo(m_layout.view(m_backup, i), m_device));
    }
    m_backup.release();
    m_asleep = false;
    return {};
}

std::vector<torch::Tensor> Trainer::hostParameterViews(bool loraOnly) const {
    const std::size_t nBase = m_model->baseParameters().size();
    const std::size_t nLora = m_model->loraParameters().size();
    std::vector<torch::Tensor> out;
    for (std::size_t i = loraOnly ? nBase : 0; i < nBase + nLora; ++i) {
        out.push_back(m_layout.view(m_backup, i));
    }
    return out;
}

torch::Tensor Trainer::hostShardView() const {
    return m_layout.view(m_backup, m_layout.count() - 1);
}

// ---- RolloutEngine ----

RolloutEngine::RolloutEngine(std::unique_ptr<PolicyModel> model, torch::Device device,
                             std::size_t weightPadBytes, std::size_t kvPoolBytes, BackupMode mode,
                             bool baseCpuBackup)
    : m_model(std::move(model)),
      m_device(device),
      m_kvBytes(kvPoolBytes),
      m_mode(mode),
      m_baseCpuBackup(baseCpuBackup) {
    m_model->setRlMode(true);
    for (auto& t : m_model->loraParameters()) {
        t.set_requires_grad(false);
    }
    m_weightElems = static_cast<std::int64_t>(weightPadBytes / sizeof(float));
    m_weightShard = torch::full({m_weightElems}, 0.25F, torch::TensorOptions().device(device));
    m_kvPool = torch::zeros({static_cast<std::int64_t>(m_kvBytes / sizeof(float))},
                            torch::TensorOptions().device(device));
}

void RolloutEngine::loadFrom(PolicyModel& trainerModel) {
    torch::NoGradGuard noGrad;
    const auto src = concat(trainerModel.baseParameters(), trainerModel.loraParameters());
    const auto dst = concat(m_model->baseParameters(), m_model->loraParameters());
    for (std::size_t i = 0; i < src.size(); ++i) {
        dst[i].set_data(src[i].detach().clone());
    }
}

Status RolloutEngine::sleep() {
    if (m_asleep) {
        return {};
    }
    m_kvPool = torch::Tensor();  // the KV cache is discarded, never backed up
    std::vector<torch::Tensor> base = m_model->baseParameters();
    base.push_back(m_weightShard);
    torch::NoGradGuard noGrad;
    if (m_baseCpuBackup) {
        if (m_mirror.empty()) {
            m_layout = HostLayout(base);
            auto buffer = HostBuffer::allocate(m_layout.bytes());
            if (!buffer) {
                return Error{"engine sleep: " + buffer.error()};
            }
            m_mirror = std::move(buffer).value();
        }
        for (std::size_t i = 0; i < base.size(); ++i) {
            m_layout.view(m_mirror, i).copy_(base[i]);
        }
        m_mirrorHeld = true;
    } else if (m_layout.count() == 0) {
        m_layout = HostLayout(base);  // shapes only, for the restore from the trainer
    }
    for (auto& t : base) {
        releaseStorage(t);
    }
    for (auto t : m_model->loraParameters()) {
        releaseStorage(t);
    }
    releaseDeviceCache(m_device);
    m_asleep = true;
    return {};
}

Result<std::size_t> RolloutEngine::wakeAndSync(const Trainer& trainer) {
    if (!m_asleep || !trainer.asleep()) {
        return Error{"weight sync: engine must be asleep and trainer backed up"};
    }
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> base = m_model->baseParameters();
    base.push_back(m_weightShard);
    std::size_t shipped = 0;
    if (m_baseCpuBackup) {
        // get_cpu_backup(zero_copy): the mirror itself, or a fresh clone of it.
        const HostBuffer* source = &m_mirror;
        HostBuffer clone;
        if (m_mode == BackupMode::kClone) {
            auto buffer = HostBuffer::allocate(m_mirror.size());
            if (!buffer) {
                return Error{"weight sync (clone): " + buffer.error()};
            }
            clone = std::move(buffer).value();
            std::memcpy(clone.data(), m_mirror.data(), m_mirror.size());
            source = &clone;
        }
        for (std::size_t i = 0; i < base.size(); ++i) {
            base[i].set_data(restoreTo(m_layout.view(*source, i), m_device));
        }
        m_mirror.release();
        m_mirrorHeld = false;
        if (m_mode == BackupMode::kClone) {
            m_retainedClones.push_back(std::move(clone));
            while (static_cast<int>(m_retainedClones.size()) > kCloneRetainedGenerations) {
                m_retainedClones.pop_front();
            }
        }
    } else {
        // No mirror: the full base weights travel from the trainer on every sync.
        const auto views = trainer.hostParameterViews(false);
        for (std::size_t i = 0; i + 1 < base.size(); ++i) {
            base[i].set_data(restoreTo(views[i], m_device));
            shipped += static_cast<std::size_t>(views[i].numel()) * sizeof(float);
        }
        torch::Tensor shard = trainer.hostShardView();
        base.back().set_data(restoreTo(shard.slice(0, 0, m_weightElems), m_device));
        shipped += static_cast<std::size_t>(m_weightElems) * sizeof(float);
    }
    const auto loraViews = trainer.hostParameterViews(true);
    std::vector<torch::Tensor> lora = m_model->loraParameters();
    for (std::size_t i = 0; i < lora.size(); ++i) {
        lora[i].set_data(restoreTo(loraViews[i], m_device));
        shipped += static_cast<std::size_t>(loraViews[i].numel()) * sizeof(float);
    }
    m_kvPool = torch::zeros({static_cast<std::int64_t>(m_kvBytes / sizeof(float))},
                            torch::TensorOptions().device(m_device));
    m_asleep = false;
    return shipped;
}

std::size_t RolloutEngine::retainedCloneBytes() const {
    std::size_t total = 0;
    for (const auto& b : m_retainedClones) {
        total += b.size();
    }
    return total;
}

}  // namespace runplane::smoke
