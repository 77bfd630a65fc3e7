#pragma once
// Column widths of a table that must stay on screen (issue 46): every column sized to its
// contents, then, where together they are wider than the viewport, the elastic columns (free
// text such as a connection error) narrowed first, each down to its floor, and only then the
// widest of the others (never below their header's width). A narrowed cell elides; its tooltip
// has the whole text. GUI thread only. docs/gui.md describes the rule.

#include <utility>
#include <vector>

class QTableView;

namespace runplane::gui {

/// The width `column`'s header title needs (its text and the style's header margins): no column
/// is narrowed below it, and it is the floor of a free-text column that gives way first.
int headerTitleWidth(const QTableView* view, int column);

/// elastic: (column, floor in px) in the order they give up width.
void fitColumnsToViewport(QTableView* view, const std::vector<std::pair<int, int>>& elastic);

}  // namespace runplane::gui
