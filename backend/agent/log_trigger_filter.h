#pragma once
// A literal pre-filter in front of the classifier's RE2::Set (issue #42, speed): most lines of a
// run's output are no format's, and the set's DFA costs about 26 instructions a byte on every one
// of them. From each trigger the filter takes text every match must contain: for an alternative
// anchored with `^`, its literal start (tested with starts_with); for any other, one 3-byte piece
// of its literal runs (`iteration +\d`: "iteration "), checked with its whole run where found. A
// row none of whose literals the line holds cannot match; a row whose alternative is nothing but
// the literal found does match (no RE2 run for it); the others are tried with their own RE2.
// A trigger it cannot read (a group, a `{n}` repeat, an alternative with no 3-byte literal run)
// switches it off (every line goes to the set); log_formats_test asserts that the table's
// triggers all keep it on. Rule in docs/daemon.md "Log formats".

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace runplane::agent {

/// The rows (bit i: triggers[i]) that may match a line, and those sure to: a row whose
/// alternative is one literal (`out of memory`, `^Killed`) matches where that literal was found.
struct TriggerRows {
    std::uint64_t maybe = 0;
    std::uint64_t sure = 0;  // a subset of maybe
};

class TriggerFilter {
  public:
    explicit TriggerFilter(const std::vector<std::string_view>& triggers);

    /// False when a trigger gave nothing to filter on (or there are over 64): rows() is then
    /// every row.
    bool usable() const { return m_usable; }
    /// The rows (bit i: triggers[i]) whose trigger may match `lead` (the text the set is run
    /// on): a row not in it cannot match. 0: no trigger can.
    std::uint64_t rows(std::string_view lead) const { return match(lead).maybe; }
    /// rows() and, of them, the rows sure to match (no RE2 needed for those).
    TriggerRows match(std::string_view lead) const;

    /// What the filter looks for (tests, docs).
    const std::vector<std::string>& anchored() const { return m_anchored; }
    const std::vector<std::string>& pieces() const { return m_pieces; }

  private:
    void rowsOfPieceAt(std::string_view lead, std::size_t pos, TriggerRows& rows) const;
    void scanSsse3(std::string_view lead, TriggerRows& rows) const;
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
    std::vector<std::string> m_pieceRun;       // the literal run each piece is from
    std::vector<std::size_t> m_pieceOffset;    // the piece's place in its run
    std::vector<bool> m_piecePure;             // the run is the whole alternative
    std::vector<bool> m_anchoredPure;          // the start is the whole alternative
    std::array<std::uint64_t, 1024> m_bits{};  // hashes of m_pieces (65,536 bits)
};

}  // namespace runplane::agent
