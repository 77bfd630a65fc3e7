#pragma once
// The scalar parts of GRPO that need no tensors: group-normalised advantages and summary
// statistics of a rollout. Torch-free, so the formulas are unit-tested directly.

#include <vector>

namespace runplane::smoke {

/// Group-normalised advantages. `rewards` holds consecutive groups of `groupSize` samples of the
/// same prompt. For groupSize > 1: A_i = (r_i - mean_g) / (std_g + eps) with std_g the unbiased
/// (n - 1) standard deviation of the group, as in slime's GRPO. For groupSize == 1 the group
/// statistics are undefined and the raw reward is used (slime: n_samples_per_prompt == 1
/// disables the std normalisation). Requires rewards.size() % groupSize == 0.
std::vector<float> groupAdvantages(const std::vector<float>& rewards, int groupSize,
                                   float eps = 1e-6F);

/// Number of groups whose rewards are all equal (zero std: they carry no GRPO signal).
int zeroStdGroups(const std::vector<float>& rewards, int groupSize);

}  // namespace runplane::smoke
