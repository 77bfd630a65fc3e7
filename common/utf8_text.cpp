#include "common/utf8_text.h"

namespace runplane {
namespace {

// Length of the well-formed sequence starting at text[i], or 0 when it is ill-formed; then
// *subpart is the length of its maximal subpart (at least 1), the bytes one U+FFFD replaces.
std::size_t sequenceAt(std::string_view text, std::size_t i, std::size_t* subpart) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    *subpart = 1;
    if (b0 < 0x80) {
        return 1;
    }
    std::size_t length = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (Table 3-7)
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        length = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        length = 3;
        lo = b0 == 0xE0 ? 0xA0 : 0x80;
        hi = b0 == 0xED ? 0x9F : 0xBF;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        length = 4;
        lo = b0 == 0xF0 ? 0x90 : 0x80;
        hi = b0 == 0xF4 ? 0x8F : 0xBF;
    } else {
        return 0;  // 0x80..0xC1, 0xF5..0xFF never start a sequence
    }
    for (std::size_t k = 1; k < length; ++k) {
        if (i + k >= text.size()) {
            return 0;
        }
        const unsigned char b = byte(i + k);
        const bool ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
        if (!ok) {
            return 0;
        }
        *subpart = k + 1;
    }
    return length;
}

}  // namespace

bool isValidUtf8(std::string_view text) {
    std::size_t subpart = 0;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequenceAt(text, i, &subpart);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

std::string toValidUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 8);
    std::size_t subpart = 0;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequenceAt(text, i, &subpart);
        if (n == 0) {
            out += kUtf8Replacement;
            i += subpart;
        } else {
            out.append(text.data() + i, n);
            i += n;
        }
    }
    return out;
}

bool makeValidUtf8(std::string& text) {
    if (isValidUtf8(text)) {
        return false;
    }
    text = toValidUtf8(text);
    return true;
}

}  // namespace runplane
