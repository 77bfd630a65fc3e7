#include "gui/pages/run_annotations_bar.h"

#include <QDateTime>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

#include <set>
#include <string>

#include "db/history/history.h"
#include "gui/models/history_reader.h"
#include "gui/models/run_data.h"

namespace runplane::gui {

RunAnnotationsBar::RunAnnotationsBar(HistoryReader* reader, QWidget* parent)
    : QWidget(parent), m_reader(reader) {
    setObjectName(QStringLiteral("runAnnotations"));
    auto* layout = new QGridLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_tags = new QLabel(this);
    m_tags->setWordWrap(true);
    layout->addWidget(m_tags, 0, 0, 1, 4);
    m_tag = new QLineEdit(this);
    m_tag->setPlaceholderText(tr("tag (no spaces or commas)"));
    m_add = new QToolButton(this);
    m_add->setText(tr("Add tag"));
    m_remove = new QToolButton(this);
    m_remove->setText(tr("Remove tag"));
    layout->addWidget(new QLabel(tr("Tag:"), this), 1, 0);
    layout->addWidget(m_tag, 1, 1);
    layout->addWidget(m_add, 1, 2);
    layout->addWidget(m_remove, 1, 3);
    m_note = new QLineEdit(this);
    m_note->setPlaceholderText(tr("note (empty removes it)"));
    m_saveNote = new QToolButton(this);
    m_saveNote->setText(tr("Save note"));
    layout->addWidget(new QLabel(tr("Note:"), this), 2, 0);
    layout->addWidget(m_note, 2, 1, 1, 2);
    layout->addWidget(m_saveNote, 2, 3);
    layout->setColumnStretch(1, 1);
    connect(m_add, &QToolButton::clicked, this, [this] { addTag(m_tag->text().trimmed()); });
    connect(m_tag, &QLineEdit::returnPressed, this, [this] { addTag(m_tag->text().trimmed()); });
    connect(m_remove, &QToolButton::clicked, this, [this] { removeTag(m_tag->text().trimmed()); });
    connect(m_saveNote, &QToolButton::clicked, this, [this] { setNote(m_note->text()); });
    connect(m_note, &QLineEdit::returnPressed, this, [this] { setNote(m_note->text()); });
    setRuns({});
}

void RunAnnotationsBar::setRuns(const std::vector<const RunRow*>& runs) {
    QStringList ids;
    std::set<QString> tags;
    for (const RunRow* r : runs) {
        ids << r->id;
        tags.insert(r->tags.begin(), r->tags.end());
    }
    const bool same = ids == m_ids;
    m_ids = ids;
    setEnabled(!ids.isEmpty());
    QStringList all(tags.begin(), tags.end());
    m_tags->setText(ids.isEmpty()   ? tr("Select a run to tag it or write a note")
                    : all.isEmpty() ? tr("tags: none")
                                    : tr("tags: %1").arg(all.join(QStringLiteral(", "))));
    // The note box shows the one selected run's note; kept while the user edits the same runs.
    if (!same || !m_note->isModified()) {
        m_note->setText(runs.size() == 1 ? runs.front()->note : QString());
        m_note->setModified(false);
    }
}

QString RunAnnotationsBar::tagsText() const {
    return m_tags->text();
}

void RunAnnotationsBar::addTag(const QString& tag) {
    write(Op::AddTag, tag);
}

void RunAnnotationsBar::removeTag(const QString& tag) {
    write(Op::RemoveTag, tag);
}

void RunAnnotationsBar::setNote(const QString& note) {
    write(Op::Note, note);
}

void RunAnnotationsBar::write(Op op, const QString& text) {
    if (m_ids.isEmpty()) {
        return;
    }
    // Values only cross to the worker: the ids, the text and the time.
    std::vector<std::string> ids;
    for (const QString& id : m_ids) {
        ids.push_back(id.toStdString());
    }
    const std::string value = text.toStdString();
    const std::int64_t nowNs = QDateTime::currentMSecsSinceEpoch() * 1000000LL;
    m_reader->run(
        QStringLiteral("annotate-%1").arg(++m_seq), this,
        [op, ids, value, nowNs](db::History& h) -> std::string {
            for (const std::string& id : ids) {
                const RunId run{id};
                if (op == Op::AddTag) {
                    if (auto s = h.addRunTag(run, value); !s) {
                        return s.error();
                    }
                } else if (op == Op::RemoveTag) {
                    if (auto s = h.removeRunTag(run, value); !s) {
                        return s.error();
                    }
                } else if (auto s = h.setRunNote(run, value, nowNs); !s) {
                    return s.error();
                }
            }
            return {};
        },
        [this, op, text, n = m_ids.size()](Result<std::string> result) {
            ++m_done;
            const QString error =
                !result ? QString::fromStdString(result.error()) : QString::fromStdString(*result);
            m_lastError = error;
            if (!error.isEmpty()) {
                m_tags->setText(error);
                emit failed(error);
                return;
            }
            if (op == Op::Note) {
                m_note->setModified(false);
            } else {
                m_tag->clear();
            }
            emit written(op == Op::AddTag ? tr("tagged %1 run(s) '%2'").arg(n).arg(text)
                         : op == Op::RemoveTag
                             ? tr("removed tag '%2' from %1 run(s)").arg(n).arg(text)
                         : text.isEmpty() ? tr("removed the note of %1 run(s)").arg(n)
                                          : tr("saved the note of %1 run(s)").arg(n));
        });
}

}  // namespace runplane::gui
