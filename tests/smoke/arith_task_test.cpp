// issue 6: the synthetic addition task; above all, the held-out set never reaches training.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "compute/smoke/arith_task.h"

using runplane::smoke::ArithProblem;
using runplane::smoke::ArithTask;
using runplane::smoke::SplitMix64;

TEST(ArithTask, EncodesFixedWidthPromptAndReversedAnswer) {
    ArithTask task(3, 10, 1);
    const ArithProblem p{123, 45};
    EXPECT_EQ(ArithTask::render(task.promptTokens(p)), "123+045=");
    EXPECT_EQ(ArithTask::render(task.answerTokens(p)), "8610<eos>");  // 168, reversed, 4 digits
    EXPECT_EQ(static_cast<int>(task.promptTokens(p).size()), task.promptLength());
    EXPECT_EQ(static_cast<int>(task.answerTokens(p).size()), task.answerLength());
    EXPECT_EQ(ArithTask::render(task.answerTokens({999, 999})), "8991<eos>");  // 1998
}

TEST(ArithTask, RewardIsExactMatchIncludingEos) {
    ArithTask task(2, 10, 1);
    const ArithProblem p{47, 85};  // 132 -> "231" + EOS
    EXPECT_EQ(task.reward(p, task.answerTokens(p)), 1.0F);
    EXPECT_EQ(task.reward(p, {2, 3, 1}), 0.0F);  // no EOS
    EXPECT_EQ(task.reward(p, {2, 3, 2, ArithTask::kEos}), 0.0F);
    EXPECT_EQ(task.reward(p, {2, 3, 1, 0, ArithTask::kEos}), 0.0F);
}

TEST(ArithTask, HeldOutSetIsDistinctAndDeterministic) {
    ArithTask a(2, 500, 7);
    ArithTask b(2, 500, 7);
    ASSERT_EQ(a.evalSet().size(), 500U);
    EXPECT_EQ(a.evalSet(), b.evalSet());
    std::set<std::pair<int, int>> seen;
    for (const auto& p : a.evalSet()) {
        // Neither the pair nor its commuted twin appears twice.
        EXPECT_TRUE(seen.insert({std::min(p.a, p.b), std::max(p.a, p.b)}).second);
        EXPECT_TRUE(a.isHeldOut(p));
        EXPECT_TRUE(a.isHeldOut({p.b, p.a}));
    }
    ArithTask other(2, 500, 8);
    EXPECT_NE(a.evalSet(), other.evalSet());
}

// The proof of disjointness: every training draw (warm start and RL prompts use the same
// sampler) is checked against the held-out set directly, not through isHeldOut(). With 2-digit
// operands and 500 held-out problems, about 10% of uniform draws would hit the held-out set if
// the sampler did not reject them, so 200k draws would find ~20k collisions.
TEST(ArithTask, TrainingDrawsNeverHitTheHeldOutSet) {
    ArithTask task(2, 500, 1);
    std::set<std::pair<int, int>> heldOut;
    for (const auto& p : task.evalSet()) {
        heldOut.insert({p.a, p.b});
        heldOut.insert({p.b, p.a});
    }
    SplitMix64 rng(1);
    int collisions = 0;
    std::set<std::pair<int, int>> trainSeen;
    for (int i = 0; i < 200000; ++i) {
        ArithProblem p = task.sampleTrain(rng);
        ASSERT_GE(p.a, 0);
        ASSERT_LT(p.a, 100);
        ASSERT_GE(p.b, 0);
        ASSERT_LT(p.b, 100);
        collisions += heldOut.count({p.a, p.b}) != 0 ? 1 : 0;
        trainSeen.insert({p.a, p.b});
    }
    EXPECT_EQ(collisions, 0);
    // Training covers everything else: 10^4 pairs minus the held-out ones (and their twins).
    EXPECT_EQ(trainSeen.size() + heldOut.size(), 10000U);
}

TEST(ArithTask, UniformRawDrawsWouldCollideSoTheCheckHasTeeth) {
    ArithTask task(2, 500, 1);
    SplitMix64 rng(3);
    int hits = 0;
    for (int i = 0; i < 10000; ++i) {
        ArithProblem p{static_cast<int>(rng.below(100)), static_cast<int>(rng.below(100))};
        hits += task.isHeldOut(p) ? 1 : 0;
    }
    EXPECT_GT(hits, 500);  // ~9.9% expected
}

TEST(SplitMix64, BelowStaysInRangeAndCoversIt) {
    SplitMix64 rng(5);
    std::set<std::uint64_t> values;
    for (int i = 0; i < 1000; ++i) {
        auto v = rng.below(7);
        ASSERT_LT(v, 7U);
        values.insert(v);
    }
    EXPECT_EQ(values.size(), 7U);
}
