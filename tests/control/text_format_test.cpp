// runplanectl's shared text helpers (issue 19, CLI conventions): bytes in decimal units, the
// one unit system of the seed, the recipes and the GUI; progress bars only on a terminal.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend/control/text_format.h"
#include "common/units/units.h"

namespace runplane::control {
namespace {

using units::formatBytes;
using units::formatCount;
using units::formatDuration;

TEST(FormatDuration, OneStyleForTheCliAndTheGui) {
    EXPECT_EQ(formatDuration(12.4), "12s");
    EXPECT_EQ(formatDuration(249), "4m 09s");
    EXPECT_EQ(formatDuration(3 * 3600 + 5 * 60 + 59), "3h 05m");
    EXPECT_EQ(formatDuration(-1), "-");
    EXPECT_EQ(formatDuration(std::nan("")), "-");
}

// Parameter counts as model names write them; a 0.8 M-parameter smoke model printed as
// "0.000792704 B params".
TEST(FormatCount, ParameterCountsWithTheSuffixOfTheirSize) {
    EXPECT_EQ(formatCount(2419.8e9), "2419.8 B");  // qwen3.8-2.4T-A95B
    EXPECT_EQ(formatCount(30.5321e9), "30.53 B");  // qwen3-30B-A3B
    EXPECT_EQ(formatCount(3.35303e9), "3.35 B");   // its active parameters
    EXPECT_EQ(formatCount(792704), "792.7 K");     // runplane-smoke
    EXPECT_EQ(formatCount(12.5e6), "12.5 M");
    EXPECT_EQ(formatCount(512), "512");
    EXPECT_EQ(formatCount(std::nan("")), "nan");
}

TEST(FormatBytes, DecimalUnitsAsTheSeedAndTheGui) {
    EXPECT_EQ(formatBytes(956e9), "956.0 GB");    // the seed's GB300 tray
    EXPECT_EQ(formatBytes(750e9), "750.0 GB");    // its alarm line
    EXPECT_EQ(formatBytes(12.5e9), "12.50 GB");   // two decimals below 100 GB
    EXPECT_EQ(formatBytes(1.5e9), "1.50 GB");     // the 1.5 GB run, not "1.4 GiB"
    EXPECT_EQ(formatBytes(2048e9), "2048.0 GB");  // RAM stays in GB (host_ram_gb)
    EXPECT_EQ(formatBytes(536870912), "537 MB");  // 512 MiB in decimal MB
    EXPECT_EQ(formatBytes(1536), "2 kB");
    EXPECT_EQ(formatBytes(999), "999 B");
    EXPECT_EQ(formatBytes(-3e9), "-3.00 GB");  // a difference
    EXPECT_EQ(formatBytes(std::nan("")), "nan");
    // 24 GiB (25769803776 bytes) reads as 25.77 GB, never as "24.0 GiB".
    EXPECT_EQ(formatBytes(25769803776.0), "25.77 GB");
}

TEST(FormatTable, AlignsColumnsAndCutsLongCellsUnlessWide) {
    const std::string longCell(50, 'x');
    const std::vector<std::vector<std::string>> rows = {
        {"ID", "ERROR"}, {"a", longCell}, {"bbbb", "-"}};
    const std::string cut = formatTable(rows, false);
    EXPECT_EQ(cut,
              "ID    ERROR\n"
              "a     " +
                  std::string(37, 'x') +
                  "...\n"
                  "bbbb  -\n");
    const std::string wide = formatTable(rows, true);
    EXPECT_NE(wide.find(longCell + "\n"), std::string::npos) << wide;
    EXPECT_EQ(fitCell(std::string(40, 'y'), false), std::string(40, 'y'));  // exactly the width
    EXPECT_EQ(fitCell(std::string(41, 'y'), false).size(), kTableCellWidth);
}

TEST(ProgressBar, FillsItsFractionAndClamps) {
    EXPECT_EQ(progressBar(0.5, 10), "[#####     ]");
    EXPECT_EQ(progressBar(0, 4), "[    ]");
    EXPECT_EQ(progressBar(2.0, 4), "[####]");
    EXPECT_EQ(progressBar(-1, 4), "[    ]");
    EXPECT_EQ(progressBar(std::nan(""), 3), "[   ]");
}

TEST(CanRedraw, OnlyOnATerminalThatIsNotDumb) {
    int pipeFds[2];
    ASSERT_EQ(pipe(pipeFds), 0);
    EXPECT_FALSE(canRedraw(pipeFds[1]));  // `runplanectl ... | tee log`
    close(pipeFds[0]);
    close(pipeFds[1]);
    const int null = open("/dev/null", O_WRONLY);
    ASSERT_GE(null, 0);
    EXPECT_FALSE(canRedraw(null));  // `runplanectl ... 2>/dev/null` or a file
    close(null);

    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        GTEST_SKIP() << "no pseudo-terminal here";
    }
    const int terminal = open(ptsname(master), O_RDWR | O_NOCTTY);
    ASSERT_GE(terminal, 0);
    const char* saved = getenv("TERM");
    const std::string savedTerm = saved ? saved : "";
    setenv("TERM", "xterm-256color", 1);
    EXPECT_TRUE(canRedraw(terminal));
    setenv("TERM", "dumb", 1);
    EXPECT_FALSE(canRedraw(terminal));  // Emacs shells, CI logs
    if (saved) {
        setenv("TERM", savedTerm.c_str(), 1);
    } else {
        unsetenv("TERM");
    }
    close(terminal);
    close(master);
}

}  // namespace
}  // namespace runplane::control
