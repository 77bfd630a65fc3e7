#pragma once
// Keeps a table's columns fitted to its viewport (fitColumnsToViewport, fit_columns.h) as the
// table's width, rows or visible columns change, until the user drags a column's edge: from then
// on the widths are the user's (userSized(); the owner saves it with the header state and gives
// it back with setUserSized). A drag is a section resize while a mouse button is down on the
// header; a resize made by the fit, or by a stretched last section, is not. The fit after a
// viewport resize runs once that resize is over (a zero timer). Optionally the table's splitter
// pane first widens to what the columns need at their narrowest (growInto). The Runs and Compare
// pages' run lists (issue 46: they scrolled sideways at 1280×720). GUI thread only.

#include <QObject>

#include <functional>
#include <utility>
#include <vector>

class QSplitter;
class QTableView;
class QTimer;

namespace runplane::gui {

class ColumnFitter : public QObject {
    Q_OBJECT
  public:
    /// elastic: the (column, floor in px) pairs for fitColumnsToViewport, asked at each fit.
    /// minWidth: no fit while the viewport is narrower (a page not yet shown).
    ColumnFitter(QTableView* view, std::function<std::vector<std::pair<int, int>>()> elastic,
                 int minWidth, QObject* parent);

    /// Fits now when the widths are not the user's, the table is shown and has rows.
    void fit();
    /// Fits once the current event is handled (after a resize, a model reset).
    void fitSoon();
    /// When the columns at their narrowest (elastic ones at their floors, the others at their
    /// contents) are wider than the table, the table's pane (`pane` of the splitter's two) takes
    /// the missing width from the other one, which keeps at least `otherMinWidth` px.
    void growInto(QSplitter* splitter, int pane, int otherMinWidth);
    bool userSized() const { return m_userSized; }
    void setUserSized(bool userSized) { m_userSized = userSized; }

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    QTableView* m_view;
    std::function<std::vector<std::pair<int, int>>()> m_elastic;
    int m_minWidth;
    QTimer* m_timer = nullptr;
    QSplitter* m_splitter = nullptr;
    int m_pane = 0;
    int m_otherMinWidth = 0;
    bool m_userSized = false;
    bool m_fitting = false;
    bool m_headerPressed = false;
};

}  // namespace runplane::gui
