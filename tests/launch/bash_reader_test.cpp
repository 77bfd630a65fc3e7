// The bash-subset reader: arrays, +=, ${...} forms, $((...)), $(seq), export, source, if/else
// decided from --env, and "not understood" reports with line numbers (issue 4).

#include <gtest/gtest.h>

#include <algorithm>

#include "backend/launch/bash_eval.h"
#include "backend/launch/bash_textfilter.h"
#include "backend/launch/launch.h"
#include "tests/launch/launch_test_support.h"

namespace runplane::plan::launch {
namespace {

using detail::readScript;
using detail::ScriptReading;

std::vector<std::string> argvOf(const ScriptReading& r) {
    std::vector<std::string> out;
    if (r.launch) {
        for (const auto& f : r.launch->argv) {
            out.push_back(f.text);
        }
    }
    return out;
}

std::vector<int> warningLines(const std::vector<LaunchNote>& notes) {
    std::vector<int> lines;
    for (const auto& n : notes) {
        if (n.level == NoteLevel::Warning) {
            lines.push_back(n.line);
        }
    }
    return lines;
}

TEST(BashReader, ArraysWithCommentsContinuationsAndAppend) {
    const char* script =
        "A=(\n"                     // 1
        "   --x 1   # trailing\n"   // 2
        "   # --y 2\n"              // 3
        "   --z \\\n"               // 4
        "      3\n"                 // 5
        ")\n"                       // 6
        "A+=( --w \"a b\" )\n"      // 7
        "B=(\"${A[@]}\" --last)\n"  // 8
        "python3 train.py \"${B[@]}\"\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "--x", "1", "--z", "3",
                                                   "--w", "a b", "--last"}));
    // each element keeps the line it was written on
    const auto& argv = r.launch->argv;
    EXPECT_EQ(argv[2].line, 2);
    EXPECT_EQ(argv[4].line, 4);
    EXPECT_EQ(argv[6].line, 7);
    EXPECT_EQ(argv[8].line, 8);
    EXPECT_TRUE(warningLines(r.notes).empty());
    EXPECT_EQ(r.annotations.at({"/tmp/x.sh", 2}), "trailing");
}

TEST(BashReader, UnquotedExpansionSplitsQuotedDoesNot) {
    const char* script =
        "A=(--w \"a b\")\n"
        "S=\"x  y\"\n"
        "python3 train.py ${A[@]} $S \"$S\"\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    EXPECT_EQ(argvOf(r),
              (std::vector<std::string>{"python3", "train.py", "--w", "a", "b", "x", "y", "x  y"}));
}

TEST(BashReader, ParameterForms) {
    const char* script =
        "E=\n"
        "A=${UNSET:-5}\n"
        "B=${E:-6}\n"
        "C=${E-7}\n"
        "D=${NEW:=8}\n"
        "F=${A:+alt}\n"
        "G=${MASTER_ADDR:-\"127.0.0.1\"}\n"
        "H=${OUTER:-${A}0}\n"
        "python3 train.py $A $B x${C}x $D $NEW $F $G $H ${#A}\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "5", "6", "xx", "8", "8",
                                                   "alt", "127.0.0.1", "50", "1"}));
    auto withEnv = readScript(script, "/tmp/x.sh", {{"UNSET", "u"}, {"MASTER_ADDR", "10.1.2.3"}});
    EXPECT_EQ(argvOf(withEnv)[2], "u");
    EXPECT_EQ(argvOf(withEnv)[8], "10.1.2.3");
}

TEST(BashReader, RequiredParameterIsReportedWithItsLine) {
    const char* script =
        "X=1\n"
        "export MASTER_ADDR=${MASTER_ADDR:?set the head IP}\n"
        "python3 train.py --addr $MASTER_ADDR\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    // unset: a required parameter, kept symbolic, never a reason to stop
    EXPECT_TRUE(warningLines(r.notes).empty());
    bool told = false;
    for (const auto& n : r.notes) {
        told = told || (n.line == 2 && n.message.find("set the head IP") != std::string::npos &&
                        n.message.find("--env MASTER_ADDR=") != std::string::npos);
    }
    EXPECT_TRUE(told);
    ASSERT_EQ(r.parameters.size(), 1u);
    EXPECT_EQ(r.parameters[0].name, "MASTER_ADDR");
    EXPECT_TRUE(r.parameters[0].required);
    EXPECT_EQ(r.parameters[0].uses, (std::vector<std::pair<std::string, int>>{{"/tmp/x.sh", 2}}));
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_TRUE(r.launch->argv[3].known);
    EXPECT_TRUE(r.launch->argv[3].symbolic);
    EXPECT_EQ(r.launch->argv[3].text, "${MASTER_ADDR}");
    auto given = readScript(script, "/tmp/x.sh", {{"MASTER_ADDR", "10.0.0.7"}});
    EXPECT_TRUE(warningLines(given.notes).empty());
    EXPECT_EQ(argvOf(given)[3], "10.0.0.7");
    // exported as a parameter, not as a pinned value
    ASSERT_EQ(given.exports.size(), 1u);
    EXPECT_FALSE(given.exports[0].pinned);
}

TEST(BashReader, ArithmeticAndSeq) {
    const char* script =
        "N=4\n"
        "G=$((N * (3 + 5) / 2 - 1))\n"
        "python3 train.py $G $((N ** 2 % 5)) $(seq 16 8 40) \"$(seq 3)\" $(seq 2 3)\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "15", "1", "16", "24",
                                                   "32", "40", "1\n2\n3", "2", "3"}));
    auto bad = readScript("X=$((1 / 0))\npython3 train.py\n", "/tmp/x.sh", {});
    EXPECT_EQ(warningLines(bad.notes), std::vector<int>{1});
}

// Issue 15: slime's geo3k examples name their model file with
// MODEL_ARGS_FILE=$(echo "$MODEL_NAME" | sed 's/-Instruct//g; ...'); `echo | sed | tr` on known
// words is run by the reader, bounded; an unknown input or a form outside the subset stays unknown.
TEST(BashReader, EchoSedTrPipelinesOnKnownWords) {
    const char* script =
        "MODEL_NAME=${MODEL:-\"Qwen3-VL-2B-Instruct\"}\n"
        "F=$(echo \"$MODEL_NAME\" | sed 's/-Instruct//g; s/-Thinking//g; s/Qwen3-VL-/qwen3-/g; "
        "s/-2B/-1.7B/g')\n"
        "L=$(echo \"$MODEL_NAME\" | tr '[:upper:]' '[:lower:]')\n"
        "D=$(echo a.b.c | sed -e 's|\\.|_|' -e 's/^a/&&/')\n"
        "python3 train.py $F $L $D\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "qwen3-1.7B",
                                                   "qwen3-vl-2b-instruct", "aa_b.c"}));
    EXPECT_TRUE(warningLines(r.notes).empty());
    // the environment's value goes through the same filters
    auto env = readScript(script, "/tmp/x.sh", {{"MODEL", "Qwen3-VL-8B-Thinking"}});
    EXPECT_EQ(argvOf(env)[2], "qwen3-8B");
    // a regular-expression form outside the subset: unknown, with its line
    auto star = readScript("python3 train.py $(echo ab | sed 's/a*/x/')\n", "/tmp/x.sh", {});
    EXPECT_EQ(warningLines(star.notes), std::vector<int>{1});
    ASSERT_TRUE(star.launch.has_value());
    EXPECT_FALSE(star.launch->argv.back().known);
    // ... and assigned, a value computed when the script runs: a pre-launch step, F = ${F}
    auto step = readScript("F=$(echo ab | sed 's/a*/x/')\npython3 train.py $F\n", "/tmp/x.sh", {});
    ASSERT_TRUE(step.launch.has_value());
    EXPECT_EQ(step.launch->argv.back().text, "${F}");
    ASSERT_EQ(step.preLaunch.size(), 1U);
    EXPECT_TRUE(warningLines(step.notes).empty());
    // an input that is not known (a command's output) is not evaluated either
    auto unknown =
        readScript("F=$(echo $(hostname) | tr a b)\npython3 train.py $F\n", "/tmp/x.sh", {});
    ASSERT_TRUE(unknown.launch.has_value());
    EXPECT_EQ(unknown.launch->argv.back().text, "${F}");
}

TEST(BashReader, ExportsPinnedParametersAndDerivedMarks) {
    const char* script =
        "export A=1\n"
        "B=2\n"
        "export B\n"
        "export C=\"${C:-3}\"\n"
        "export D=4  # runplane:derived\n"
        "export A=11\n"
        "python3 train.py\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    ASSERT_EQ(r.exports.size(), 4u);
    EXPECT_EQ(r.exports[0].name, "A");
    EXPECT_EQ(r.exports[0].value, "11");
    EXPECT_TRUE(r.exports[0].pinned);
    EXPECT_EQ(r.exports[1].value, "2");
    EXPECT_TRUE(r.exports[1].pinned);
    EXPECT_FALSE(r.exports[2].pinned);
    EXPECT_TRUE(r.exports[3].derived);
}

TEST(BashReader, SourceRelativeToTheScriptAndModelFiles) {
    test::TempDir dir;
    test::writeFile(dir.file("scripts/models/m1.sh"), "MODEL_ARGS=(\n  --num-layers 4\n)\n");
    test::writeFile(dir.file("scripts/common.sh"), "COMMON=(--seed 7)\n");
    const std::string script =
        "SCRIPT_DIR=\"$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")\" &>/dev/null && pwd)\"\n"
        "source \"${SCRIPT_DIR}/models/m1.sh\"\n"
        ". scripts/common.sh\n"
        "python3 train.py \"${MODEL_ARGS[@]}\" \"${COMMON[@]}\"\n";
    const std::string path = dir.file("scripts/run.sh");
    test::writeFile(path, script);
    auto r = readScript(script, path, {});
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "--num-layers", "4",
                                                   "--seed", "7"}));
    EXPECT_EQ(r.modelStems, std::vector<std::string>{"m1"});
    ASSERT_EQ(r.modelFiles.size(), 1u);
    EXPECT_EQ(r.launch->argv[2].file, *r.modelFiles.begin());
    EXPECT_EQ(r.launch->argv[2].line, 2);
    EXPECT_TRUE(warningLines(r.notes).empty());

    auto missing = readScript("source ./models/nope.sh\npython3 train.py\n", path, {});
    EXPECT_EQ(warningLines(missing.notes), std::vector<int>{1});
    EXPECT_EQ(missing.modelStems, std::vector<std::string>{"nope"});
}

// Issue 15 (miles scripts/amd/run-qwen3-4B-amd.sh): the script-directory idiom with `/..`
// names the folder above the script's, from which it sources models/NAME.sh.
TEST(BashReader, ScriptDirectoryIdiomWithParentFolders) {
    test::TempDir dir;
    test::writeFile(dir.file("scripts/models/m1.sh"), "MODEL_ARGS=(\n  --num-layers 4\n)\n");
    const std::string script =
        "SCRIPT_DIR=\"$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")/..\" &>/dev/null && pwd)\"\n"
        "ROOT=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")/../..\" && pwd)\"\n"
        "source \"${SCRIPT_DIR}/models/m1.sh\"\n"
        "python3 train.py \"${MODEL_ARGS[@]}\" --data \"${ROOT}/d\"\n";
    const std::string path = dir.file("scripts/amd/run.sh");
    test::writeFile(path, script);
    // scripts/models is outside the script's folder: a source root allows it
    auto r = readScript(script, path, {}, {dir.file("scripts")});
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "--num-layers", "4",
                                                   "--data", dir.file("d")}));
    EXPECT_EQ(r.modelStems, std::vector<std::string>{"m1"});
    EXPECT_TRUE(warningLines(r.notes).empty());

    // the idiom applied to a folder the reader knows (slime / miles examples: REPO_ROOT)
    const std::string known =
        "SCRIPT_DIR=\"$(cd -- \"$(dirname -- \"${BASH_SOURCE[0]}\")\" &>/dev/null && pwd)\"\n"
        "REPO_ROOT=\"$(cd -- \"${SCRIPT_DIR}/../..\" &>/dev/null && pwd)\"\n"
        "exec python3 train.py --save \"${REPO_ROOT}/out\"\n";
    auto k = readScript(known, path, {});
    EXPECT_EQ(argvOf(k),
              (std::vector<std::string>{"python3", "train.py", "--save", dir.file("out")}));
    EXPECT_TRUE(warningLines(k.notes).empty());
}

// Issue 15 (miles examples/experimental/swe-agent-v2/run.sh): a loop over the script's
// arguments runs zero times (the script is read as run without any); the defaults stand.
TEST(BashReader, ArgumentLoopRunsZeroTimes) {
    const char* script =
        "TP=2\n"
        "while [[ $# -gt 0 ]]; do\n"
        "  case \"$1\" in\n"
        "    --tp) TP=\"$2\"; shift 2 ;;\n"
        "    *) shift ;;\n"
        "  esac\n"
        "done\n"
        "python3 train.py --tp \"$TP\"\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "--tp", "2"}));
    EXPECT_TRUE(warningLines(r.notes).empty());
    // any other while loop is still not understood and taints what it sets
    auto other = readScript(
        "TP=2\nwhile read -r x; do TP=$x; done < f\npython3 train.py --tp $TP\n", "/tmp/x.sh", {});
    EXPECT_EQ(warningLines(other.notes), std::vector<int>{2});
    ASSERT_TRUE(other.launch.has_value());
    EXPECT_FALSE(other.launch->argv[3].known);
}

TEST(BashReader, IfElseDecidedFromTheEnvironment) {
    const char* script =
        "if [ \"${NODES:-1}\" -gt 1 ]; then\n"
        "  TP=8\n"
        "elif [[ \"$MODE\" == debug && -n \"$X\" ]]; then\n"
        "  TP=2\n"
        "else\n"
        "  TP=4\n"
        "fi\n"
        "if [ -z \"$EMPTY\" ] || [ 1 -eq 2 ]; then Y=yes; fi\n"
        "python3 train.py $TP $Y\n";
    EXPECT_EQ(argvOf(readScript(script, "/tmp/x.sh", {}))[2], "4");
    EXPECT_EQ(argvOf(readScript(script, "/tmp/x.sh", {{"NODES", "2"}}))[2], "8");
    EXPECT_EQ(argvOf(readScript(script, "/tmp/x.sh", {{"MODE", "debug"}, {"X", "1"}}))[2], "2");
    EXPECT_EQ(argvOf(readScript(script, "/tmp/x.sh", {}))[3], "yes");
}

TEST(BashReader, UndecidableConditionTaintsWhatItAssigns) {
    const char* script =
        "COUNT=$(nvidia-smi -L | wc -l)\n"  // 1
        "if [ \"$COUNT\" -gt 4 ]; then\n"   // 2
        "  TP=8\n"
        "else\n"
        "  TP=4\n"
        "fi\n"
        "python3 train.py --tp $TP --ok 1\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    // a run-time probe and the if block deciding on it: pre-launch steps, TP stays ${TP}
    EXPECT_TRUE(warningLines(r.notes).empty());
    ASSERT_EQ(r.preLaunch.size(), 2u);
    EXPECT_EQ(r.preLaunch[1].line, 2);
    EXPECT_EQ(r.preLaunch[1].endLine, 6);
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_TRUE(r.launch->argv[3].symbolic);
    EXPECT_EQ(r.launch->argv[3].text, "${TP}");
    EXPECT_TRUE(r.launch->argv[5].known);
    EXPECT_TRUE(r.parameters.empty());  // set by the script itself
    // any other value computed when the script runs is such a probe too (issue 15: `$(date ...)`,
    // `$(echo "$DEVICES" | tr ',' '\n' | wc -l)` in the public scripts)
    auto host = readScript(
        "X=$(hostname -f)\nif [ \"$X\" = a ]; then TP=8; fi\n"
        "python3 train.py --tp $TP\n",
        "/tmp/x.sh", {});
    EXPECT_TRUE(warningLines(host.notes).empty());
    ASSERT_EQ(host.preLaunch.size(), 2u);
    ASSERT_TRUE(host.launch.has_value());
    EXPECT_EQ(host.launch->argv[3].text, "${TP}");
    // a condition on something else not understood still taints what it assigns
    auto other = readScript(
        "for i in 1; do X=a; done\nif [ \"$X\" = a ]; then TP=8; fi\n"
        "python3 train.py --tp $TP\n",
        "/tmp/x.sh", {});
    EXPECT_EQ(warningLines(other.notes), (std::vector<int>{1, 2}));
    ASSERT_TRUE(other.launch.has_value());
    EXPECT_FALSE(other.launch->argv[3].known);
    EXPECT_NE(other.launch->argv[3].why.find("line 2"), std::string::npos);
}

TEST(BashReader, EverythingOutsideTheSubsetIsNotUnderstoodWithItsLine) {
    auto imported = importScript(test::dataDir() + "/run-unsupported.sh");
    ASSERT_TRUE(imported.ok()) << imported.error();
    // for loop (5-7), $(nvidia-smi) (15), while (17-19)
    // (line 23 and 25: the flags whose value is a splice of its own have no value)
    // ($(nvidia-smi) on line 15 is a run-time probe: a pre-launch step; the function defined on
    // lines 8-10 only echoes: its call on line 20 is read in place, an info note; since issue 45
    // the case on lines 11-14 is read: MODE is not set, so "${MODE:-normal}" takes the `*)` item)
    EXPECT_EQ(warningLines(imported->notes), (std::vector<int>{5, 17, 23, 25}));
    const Recipe& r = imported->recipe;
    EXPECT_EQ(r.batch.rolloutBatchSize, 32);  // $((4 * 8)) is understood
    // values that depend on what was not understood are kept verbatim, never guessed
    auto find = [&](const std::string& flag) -> const ExtraArg* {
        for (const auto& e : r.extraArgs) {
            if (e.flag == flag) {
                return &e;
            }
        }
        return nullptr;
    };
    // the probe's variable stays a reference, computed by the pre-launch step
    ASSERT_NE(find("--actor-num-gpus-per-node"), nullptr);
    EXPECT_EQ(find("--actor-num-gpus-per-node")->values, std::vector<std::string>{"${NUM_GPUS}"});
    // the unresolved ${LR:-1e-6} (LR may be set by the while loop) is a splice of its own,
    // right after --lr, as written
    ASSERT_NE(find("${LR:-1e-6}"), nullptr);
    EXPECT_EQ(find("${LR:-1e-6}") - find("--lr"), 1);
    // DEBUG_ARGS=() from the case's `*)` item: the splice is known and empty
    EXPECT_EQ(find("\"${DEBUG_ARGS[@]}\""), nullptr);
    ASSERT_NE(find("--lr"), nullptr);
    EXPECT_DOUBLE_EQ(r.algorithm.lr, 1e-6);  // the default, because --lr was not read
    ASSERT_NE(find("--my-custom-flag"), nullptr);
    EXPECT_NE(find("--my-custom-flag")->source.find("run-unsupported.sh:26"), std::string::npos);
}

TEST(BashReader, ExitStopsReadingAndPipesToTeeAreFine) {
    const char* script =
        "python3 train.py --a 1 2>&1 | tee /tmp/log.txt\n"
        "exit 0\n"
        "python3 train.py --b 2\n";
    auto r = readScript(script, "/tmp/x.sh", {});
    EXPECT_EQ(argvOf(r), (std::vector<std::string>{"python3", "train.py", "--a", "1"}));
    EXPECT_TRUE(warningLines(r.notes).empty());
}

}  // namespace
}  // namespace runplane::plan::launch

namespace runplane::plan::launch {
namespace {

TEST(TextFilters, SedSubstitutionsAndTrSets) {
    using detail::runSed;
    using detail::runTr;
    std::string why;
    EXPECT_EQ(runSed({"s/o/0/g"}, "foo\nboo\n", why), std::optional<std::string>("f00\nb00\n"));
    EXPECT_EQ(runSed({"s/o/0/"}, "foo\n", why), std::optional<std::string>("f0o\n"));
    EXPECT_EQ(runSed({"s/^f/F/; s/o$/O/"}, "foo\nof\n", why),
              std::optional<std::string>("FoO\nof\n"));
    EXPECT_EQ(runSed({"s/f.o/[&]/g"}, "fooxfao\n", why),
              std::optional<std::string>("[foo]x[fao]\n"));
    EXPECT_EQ(runSed({"s#/#\\\\#g"}, "a/b\n", why), std::optional<std::string>("a\\b\n"));
    for (const char* bad : {"s/a*/b/", "s/[ab]/c/", "s/\\(a\\)/\\1/", "s/a/b/p", "y/ab/cd/",
                            "s/a/b", "s//b/", "{s/a/b/}"}) {
        why.clear();
        EXPECT_FALSE(runSed({bad}, "a\n", why).has_value()) << bad;
        EXPECT_FALSE(why.empty()) << bad;
    }
    EXPECT_FALSE(runSed({"-i", "s/a/b/"}, "a\n", why).has_value());
    EXPECT_FALSE(runSed({"s/a/b/", "file"}, "a\n", why).has_value());
    EXPECT_EQ(runTr({"[:upper:]", "[:lower:]"}, "Qwen3-VL\n", why),
              std::optional<std::string>("qwen3-vl\n"));
    EXPECT_EQ(runTr({"a-c", "x"}, "abcd", why), std::optional<std::string>("xxxd"));
    EXPECT_EQ(runTr({"-d", "-"}, "a-b-c", why), std::optional<std::string>("abc"));
    EXPECT_FALSE(runTr({"-s", "a"}, "aa", why).has_value());
    EXPECT_FALSE(runTr({"[=a=]", "b"}, "a", why).has_value());
    EXPECT_FALSE(runTr({"z-a", "b"}, "a", why).has_value());
    // bounded: '&' doubling cannot grow the text past the reader's limit
    std::string big(600000, 'a');
    EXPECT_FALSE(runSed({"s/a/&&/g"}, big + "\n", why).has_value());
}

}  // namespace
}  // namespace runplane::plan::launch
