#pragma once
// Human formatting shared by runplanectl's tables and messages (plain strings, no locale).
// Bytes and durations: common/units (one unit policy for every surface).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace runplane::control {

/// Unix ns -> "2025-01-31 13:05:09" in local time; 0 -> "-".
std::string formatLocalTime(std::int64_t unixNs);
/// Local time of day with milliseconds: "13:05:09.250".
std::string formatTimeOfDay(std::int64_t unixNs);

/// The widest a table cell is printed unless `-o wide` (a launcher argv, many peaks, an error).
inline constexpr std::size_t kTableCellWidth = 40;
/// `text`, or its first kTableCellWidth - 3 characters and "..." when longer and not `wide`.
std::string fitCell(const std::string& text, bool wide);
/// The rows as aligned columns (two blanks apart, no trailing blanks, one line each), every cell
/// through fitCell: `runplanectl runs` and `nodes`.
std::string formatTable(const std::vector<std::vector<std::string>>& rows, bool wide);

/// "[#######                       ]": `fraction` (clamped to 0..1) of `width` cells filled.
std::string progressBar(double fraction, int width = 30);
/// True when fd is a terminal that can redraw a line in place: isatty(fd) and $TERM is not
/// "dumb". runplanectl draws progress bars only then; into a pipe or a file it prints only the
/// finished steps, one line each (docs/user-guide.md "Output conventions").
bool canRedraw(int fd);

}  // namespace runplane::control
