#pragma once
// The synthetic task of runplane-smoke: fixed-width multi-digit addition, generated in-process.
// A held-out evaluation set is drawn first; every training problem (warm start and RL prompts)
// is drawn by rejection so that neither a held-out pair nor its commuted twin ever appears in
// training. Torch-free; deterministic for a seed on every platform (own PRNG, no <random>
// distributions, whose output is implementation-defined).

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace runplane::smoke {

/// SplitMix64: tiny, portable, deterministic PRNG. Not thread-safe (one per user).
class SplitMix64 {
  public:
    explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next();
    /// Uniform integer in [0, bound) without modulo bias; bound > 0.
    std::uint64_t below(std::uint64_t bound);

  private:
    std::uint64_t m_state;
};

/// One problem: a + b with 0 <= a, b < 10^digits.
struct ArithProblem {
    int a = 0;
    int b = 0;
    bool operator==(const ArithProblem&) const = default;
};

/// Vocabulary, encoding and the train / held-out split. Immutable after construction, so
/// const methods are safe to call from several threads.
///
/// Sequence layout (digits = D): prompt "a+b=" with both operands zero-padded to D digits
/// (2D + 2 tokens), answer = the D + 1 digits of the sum least-significant first, then EOS
/// (D + 2 tokens). Example, D = 3: 123 + 45 -> "123+045=" then "8610" EOS.
class ArithTask {
  public:
    static constexpr int kPlus = 10;
    static constexpr int kEquals = 11;
    static constexpr int kEos = 12;
    static constexpr int kPad = 13;
    static constexpr int kVocabSize = 14;

    ArithTask(int digits, int evalSize, std::uint64_t seed);

    int digits() const { return m_digits; }
    int promptLength() const { return 2 * m_digits + 2; }
    int answerLength() const { return m_digits + 2; }
    int sequenceLength() const { return promptLength() + answerLength(); }
    int operandLimit() const { return m_limit; }

    const std::vector<ArithProblem>& evalSet() const { return m_eval; }
    /// True when (a, b) or (b, a) is in the held-out set.
    bool isHeldOut(const ArithProblem& p) const;
    /// A training problem; never held out (rejection sampling).
    ArithProblem sampleTrain(SplitMix64& rng) const;

    std::vector<int> promptTokens(const ArithProblem& p) const;
    /// The reference answer: sum digits least-significant first, then EOS.
    std::vector<int> answerTokens(const ArithProblem& p) const;
    /// Reward = exact match: the response equals answerTokens(p) token for token (so it must
    /// stop with EOS right after the D + 1 digits). Returns 1 or 0.
    float reward(const ArithProblem& p, const std::vector<int>& response) const;
    /// Human-readable form of tokens, e.g. "123+045=8610<eos>".
    static std::string render(const std::vector<int>& tokens);

  private:
    std::uint64_t key(int a, int b) const {
        return static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(m_limit) +
               static_cast<std::uint64_t>(b);
    }

    int m_digits;
    int m_limit;
    std::vector<ArithProblem> m_eval;
    std::unordered_set<std::uint64_t> m_heldOut;
};

}  // namespace runplane::smoke
