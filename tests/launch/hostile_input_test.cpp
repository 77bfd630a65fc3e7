// The importer reads untrusted scripts (issue #23): small hostile inputs end in a finding with
// file:line:column in bounded time, never a crash; arithmetic is overflow-checked; CRLF endings
// read as LF and messages carry no raw control characters.

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>

#include "backend/launch/bash_eval.h"
#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

using detail::readScript;
using detail::ScriptReading;

std::string repeat(const std::string& s, int n) {
    std::string out;
    out.reserve(s.size() * static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        out += s;
    }
    return out;
}

// Reads the script and fails the test when that takes 2 s or more.
ScriptReading readTimed(const std::string& script) {
    const auto start = std::chrono::steady_clock::now();
    ScriptReading r = readScript(script, "/tmp/hostile.sh", {});
    const auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 2000)
        << script.size() << " bytes";
    return r;
}

const LaunchNote* limitNote(const ScriptReading& r) {
    for (const auto& n : r.notes) {
        if (n.level == NoteLevel::Error && n.message.rfind("limit: ", 0) == 0) {
            return &n;
        }
    }
    return nullptr;
}

std::string allNotes(const ScriptReading& r) {
    std::string out;
    for (const auto& n : r.notes) {
        out += n.format() + "\n";
    }
    return out;
}

// Every limit note names the file, the line and a column.
void expectLimitAt(const ScriptReading& r, int line, const std::string& words) {
    const LaunchNote* n = limitNote(r);
    ASSERT_NE(n, nullptr) << allNotes(r);
    EXPECT_EQ(n->file, "/tmp/hostile.sh");
    EXPECT_EQ(n->line, line) << n->format();
    EXPECT_GT(n->column, 0) << n->format();
    EXPECT_NE(n->message.find(words), std::string::npos) << n->format();
    EXPECT_NE(n->format().find("/tmp/hostile.sh:" + std::to_string(line) + ":" +
                               std::to_string(n->column) + ": error: limit: "),
              std::string::npos)
        << n->format();
}

// Issue #20 (found by tests/fuzz/import_fuzz.cpp under UBSan): a launch command without a single
// flag made the recompute check bind a reference to flags[0] of an empty list. It imports with
// the usual "missing" findings and recompute off.
TEST(HostileInput, LaunchCommandWithoutFlagsImports) {
    auto r = importScriptText("#!/bin/bash\npython3 train.py\n", "/nonexistent/run.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_TRUE(r->flags.empty());
    EXPECT_FALSE(r->recipe.trainer.recompute);
}

// Issue #20 (fuzz_import under UBSan): the node count the importer derives from the flags summed
// the trainer's and the rollout's GPUs in int, which overflowed for counts near 2^31 (the limits
// are checked later, by validate). 1 node x 10^9 GPUs + 1.5 x 10^9 rollout GPUs at 10^9 per
// node is 3 nodes; in int the sum wrapped negative and the count came out as 1.
TEST(HostileInput, HugeGpuCountsGiveTheirNodeCountWithoutOverflow) {
    auto r = importScriptText(
        "#!/bin/bash\npython3 train.py --actor-num-nodes 1 "
        "--actor-num-gpus-per-node 1000000000 "
        "--rollout-num-gpus 1500000000 --rollout-num-gpus-per-engine 1\n",
        "/nonexistent/run.sh");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(r->recipe.cluster.nodes, 3);
}

TEST(HostileInput, DeeplyNestedDefaultsEndInAFinding) {
    const std::string script = "\nLR=" + repeat("${X:-", 5000) + "1" + repeat("}", 5000) +
                               "\npython3 train.py --lr \"$LR\" --rollout-batch-size 8\n";
    ScriptReading r = readTimed(script);
    expectLimitAt(r, 2, "nested more than");
    EXPECT_EQ(limitNote(r)->column, 4);  // the value after LR=
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_FALSE(r.launch->argv[3].known);
    EXPECT_TRUE(r.launch->argv[5].known);  // the rest of the script is read
}

TEST(HostileInput, DeeplyNestedQuotesInsideExpansionsEndInAFinding) {
    const std::string script =
        "X=" + repeat("\"${X:-", 5000) + "1" + repeat("}\"", 5000) + "\npython3 train.py\n";
    ScriptReading r = readTimed(script);
    expectLimitAt(r, 1, "nested more than");
}

TEST(HostileInput, DeeplyNestedArithmeticParenthesesEndInAFinding) {
    const std::string script = "X=$((" + repeat("(", 10000) + "1" + repeat(")", 10000) +
                               "))\npython3 train.py --n \"$X\"\n";
    ScriptReading r = readTimed(script);
    expectLimitAt(r, 1, "nests more than");
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_FALSE(r.launch->argv[3].known);
    // a long chain of unary operators too
    ScriptReading unary = readTimed("X=$((" + repeat("- ", 10000) + "1))\npython3 train.py\n");
    expectLimitAt(unary, 1, "nests more than");
    // ... and moderate nesting is still computed
    ScriptReading fine = readTimed("X=$((" + repeat("(", 20) + "6*7" + repeat(")", 20) +
                                   "))\npython3 train.py \"$X\"\n");
    EXPECT_EQ(limitNote(fine), nullptr) << allNotes(fine);
    ASSERT_TRUE(fine.launch.has_value());
    EXPECT_EQ(fine.launch->argv[2].text, "42");
}

TEST(HostileInput, DeeplyNestedCommandSubstitutionsEndInAFinding) {
    const std::string script =
        "X=" + repeat("$(seq ", 5000) + "1" + repeat(")", 5000) + "\npython3 train.py\n";
    ScriptReading r = readTimed(script);
    expectLimitAt(r, 1, "nested more than");
}

// A function that calls itself several times (read in place, docs/launch-scripts.md "Functions,
// here-documents and script arguments") would take 8^depth steps: calls are bounded in depth and
// in number, a limit finding at the call.
TEST(HostileInput, SelfCallingFunctionEndsInAFinding) {
    const std::string script = "f() {\n  f; f; f; f; f; f; f; f\n  python3 train.py --lr 1\n}\nf\n";
    ScriptReading r = readTimed(script);
    expectLimitAt(r, 2, "function calls nested more than");
    // nested here-documents fed to bash: each body read once, no blow-up
    std::string nested = "python3 train.py --lr 1\n";
    for (int i = 0; i < 200; ++i) {
        const std::string d = "E" + std::to_string(i);
        nested = "bash -s <<'" + d + "'\n" + nested + d + "\n";
    }
    ScriptReading h = readTimed(nested);
    EXPECT_NE(limitNote(h), nullptr) << allNotes(h).substr(0, 400);
}

TEST(HostileInput, DeeplyNestedBlocksEndInAFinding) {
    const std::vector<std::string> scripts = {
        repeat("(", 10000) + "X=1" + repeat(")", 10000) + "\n",
        repeat("if true; then\n", 5000) + "X=1\n" + repeat("fi\n", 5000),
        repeat("{ ", 5000) + "X=1; " + repeat("}; ", 5000) + "\n",
        repeat("while true; do\n", 5000) + "X=1\n" + repeat("done\n", 5000),
        repeat("for i in 1; do ", 5000) + "X=1; " + repeat("done; ", 5000) + "\n",
    };
    for (const auto& s : scripts) {
        ScriptReading r = readTimed(s + "python3 train.py\n");
        ASSERT_NE(limitNote(r), nullptr) << s.substr(0, 40) << "\n" << allNotes(r);
        EXPECT_GT(limitNote(r)->column, 0);
        EXPECT_NE(limitNote(r)->message.find("nested more than 64 levels"), std::string::npos)
            << limitNote(r)->message;
    }
}

TEST(HostileInput, DeeplyNestedTestExpressionIsNotUnderstoodWithoutCrashing) {
    const std::string script = "if [ " + repeat("! ", 20000) + "x ]; then X=1; fi\n" + "if [ " +
                               repeat("( ", 20000) + "x" + repeat(" )", 20000) +
                               " ]; then Y=1; fi\npython3 train.py\n";
    ScriptReading r = readTimed(script);
    EXPECT_NE(allNotes(r).find("nested more than 64 levels"), std::string::npos) << allNotes(r);
}

TEST(HostileInput, SeqFromInt64MinIsALimitNotAnAllocation) {
    ScriptReading r = readTimed("X=$(seq -9223372036854775808 256)\npython3 train.py \"$X\"\n");
    expectLimitAt(r, 1, "more than 100000 numbers");
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_FALSE(r.launch->argv[2].known);
    // the whole range, both ways round, and steps that would overflow past the end
    ScriptReading wide = readTimed(
        "A=$(seq 9223372036854775807 -9223372036854775807 -9223372036854775808)\n"
        "B=$(seq -9223372036854775808 9223372036854775807)\n"
        "C=$(seq 9223372036854775805 9223372036854775807)\n"
        "D=$(seq -9223372036854775806 -1 -9223372036854775808)\n"
        "E=$(seq 5 1)\n"
        "python3 train.py \"$A\" \"$C\" \"$D\" \"[$E]\"\n");
    ASSERT_TRUE(wide.launch.has_value());
    EXPECT_EQ(wide.launch->argv[2].text, "9223372036854775807\n0\n-9223372036854775807");
    EXPECT_EQ(wide.launch->argv[3].text,
              "9223372036854775805\n9223372036854775806\n9223372036854775807");
    EXPECT_EQ(wide.launch->argv[4].text,
              "-9223372036854775806\n-9223372036854775807\n-9223372036854775808");
    EXPECT_EQ(wide.launch->argv[5].text, "[]");
    const LaunchNote* n = limitNote(wide);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->line, 2);  // only B is too long
}

TEST(HostileInput, DoublingAValueStopsAtTheSizeLimit) {
    const std::string script = "A=x\n" + repeat("A=\"$A$A\"\n", 40) +
                               "python3 train.py --x \"$A\" --rollout-batch-size 8\n";
    ScriptReading r = readTimed(script);
    // 2^20 bytes is the limit: line 22 would make 2^21
    expectLimitAt(r, 22, "more than 1 MiB");
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_FALSE(r.launch->argv[3].known);
    EXPECT_LT(r.launch->argv[3].text.size(), 100u);
    EXPECT_EQ(r.launch->argv[5].text, "8");
    // += and arrays doubling their element count are bounded as well
    ScriptReading append = readTimed("A=x\n" + repeat("A+=\"$A\"\n", 40) + "python3 train.py\n");
    EXPECT_NE(limitNote(append), nullptr) << allNotes(append);
    ScriptReading arrays = readTimed("A=(x)\n" + repeat("A=(\"${A[@]}\" \"${A[@]}\")\n", 40) +
                                     "python3 train.py \"${A[*]}\"\n");
    EXPECT_NE(limitNote(arrays), nullptr) << allNotes(arrays);
}

// X=$((EXPR)); python3 train.py "$X": the value, or "" and a finding on line 1.
std::string arith(const std::string& expr, bool* finding) {
    ScriptReading r = readScript("X=$((" + expr + "))\npython3 train.py \"$X\"\n", "/tmp/a.sh", {});
    *finding = false;
    for (const auto& n : r.notes) {
        *finding = *finding || (n.level != NoteLevel::Info && n.line == 1);
    }
    if (!r.launch || r.launch->argv.size() < 3) {
        return "<no launch>";
    }
    return r.launch->argv[2].known ? r.launch->argv[2].text : "";
}

TEST(HostileInput, ArithmeticIsOverflowChecked) {
    const std::vector<std::pair<std::string, std::string>> values = {
        {"-9223372036854775807 - 1", "-9223372036854775808"},
        {"9223372036854775806 + 1", "9223372036854775807"},
        {"(-9223372036854775807 - 1) % -1", "0"},
        {"-7 / 2", "-3"},
        {"-7 % 2", "-1"},
        {"1 << 62", "4611686018427387904"},
        {"-8 >> 1", "-4"},
        {"2 << 1 < 5", "1"},
        {"2 ** 62", "4611686018427387904"},
        {"(-2) ** 63", "-9223372036854775808"},
        {"1 ** 9223372036854775807", "1"},
        {"(-1) ** 9223372036854775807", "-1"},
        {"0 ** 0", "1"},
        {"6 & 3", "2"},
        {"6 | 3", "7"},
        {"6 ^ 3", "5"},
        {"~0", "-1"},
        {"1 && 0 || 1", "1"},
        {"3 > 2 ? 10 : 20", "10"},
    };
    for (const auto& [expr, want] : values) {
        bool finding = false;
        EXPECT_EQ(arith(expr, &finding), want) << expr;
        EXPECT_FALSE(finding) << expr;
    }
    const std::vector<std::string> overflows = {
        "9223372036854775807 + 1",
        "-9223372036854775807 - 2",
        "(-9223372036854775807 - 1) / -1",
        "-(-9223372036854775807 - 1)",
        "3037000500 * 3037000500",
        "2 ** 63",
        "3 ** 9223372036854775807",
        "2 ** -1",
        "1 << 63",
        "1 << 64",
        "1 << -1",
        "1 >> 64",
        "5 / 0",
        "5 % 0",
        "9223372036854775808",
    };
    for (const auto& expr : overflows) {
        bool finding = false;
        EXPECT_EQ(arith(expr, &finding), "") << expr;
        EXPECT_TRUE(finding) << expr;
    }
}

TEST(HostileInput, CrlfScriptsReadAsLfAndMessagesEscapeControlCharacters) {
    const std::string script =
        "LR=1e-6\r\nARGS=(\r\n  --lr \"$LR\"\r\n)\r\nfrob\x01 it\r\necho hi\rthere\r\n"
        "python3 train.py \"${ARGS[@]}\"\r\n";
    ScriptReading r = readTimed(script);
    ASSERT_TRUE(r.launch.has_value());
    ASSERT_EQ(r.launch->argv.size(), 4u);
    EXPECT_EQ(r.launch->argv[3].text, "1e-6");
    EXPECT_EQ(r.scalars.at("LR"), "1e-6");
    int crlfNotes = 0;
    for (const auto& n : r.notes) {
        crlfNotes += n.message.find("CRLF") != std::string::npos ? 1 : 0;
        EXPECT_EQ(n.message.find_first_of(std::string("\r\x01\n", 3)), std::string::npos)
            << n.message;
        for (const char c : n.format()) {
            EXPECT_GE(static_cast<unsigned char>(c), 0x20) << n.format();
        }
    }
    EXPECT_EQ(crlfNotes, 1) << allNotes(r);
    // the unknown command is reported with its control character escaped
    EXPECT_NE(allNotes(r).find("frob\\x01"), std::string::npos) << allNotes(r);
    // a lone CR stays part of the word and is escaped when quoted
    EXPECT_NE(allNotes(r).find("hi\\rthere"), std::string::npos) << allNotes(r);
}

TEST(HostileInput, ImportOfAHostileScriptIsAFindingNotACrash) {
    test::TempDir dir;
    const std::string path = dir.file("run.sh");
    test::writeFile(path, "A=x\n" + repeat("A=\"$A$A\"\n", 40) +
                              "python3 train.py --rollout-batch-size 8 --x \"$A\"\n");
    auto r = importScript(path);
    ASSERT_TRUE(r.ok()) << r.error();
    bool limit = false;
    for (const auto& n : r->notes) {
        limit = limit || (n.level == NoteLevel::Error && n.message.rfind("limit: ", 0) == 0 &&
                          n.line == 22 && n.column == 3);
    }
    EXPECT_TRUE(limit);
}

// fuzz_import: each field of an unquoted expansion copied the whole value first, so splitting
// $(seq 1 99999) (600 KB, 100k fields) copied 60 GB and took minutes.
TEST(HostileInput, UnquotedSeqSplitsInLinearTime) {
    const ScriptReading r = readTimed("X=$(seq 1 99999)\necho $X\n");
    (void)r;
}

// fuzz_import (a 60 s timeout beside other work; 1.8 s without ASan, 10.6 s of CPU with it):
// `read -a NAME <<< WORD` copied the whole expanded WORD into each element before cutting the
// element's text out of it, quadratic in the word: here 262,144 elements of a 512 KB value
// ("1 1 1 ...", doubled 18 times) would copy 137 GB.
TEST(HostileInput, ReadIntoAnArraySplitsInLinearTime) {
    std::string script = "X='1 '\n" + repeat("X=\"$X$X\"\n", 18) + "read -r -a A <<< \"$X\"\n";
    const ScriptReading r = readTimed(script);
    EXPECT_EQ(limitNote(r), nullptr) << allNotes(r);
}

// fuzz_import (out of memory at 2 GiB): every field of an unquoted expansion kept its own copy of
// the word as written, and the expansion budget did not count those copies, so 100k fields of a
// 2 KB word took 200 MB and more (gigabytes for longer words). The copies are charged now: the
// word ends in the budget's finding, quickly.
TEST(HostileInput, CopiesOfALongWordPerFieldCountAgainstTheBudget) {
    const std::string script =
        "X=$(seq 1 99999)\npython3 train.py --a=$X\"" + std::string(2000, 'w') + "\"\n";
    const ScriptReading r = readTimed(script);
    expectLimitAt(r, 2, "exceed the reader's budget");
}

// fuzz_import (a 15 s timeout on the 16-core host, 1.6 GB): a word of many unquoted copies of a
// 1 MiB blank-separated value ($X$X$X...) built all its fields (each with its own copies of the
// file name and the word as written) before the budget was charged: 24 copies took 1.4 GB and
// 3.8 s. Building stops once the word's cost passes what is left of the budget. Read in a child
// process, whose peak RSS is measured (the parent's own high-water mark would hide it).
TEST(HostileInput, AWordOfManySplitCopiesStopsAtTheBudgetWhileBuilding) {
    std::string script =
        "X=\"a b\"\n" + repeat("X=\"$X $X\"\n", 17) + "python3 train.py " + repeat("$X", 24) + "\n";
    struct rusage before {};
    getrusage(RUSAGE_SELF, &before);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const ScriptReading r = readScript(script, "/tmp/hostile.sh", {});
        const LaunchNote* n = limitNote(r);
        _exit(n != nullptr && n->line == 19 &&
                      n->message.find("exceed the reader's budget") != std::string::npos
                  ? 0
                  : 1);
    }
    int status = 0;
    struct rusage child {};
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(wait4(pid, &status, 0, &child), pid);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "no budget finding at line 19";
    // ru_maxrss is in KiB; the child starts with the parent's pages. The budget is 32 MiB of work.
    EXPECT_LT(child.ru_maxrss - before.ru_maxrss, 256 * 1024) << "peak RSS grew by KiB";
    EXPECT_LT(ms, 2000);
}

// fuzz_import reads with a smaller expansion budget (4 MiB, docs/fuzzing.md): the same finding,
// sooner. 20k fields of $(seq) cost 5 MB of work: within the default 32 MiB, over 4 MiB.
TEST(HostileInput, ExpansionBudgetIsAParameterWithTheDocumentedDefault) {
    const std::string script = "X=$(seq 1 20000)\npython3 train.py $X\n";
    const ScriptReading byDefault = readScript(script, "/tmp/hostile.sh", {});
    EXPECT_EQ(limitNote(byDefault), nullptr) << allNotes(byDefault);
    ASSERT_TRUE(byDefault.launch.has_value()) << allNotes(byDefault);
    const ScriptReading smaller = readScript(script, "/tmp/hostile.sh", {}, {}, 4u << 20);
    expectLimitAt(smaller, 2, "exceed the reader's budget (4 MiB of text");
    const ScriptReading kib = readScript(script, "/tmp/hostile.sh", {}, {}, 1536u << 10);
    expectLimitAt(kib, 2, "exceed the reader's budget (1536 KiB of text");
}

// fuzz_import (malloc of 2 GiB): a lone ';', '&' or '|' inside [[ ... ]] starts no word, and the
// reader added an empty word at the same place until memory ran out. It is a finding now, and the
// rest of the script is read.
TEST(HostileInput, LoneSeparatorInsideDoubleBracketsEndsInAFinding) {
    for (const std::string sep : {";", "&", "|"}) {
        const ScriptReading r = readTimed("if [[ -z \"$A\" " + sep +
                                          " ]]; then\n  echo\nfi\npython3 train.py --lr 1e-6\n");
        EXPECT_NE(allNotes(r).find("unexpected '" + sep + "' inside [[ ... ]]"), std::string::npos)
            << allNotes(r);
        ASSERT_TRUE(r.launch.has_value()) << allNotes(r);
    }
}

// Every file of the fuzz seed corpus imports without a crash, in bounded time.
TEST(HostileInput, FuzzCorpusImportsInBoundedTime) {
    const std::string corpus = test::sourceDir() + "/tests/fuzz/corpus/import";
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
        ++files;
        const auto start = std::chrono::steady_clock::now();
        auto r = importScript(entry.path().string());
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        EXPECT_LT(ms, 2000) << entry.path();
        if (r.ok()) {
            for (const auto& n : r->notes) {
                for (const char c : n.format()) {
                    EXPECT_GE(static_cast<unsigned char>(c), 0x20) << entry.path();
                }
            }
        }
    }
    EXPECT_GE(files, 8);
}

}  // namespace
}  // namespace runplane::plan::launch
