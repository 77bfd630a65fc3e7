#include "compute/smoke/grpo_math.h"

#include <cmath>

namespace runplane::smoke {

std::vector<float> groupAdvantages(const std::vector<float>& rewards, int groupSize, float eps) {
    std::vector<float> adv(rewards.size(), 0.0F);
    if (groupSize <= 1) {
        return rewards;
    }
    for (std::size_t g = 0; g + groupSize <= rewards.size(); g += groupSize) {
        double mean = 0;
        for (int i = 0; i < groupSize; ++i) {
            mean += rewards[g + i];
        }
        mean /= groupSize;
        double var = 0;
        for (int i = 0; i < groupSize; ++i) {
            const double d = rewards[g + i] - mean;
            var += d * d;
        }
        const double stdDev = std::sqrt(var / (groupSize - 1));
        // A group whose rewards are all equal carries no signal: its advantages are 0, not 0/0.
        const double denominator = stdDev + eps;
        for (int i = 0; i < groupSize; ++i) {
            adv[g + i] = denominator > 0.0
                             ? static_cast<float>((rewards[g + i] - mean) / denominator)
                             : 0.0F;
        }
    }
    return adv;
}

int zeroStdGroups(const std::vector<float>& rewards, int groupSize) {
    int count = 0;
    for (std::size_t g = 0; g + groupSize <= rewards.size(); g += groupSize) {
        bool same = true;
        for (int i = 1; i < groupSize; ++i) {
            same = same && rewards[g + i] == rewards[g];
        }
        count += same ? 1 : 0;
    }
    return count;
}

}  // namespace runplane::smoke
