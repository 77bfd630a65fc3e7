// ncclUniqueId <-> hex text. Dependency-free: also compiled into runplane-nccl-probe.
#include "compute/gpu/nccl_probe.h"

namespace runplane::compute {
namespace {
constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
}  // namespace

Result<std::vector<unsigned char>> parseNcclUniqueIdHex(std::string_view hex) {
    if (hex.size() != 2 * kUniqueIdBytes) {
        return Error{"unique id: expected " + std::to_string(2 * kUniqueIdBytes) +
                     " hex digits, got " + std::to_string(hex.size())};
    }
    std::vector<unsigned char> id(kUniqueIdBytes);
    for (std::size_t k = 0; k < hex.size(); ++k) {
        const char c = hex[k];
        int nibble = -1;
        if (c >= '0' && c <= '9')
            nibble = c - '0';
        if (c >= 'a' && c <= 'f')
            nibble = c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
            nibble = c - 'A' + 10;
        if (nibble < 0) {
            return Error{"unique id: character " + std::to_string(k + 1) + " ('" +
                         std::string(1, c) + "') is not a hex digit"};
        }
        id[k / 2] = static_cast<unsigned char>(id[k / 2] | (nibble << (k % 2 == 0 ? 4 : 0)));
    }
    return id;
}

std::string formatNcclUniqueIdHex(const std::vector<unsigned char>& id) {
    static const char kDigits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(id.size() * 2);
    for (const unsigned char byte : id) {
        hex += kDigits[byte >> 4];
        hex += kDigits[byte & 0xF];
    }
    return hex;
}

}  // namespace runplane::compute
