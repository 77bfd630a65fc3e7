#pragma once
// RunAnnotationsBar (issue 49): tags and the note of the selected run(s), edited from the Runs and
// Compare pages: add or remove a tag on every selected run, set the note (of every selected
// run; "" removes it). The writes run on the page's HistoryReader worker (History::addRunTag /
// removeRunTag / setRunNote, the same as `runplanectl runs tag|note`); the ids, tags and note
// cross to it as values and the outcome comes back as a value. GUI thread only.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QToolButton;

namespace runplane::gui {

class HistoryReader;
struct RunRow;

class RunAnnotationsBar : public QWidget {
    Q_OBJECT
  public:
    /// `reader` must outlive the bar (the page owns both).
    explicit RunAnnotationsBar(HistoryReader* reader, QWidget* parent = nullptr);

    /// The runs the edits apply to, as they are now (their tags shown, the note of one run in
    /// the note box). Empty: the bar is disabled.
    void setRuns(const std::vector<const RunRow*>& runs);
    QStringList runIds() const { return m_ids; }

    /// What the buttons do (tests and the page call these too).
    void addTag(const QString& tag);
    void removeTag(const QString& tag);
    void setNote(const QString& note);

    QLineEdit* tagEdit() const { return m_tag; }
    QLineEdit* noteEdit() const { return m_note; }
    QToolButton* addButton() const { return m_add; }
    QToolButton* removeButton() const { return m_remove; }
    QToolButton* saveNoteButton() const { return m_saveNote; }
    QString tagsText() const;
    /// Writes whose outcome came back, and the last error ("" after a success).
    int writesDone() const { return m_done; }
    QString lastError() const { return m_lastError; }

  signals:
    /// A write finished: the page re-reads its run list. `message` says what was done.
    void written(const QString& message);
    void failed(const QString& error);

  private:
    enum class Op { AddTag, RemoveTag, Note };
    void write(Op op, const QString& text);

    HistoryReader* m_reader;
    QStringList m_ids;
    QLabel* m_tags = nullptr;
    QLineEdit* m_tag = nullptr;
    QToolButton* m_add = nullptr;
    QToolButton* m_remove = nullptr;
    QLineEdit* m_note = nullptr;
    QToolButton* m_saveNote = nullptr;
    int m_seq = 0;
    int m_done = 0;
    QString m_lastError;
};

}  // namespace runplane::gui
