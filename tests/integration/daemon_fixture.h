#pragma once
// A gtest fixture for integration tests that talk to one real runplaned: a scratch folder, and
// the daemon on a state folder of its own inside it, started with the flags the test gives (e.g.
// --metrics-listen). Members go in reverse: the daemon is stopped before the folder is removed.

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/db/test_util.h"
#include "tests/support/process.h"

namespace runplane::testing {

class DaemonFixture : public ::testing::Test {
  protected:
    /// Starts runplaned as node `node`, sampling at `sampleHz`, with `extraArgs`, on dir/state;
    /// then `address` is where it listens. Use as ASSERT_TRUE(startDaemon(...)): a failure
    /// carries the daemon's stderr.
    ::testing::AssertionResult startDaemon(const std::string& node,
                                           std::vector<std::string> extraArgs = {},
                                           double sampleHz = 4) {
        const std::string state = dir.file("state");
        std::filesystem::create_directories(state);
        daemon.emplace(state, node, sampleHz);
        daemon->setExtraArgs(std::move(extraArgs));
        address = daemon->start();
        if (address.empty()) {
            return ::testing::AssertionFailure() << daemon->error();
        }
        return ::testing::AssertionSuccess();
    }

    ScratchDir dir;
    std::optional<Daemon> daemon;
    std::string address;
};

}  // namespace runplane::testing
