// issue 6: group-normalised advantages (GRPO) as slime computes them.
#include <gtest/gtest.h>

#include <cmath>

#include "compute/smoke/grpo_math.h"

using runplane::smoke::groupAdvantages;
using runplane::smoke::zeroStdGroups;

TEST(GroupAdvantages, NormalisesEachGroupWithUnbiasedStd) {
    // Group 1: rewards {1, 0, 0, 0}: mean 0.25, unbiased std sqrt(0.25) = 0.5.
    // Group 2: all equal -> zero advantages (no signal).
    const std::vector<float> r = {1, 0, 0, 0, 1, 1, 1, 1};
    const auto a = groupAdvantages(r, 4, 0.0F);
    ASSERT_EQ(a.size(), 8U);
    EXPECT_NEAR(a[0], 1.5, 1e-6);
    EXPECT_NEAR(a[1], -0.5, 1e-6);
    EXPECT_NEAR(a[3], -0.5, 1e-6);
    for (int i = 4; i < 8; ++i) {
        EXPECT_EQ(a[i], 0.0F);
    }
    EXPECT_EQ(zeroStdGroups(r, 4), 1);
}

TEST(GroupAdvantages, SumToZeroPerGroupAndEpsKeepsThemFinite) {
    const std::vector<float> r = {1, 0, 1, 1, 0, 0};
    const auto a = groupAdvantages(r, 3);
    EXPECT_NEAR(a[0] + a[1] + a[2], 0.0, 1e-5);
    EXPECT_NEAR(a[3] + a[4] + a[5], 0.0, 1e-5);
    for (float x : a) {
        EXPECT_TRUE(std::isfinite(x));
    }
}

TEST(GroupAdvantages, GroupOfOneUsesRawReward) {
    const std::vector<float> r = {1, 0, 1};
    EXPECT_EQ(groupAdvantages(r, 1), r);
}
