#include "compute/smoke/arith_task.h"

namespace runplane::smoke {

std::uint64_t SplitMix64::next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t bound) {
    // Reject the top partial range so every residue is equally likely.
    const std::uint64_t limit = ~0ULL - (~0ULL % bound);
    std::uint64_t x = next();
    while (x >= limit) {
        x = next();
    }
    return x % bound;
}

ArithTask::ArithTask(int digits, int evalSize, std::uint64_t seed) : m_digits(digits), m_limit(1) {
    for (int i = 0; i < digits; ++i) {
        m_limit *= 10;
    }
    // The held-out set has its own stream, derived from the seed but never shared with training.
    SplitMix64 rng(seed ^ 0xE7A1E7A1E7A1E7A1ULL);
    while (static_cast<int>(m_eval.size()) < evalSize) {
        ArithProblem p{static_cast<int>(rng.below(m_limit)), static_cast<int>(rng.below(m_limit))};
        if (isHeldOut(p)) {
            continue;
        }
        m_eval.push_back(p);
        m_heldOut.insert(key(p.a, p.b));
        m_heldOut.insert(key(p.b, p.a));
    }
}

bool ArithTask::isHeldOut(const ArithProblem& p) const {
    return m_heldOut.count(key(p.a, p.b)) != 0 || m_heldOut.count(key(p.b, p.a)) != 0;
}

ArithProblem ArithTask::sampleTrain(SplitMix64& rng) const {
    for (;;) {
        ArithProblem p{static_cast<int>(rng.below(m_limit)), static_cast<int>(rng.below(m_limit))};
        if (!isHeldOut(p)) {
            return p;
        }
    }
}

std::vector<int> ArithTask::promptTokens(const ArithProblem& p) const {
    std::vector<int> out(promptLength());
    int a = p.a;
    int b = p.b;
    for (int i = m_digits - 1; i >= 0; --i) {
        out[i] = a % 10;
        a /= 10;
        out[m_digits + 1 + i] = b % 10;
        b /= 10;
    }
    out[m_digits] = kPlus;
    out[2 * m_digits + 1] = kEquals;
    return out;
}

std::vector<int> ArithTask::answerTokens(const ArithProblem& p) const {
    std::vector<int> out;
    out.reserve(answerLength());
    int sum = p.a + p.b;
    for (int i = 0; i < m_digits + 1; ++i) {
        out.push_back(sum % 10);
        sum /= 10;
    }
    out.push_back(kEos);
    return out;
}

float ArithTask::reward(const ArithProblem& p, const std::vector<int>& response) const {
    return response == answerTokens(p) ? 1.0F : 0.0F;
}

std::string ArithTask::render(const std::vector<int>& tokens) {
    std::string out;
    for (int t : tokens) {
        if (t >= 0 && t <= 9) {
            out.push_back(static_cast<char>('0' + t));
        } else if (t == kPlus) {
            out.push_back('+');
        } else if (t == kEquals) {
            out.push_back('=');
        } else if (t == kEos) {
            out += "<eos>";
        } else {
            out += "<pad>";
        }
    }
    return out;
}

}  // namespace runplane::smoke
