// Issue 45: a here-document inside a command substitution (`X=$(cat << 'EOF' ... EOF)`, how
// vime's Ascend scripts write the Ray runtime environment). Closed as bash closes it, it imports
// (a `)` or an apostrophe in its body does not end the substitution); closed by an indented
// delimiter it never ends, bash reads the rest of the file into it and fails, and the import is
// refused naming the line bash names ("here-document at line N delimited by end-of-file").

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

Result<ImportResult> importPath(const std::string& path) {
    ImportOptions options;
    options.catalog = &test::catalog();
    return importScript(path, options);
}

Result<ImportResult> importText(const test::TempDir& dir, const std::string& file,
                                const std::string& text) {
    test::writeFile(dir.file(file), text);
    return importPath(dir.file(file));
}

std::string notesText(const ImportResult& r) {
    std::string out;
    for (const auto& n : r.notes) {
        out += std::to_string(n.line) + ": " + n.message + "\n";
    }
    return out;
}

// The line bash itself names for an unclosed here-document (`bash -n`).
int bashHereDocLine(const std::string& script) {
    const auto run = test::runProcess({"bash", "-n", script}, {}, test::dataDir());
    std::smatch m;
    static const std::regex re("here-document at line ([0-9]+) delimited by end-of-file");
    if (!std::regex_search(run.output, m, re)) {
        return -1;
    }
    return std::stoi(m[1].str());
}

TEST(HereDocInSubstitution, OneThatNeverEndsIsRefusedWithTheLineBashNames) {
    const std::string script = test::dataDir() + "/run-runtime-env-unclosed-heredoc.sh";
    const int bashLine = bashHereDocLine(script);
    ASSERT_EQ(bashLine, 52) << "bash -n no longer warns as expected";
    auto r = importPath(script);
    ASSERT_FALSE(r.ok()) << "imported a script bash cannot run";
    EXPECT_NE(r.error().find(":" + std::to_string(bashLine) + ": "), std::string::npos)
        << r.error();
    EXPECT_NE(r.error().find("never ends"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("`EOF`"), std::string::npos) << r.error();
    EXPECT_NE(r.error().find("$("), std::string::npos) << r.error();  // says what holds it

    // the same text with the delimiter moved to column 0 imports, with the launch read
    test::TempDir dir;
    std::string fixed = test::readFile(script);
    const auto at = fixed.find("\n  EOF\n");
    ASSERT_NE(at, std::string::npos);
    fixed.replace(at, 7, "\nEOF\n");
    test::writeFile(dir.file("run.sh"), fixed);
    test::writeFile(dir.file("models/qwen3-4B.sh"),
                    test::readFile(test::dataDir() + "/models/qwen3-4B.sh"));
    ASSERT_EQ(bashHereDocLine(dir.file("run.sh")), -1);  // bash is content too
    ImportOptions options;
    options.catalog = &test::catalog();
    options.env = {{"CURRENT_NODE_IP", "127.0.0.1"}};  // the head's branch holds the launch
    auto fine = importScript(dir.file("run.sh"), options);
    ASSERT_TRUE(fine.ok()) << fine.error();
    EXPECT_EQ(notesText(*fine).find("never ends"), std::string::npos) << notesText(*fine);
    EXPECT_EQ(fine->recipe.batch.rolloutBatchSize, 8);
}

TEST(HereDocInSubstitution, ClosedOnesImportWithTheLaunchAfterThem) {
    // the argv round trip of this fixture is ArgvFixtures.EveryFixture...; here: nothing refused
    auto r = importPath(test::dataDir() + "/fixtures/runtime-env-heredoc.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_FALSE(hasErrors(r->notes)) << notesText(*r);
    EXPECT_EQ(notesText(*r).find("never ends"), std::string::npos) << notesText(*r);
    EXPECT_EQ(r->recipe.batch.rolloutBatchSize, 8);
    EXPECT_EQ(r->recipe.rollout.gpusPerEngine, 2);

    test::TempDir dir;
    const std::string launch =
        "ray job submit -- python3 train.py --rollout-batch-size 8 --hf-checkpoint /m/Qwen3-4B\n";
    // each closes as bash closes it (bash -n is silent on all of them)
    for (const char* body : {
             "X=$(cat <<EOF\nit's a ) here\nEOF\n)\n",     // apostrophe and ')' in the body
             "X=\"$(cat <<'EOF'\n\"quoted\"\nEOF\n)\"\n",  // inside double quotes
             "X=$(cat <<-EOF\n\t\tbody\n\tEOF\n)\n",       // <<- strips the tabs
             "X=$(cat <<A; cat <<B\na\nA\nb\nB\n)\n",      // two on one line, in order
             "X=$(echo $(( 1 << 20 )))\n",                 // a shift, not a here-document
             "X=$(cat <<\"E O\"\nbody\nE O\n)\n",          // a quoted delimiter with a blank
         }) {
        const std::string text = std::string("set -ex\n") + body + launch;
        test::writeFile(dir.file("ok.sh"), text);
        const auto bashRun = test::runProcess({"bash", "-n", dir.file("ok.sh")}, {}, dir.path());
        ASSERT_EQ(bashRun.exitCode, 0) << body << bashRun.output;
        ASSERT_EQ(bashRun.output.find("here-document"), std::string::npos) << bashRun.output;
        auto fine = importText(dir, "ok.sh", text);
        ASSERT_TRUE(fine.ok()) << body << fine.error();
        EXPECT_EQ(notesText(*fine).find("never ends"), std::string::npos)
            << body << notesText(*fine);
        EXPECT_EQ(notesText(*fine).find("unterminated"), std::string::npos)
            << body << notesText(*fine);
        EXPECT_EQ(fine->recipe.batch.rolloutBatchSize, 8) << body;
    }
    // an unclosed one at the end of a `$(` on line 3, the launch before it
    auto broken = importText(
        dir, "bad.sh",
        std::string("set -ex\n") + launch + "X=$(cat <<-EOF\n  spaces do not strip\n  EOF\n)\n");
    ASSERT_TRUE(broken.ok()) << broken.error();  // the launch ran before bash failed
    bool named = false;
    for (const auto& n : broken->notes) {
        named = named || (n.line == 3 && n.message.find("never ends") != std::string::npos);
    }
    EXPECT_TRUE(named) << notesText(*broken);
}

}  // namespace
}  // namespace runplane::plan::launch
