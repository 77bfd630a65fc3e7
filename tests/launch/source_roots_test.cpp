// `source` stays inside the script's folder tree and the allowed roots (issue #20): a file
// outside them, also through a symlink, is refused unread and its text never reaches a note.

#include <gtest/gtest.h>

#include <filesystem>

#include "backend/launch/bash_eval.h"
#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

namespace fs = std::filesystem;
using detail::readScript;
using detail::ScriptReading;

constexpr const char* kSecret = "hunter2-top-secret";

// root/outside.sh holds a secret; root/scripts/run.sh is the script; root/scripts/link.sh is a
// symlink to ../outside.sh.
struct Layout {
    test::TempDir dir;
    std::string script;
    Layout(const std::string& text) {
        test::writeFile(dir.file("outside.sh"), std::string("SECRET=") + kSecret + "\n" + kSecret +
                                                    "-as-a-command --now\n");
        test::writeFile(dir.file("scripts/models/m1.sh"), "MODEL_ARGS=(--num-layers 4)\n");
        fs::create_symlink("../outside.sh", dir.file("scripts/link.sh"));
        script = dir.file("scripts/run.sh");
        test::writeFile(script, text);
    }
};

std::string notesText(const std::vector<LaunchNote>& notes) {
    std::string out;
    for (const auto& n : notes) {
        out += n.format() + "\n";
    }
    return out;
}

TEST(SourceRoots, OutsideTheScriptFolderIsRefusedUnread) {
    Layout l(
        "source ../outside.sh\n"
        "source \"$(dirname \"$0\")/models/m1.sh\"\n"
        "python3 train.py --x \"$SECRET\" \"${MODEL_ARGS[@]}\"\n");
    ScriptReading r = readScript(test::readFile(l.script), l.script, {});
    const std::string notes = notesText(r.notes);
    EXPECT_EQ(notes.find(kSecret), std::string::npos) << notes;
    EXPECT_NE(notes.find(l.script + ":1: warning: source ../outside.sh: refused: "),
              std::string::npos)
        << notes;
    EXPECT_NE(notes.find("outside.sh is outside the folders a script may source"),
              std::string::npos)
        << notes;
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_EQ(r.launch->argv[3].text, "${SECRET}");     // SECRET was never read: a parameter
    EXPECT_EQ(r.launch->argv[4].text, "--num-layers");  // inside the script's folder: read
    EXPECT_EQ(r.scalars.count("SECRET"), 0u);
}

TEST(SourceRoots, AllowedWithAnExtraRoot) {
    Layout l("source ../outside.sh\npython3 train.py --x \"$SECRET\"\n");
    ScriptReading r = readScript(test::readFile(l.script), l.script, {}, {l.dir.path()});
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_EQ(r.launch->argv[3].text, kSecret);
    EXPECT_EQ(notesText(r.notes).find("refused"), std::string::npos) << notesText(r.notes);
}

TEST(SourceRoots, SymlinkEscapingTheRootIsRefused) {
    Layout l("source ./link.sh\npython3 train.py --x \"$SECRET\"\n");
    ScriptReading r = readScript(test::readFile(l.script), l.script, {});
    const std::string notes = notesText(r.notes);
    EXPECT_EQ(notes.find(kSecret), std::string::npos) << notes;
    EXPECT_NE(notes.find(":1: warning: source ./link.sh: refused: "), std::string::npos) << notes;
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_EQ(r.launch->argv[3].text, "${SECRET}");
    // a symlinked folder that leads out is refused the same way
    fs::create_directory_symlink(l.dir.path(), l.dir.file("scripts/up"));
    ScriptReading viaDir = readScript("source ./up/outside.sh\npython3 train.py\n", l.script, {});
    EXPECT_NE(notesText(viaDir.notes).find("refused"), std::string::npos);
    EXPECT_EQ(notesText(viaDir.notes).find(kSecret), std::string::npos);
}

TEST(SourceRoots, SystemFilesAreNeverEchoed) {
    Layout l("source /etc/passwd\n. /etc/shadow\npython3 train.py\n");
    ScriptReading r = readScript(test::readFile(l.script), l.script, {});
    const std::string notes = notesText(r.notes);
    EXPECT_EQ(notes.find("root:"), std::string::npos) << notes;
    EXPECT_NE(notes.find(":1: warning: source /etc/passwd: refused"), std::string::npos) << notes;
    if (fs::exists("/etc/shadow")) {
        EXPECT_NE(notes.find(":2: warning: source /etc/shadow: refused"), std::string::npos)
            << notes;
    }
}

TEST(SourceRoots, ImportOptionsCarryTheRoots) {
    Layout l("source ../outside.sh\npython3 train.py --x \"$SECRET\" --rollout-batch-size 8\n");
    auto refused = importScript(l.script);
    ASSERT_TRUE(refused.ok()) << refused.error();
    EXPECT_EQ(notesText(refused->notes).find(kSecret), std::string::npos);
    ImportOptions options;
    options.sourceRoots = {l.dir.path()};
    auto allowed = importScript(l.script, options);
    ASSERT_TRUE(allowed.ok()) << allowed.error();
    EXPECT_EQ(notesText(allowed->notes).find("refused"), std::string::npos);
}

}  // namespace
}  // namespace runplane::plan::launch
