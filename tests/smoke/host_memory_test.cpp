// issue 6: host backup buffers make RSS follow the backups exactly (real, touched memory).
#include <gtest/gtest.h>

#include <cstring>

#include "compute/smoke/host_memory.h"

using runplane::smoke::HostBuffer;
using runplane::smoke::readProcessMemory;

namespace {
constexpr std::size_t kMiB = 1024 * 1024;
}

TEST(HostBuffer, TouchMakesResidentReleaseDropsAndMappingIsReused) {
    const double before = readProcessMemory().rssMb;
    ASSERT_GT(before, 0);
    auto buffer = HostBuffer::allocate(64 * kMiB);
    ASSERT_TRUE(buffer.ok()) << buffer.error();
    std::byte* address = buffer->data();
    // Mapped but untouched: not resident yet.
    EXPECT_LT(readProcessMemory().rssMb - before, 8.0);
    buffer->touch();
    EXPECT_GT(readProcessMemory().rssMb - before, 56.0);
    buffer->release();
    EXPECT_LT(readProcessMemory().rssMb - before, 8.0);
    EXPECT_EQ(buffer->data(), address);  // zero_copy: same addresses next time
    std::memset(buffer->data(), 7, buffer->size());
    EXPECT_GT(readProcessMemory().rssMb - before, 56.0);
    EXPECT_EQ(static_cast<int>(buffer->data()[12345]), 7);
}

TEST(HostBuffer, DestructionReturnsMemoryAndMoveTransfersOwnership) {
    const double before = readProcessMemory().rssMb;
    {
        auto a = HostBuffer::allocate(32 * kMiB);
        ASSERT_TRUE(a.ok());
        a->touch();
        HostBuffer b = std::move(a).value();
        EXPECT_EQ(b.size(), 32 * kMiB);
        EXPECT_GT(readProcessMemory().rssMb - before, 24.0);
    }
    EXPECT_LT(readProcessMemory().rssMb - before, 8.0);
    EXPECT_GE(readProcessMemory().peakRssMb, readProcessMemory().rssMb);
}

TEST(HostBuffer, ZeroBytesIsEmpty) {
    auto a = HostBuffer::allocate(0);
    ASSERT_TRUE(a.ok());
    EXPECT_TRUE(a->empty());
}
