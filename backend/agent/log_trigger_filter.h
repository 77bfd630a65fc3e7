#pragma once
// A literal pre-filter in front of the classifier's RE2::Set (issue #42, speed): most lines of a
// run's output are no format's, and the set's DFA costs about 26 instructions a byte on every one
// of them. From each trigger the filter takes text every match must contain: for an alternative
// anchored with `^`, its literal start (tested with starts_with); for any other, one 3-byte piece
// of its literal runs (`iteration +\d`: "iteration "). A line none of whose 3-byte windows is such
// a piece (a 65,536-bit hash set) and that starts with no anchored literal cannot match any
// trigger and skips the set. The filter only says "maybe" or "no": results are the set's.
// A trigger it cannot read (a group, a `{n}` repeat, an alternative with no 3-byte literal run)
// switches it off (every line goes to the set); log_formats_test asserts that the table's
// triggers all keep it on. Rule in docs/daemon.md "Log formats".

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace runplane::agent {

class TriggerFilter {
  public:
    explicit TriggerFilter(const std::vector<std::string_view>& triggers);

    /// False when a trigger gave nothing to filter on (or there are over 64): rows() is then
    /// every row.
    bool usable() const { return m_usable; }
    /// The rows (bit i: triggers[i]) whose trigger may match `lead` (the text the set is run
    /// on): a row not in it cannot match. 0: no trigger can.
    std::uint64_t rows(std::string_view lead) const;

    /// What the filter looks for (tests, docs).
    const std::vector<std::string>& anchored() const { return m_anchored; }
    const std::vector<std::string>& pieces() const { return m_pieces; }

  private:
    std::uint64_t rowsOfPieceAt(const unsigned char* p) const;
    std::uint64_t scanSsse3(const unsigned char* p, std::size_t n) const;
    bool m_usable = true;
    std::array<bool, 256> m_anchoredFirst{};  // first bytes of m_anchored
    // Teddy's nibble tables: bucket bits (piece i in bucket i % 8) per byte k of a piece.
    std::array<std::array<std::uint8_t, 16>, 3> m_teddyLo{};
    std::array<std::array<std::uint8_t, 16>, 3> m_teddyHi{};
    std::vector<std::string> m_anchored;  // literal starts of `^` alternatives
    std::vector<std::size_t> m_anchoredRow;
    std::vector<std::string> m_pieces;        // 3-byte pieces, one per unanchored alternative
    std::vector<std::uint32_t> m_pieceValue;  // the pieces as 24-bit numbers
    std::vector<std::size_t> m_pieceRow;
    std::array<std::uint64_t, 1024> m_bits{};  // hashes of m_pieces (65,536 bits)
};

}  // namespace runplane::agent
