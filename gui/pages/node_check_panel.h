#pragma once
// NodeCheckPanel: what the Cluster page's boxes that ask every daemon one question share (Ray
// membership, preflight) -- a title, a summary line and a button above a table, one answer in
// flight at a time. A subclass sets its model, asks off the GUI thread (runOffGuiThread) between
// beginAsking() and finishAsking(), and keeps its own model type.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <string>
#include <vector>

class QAbstractItemModel;
class QLabel;
class QPushButton;
class QTableView;

namespace runplane::gui {

class NodeCheckPanel : public QWidget {
    Q_OBJECT
  public:
    bool busy() const { return m_busy; }
    QLabel* summaryLabel() const { return m_summary; }
    QTableView* table() const { return m_table; }
    QPushButton* checkButton() const { return m_check; }

  signals:
    /// The button was pressed (the page answers with the subclass's refresh()).
    void checkRequested();
    /// An answer was applied to the model.
    void updated();

  protected:
    struct Texts {
        QString title;    // before the summary, e.g. "Preflight:"
        QString button;   // the button's text
        QString tooltip;  // the button's tooltip
        bool wrapSummary = false;
    };
    NodeCheckPanel(const Texts& texts, QWidget* parent);
    void setModel(QAbstractItemModel* model);

    /// False when an answer is in flight (the call is dropped); else marks the panel busy and
    /// says it is asking `count` daemons.
    bool beginAsking(qsizetype count);
    /// After the model took the answer: shows `summary`, fits the columns, takes the next call.
    void finishAsking(const QString& summary);
    static std::vector<std::string> addressList(const QStringList& addresses);

  private:
    QPushButton* m_check = nullptr;
    QLabel* m_summary = nullptr;
    QTableView* m_table = nullptr;
    bool m_busy = false;
};

}  // namespace runplane::gui
