#pragma once
// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord / tfevents files use it, and
// the record format's mask (docs/imports.md, "TensorBoard event files").

#include <cstddef>
#include <cstdint>

namespace runplane::imports {

/// CRC-32C of the bytes (SSE 4.2's crc32 instruction where the CPU has it, else a table).
std::uint32_t crc32c(const void* data, std::size_t size);

/// The masked form tfevents files store: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
inline std::uint32_t maskCrc(std::uint32_t crc) {
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace runplane::imports
