// Run working directories stay under the run root. issue 5
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "backend/agent/workdir.h"
#include "tests/agent/daemon_process.h"

namespace runplane::agent {
namespace {

TEST(Workdir, AcceptsRelativeAndInsideAbsolute) {
    testing::TempDir dir;
    const std::string root = dir.path() + "/root";
    auto a = confineWorkdir(root, "exp/1", "fallback");
    ASSERT_TRUE(a.ok()) << a.error();
    EXPECT_TRUE(std::filesystem::is_directory(*a));
    EXPECT_EQ(*a, std::filesystem::canonical(root).string() + "/exp/1");
    auto b = confineWorkdir(root, "", "run-7");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(std::filesystem::path(*b).filename(), "run-7");
    auto c = confineWorkdir(root, root + "/inside", "x");
    ASSERT_TRUE(c.ok()) << c.error();
}

TEST(Workdir, RejectsEscapes) {
    testing::TempDir dir;
    const std::string root = dir.path() + "/root";
    std::filesystem::create_directories(root);
    std::filesystem::create_directories(dir.path() + "/outside");
    ::symlink((dir.path() + "/outside").c_str(), (root + "/link").c_str());
    for (const std::string& bad :
         std::vector<std::string>{"../x", "a/../../x", "/etc", "/tmp", dir.path() + "/outside",
                                  "link", "link/deeper", ".", ""}) {
        auto r = confineWorkdir(root, bad, bad.empty() ? "." : "x");
        EXPECT_FALSE(r.ok()) << "accepted '" << bad << "' as " << (r.ok() ? *r : "");
    }
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/outside/deeper"))
        << "nothing may be created through a symlink that leaves the root";
    auto msg = confineWorkdir(root, "link/deeper", "x");
    EXPECT_NE(msg.error().find("symlink"), std::string::npos) << msg.error();
}

TEST(Workdir, RunIdValidation) {
    EXPECT_TRUE(validateRunId("run-1.a_B").ok());
    EXPECT_FALSE(validateRunId("").ok());
    EXPECT_FALSE(validateRunId("../x").ok());
    EXPECT_FALSE(validateRunId("a/b").ok());
    EXPECT_FALSE(validateRunId(".hidden").ok());
    EXPECT_FALSE(validateRunId(std::string(129, 'a')).ok());
}

}  // namespace
}  // namespace runplane::agent
