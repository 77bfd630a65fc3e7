#include "gui/pages/run_drop_import.h"

#include <QDateTime>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QLabel>
#include <QMimeData>
#include <QUrl>
#include <QWidget>

#include <string>
#include <utility>
#include <vector>

#include "db/history/history.h"
#include "db/imports/run_import.h"
#include "gui/models/history_reader.h"

namespace runplane::gui {

namespace {

struct Line {
    std::string text;
    bool error = false;
};

/// The import itself, on the worker: what `runplanectl import-runs` does per path.
std::vector<Line> importAll(db::History& history, const std::vector<std::string>& paths,
                            std::int64_t nowNs) {
    std::vector<Line> lines;
    for (const std::string& path : paths) {
        auto sources = imports::findImportSources(path);
        if (!sources) {
            lines.push_back({sources.error(), true});
            continue;
        }
        for (const imports::ImportSource& source : *sources) {
            auto run = imports::readImportSource(source);
            if (!run) {
                lines.push_back({run.error(), true});
                continue;
            }
            auto stored = imports::storeImportedRun(history, *run, nowNs);
            if (!stored) {
                lines.push_back({path + ": " + stored.error(), true});
                continue;
            }
            if (stored->alreadyPresent) {
                lines.push_back({"already imported: " + stored->runId.value() + " " + run->name +
                                     " (" + run->format + ", same content); nothing added",
                                 false});
            } else {
                lines.push_back({"imported " + stored->runId.value() + " " + run->name + " (" +
                                     run->format + ", " + std::to_string(run->series.size()) +
                                     " series, " + std::to_string(run->pointCount()) +
                                     " points) from " + path,
                                 false});
            }
            if (!run->stopped.empty()) {
                lines.push_back({run->stopped + " (what came before it is imported)", true});
            }
        }
    }
    return lines;
}

}  // namespace

RunDropImport::RunDropImport(QWidget* target, HistoryReader* reader)
    : QObject(target), m_target(target), m_reader(reader) {
    target->setAcceptDrops(true);
    target->installEventFilter(this);
    m_report = new QLabel(target);
    m_report->setObjectName(QStringLiteral("dropImportReport"));
    m_report->setWordWrap(true);
    m_report->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_report->setToolTip(
        tr("Drop TensorBoard event files or folders, W&B offline runs, CSV or JSON-lines files "
           "on this page to import them (as runplanectl import-runs)"));
    m_report->hide();
}

QStringList RunDropImport::localPaths(const QMimeData* mime) {
    QStringList paths;
    if (mime == nullptr || !mime->hasUrls()) {
        return paths;
    }
    for (const QUrl& url : mime->urls()) {
        if (url.isLocalFile() && !url.toLocalFile().isEmpty()) {
            paths << url.toLocalFile();
        }
    }
    return paths;
}

bool RunDropImport::eventFilter(QObject* watched, QEvent* event) {
    if (watched != m_target) {
        return false;
    }
    switch (event->type()) {
        case QEvent::DragEnter:
        case QEvent::DragMove: {
            auto* drag = static_cast<QDragMoveEvent*>(event);
            if (!localPaths(drag->mimeData()).isEmpty()) {
                drag->acceptProposedAction();
                return true;
            }
            return false;
        }
        case QEvent::Drop: {
            auto* drop = static_cast<QDropEvent*>(event);
            const QStringList paths = localPaths(drop->mimeData());
            if (paths.isEmpty()) {
                return false;
            }
            drop->acceptProposedAction();
            importPaths(paths);
            return true;
        }
        default:
            return false;
    }
}

void RunDropImport::importPaths(const QStringList& paths) {
    std::vector<std::string> values;
    for (const QString& p : paths) {
        values.push_back(p.toStdString());
    }
    const std::int64_t nowNs = QDateTime::currentMSecsSinceEpoch() * 1000000LL;
    m_report->setText(tr("importing %1…").arg(paths.join(QStringLiteral(", "))));
    m_report->setStyleSheet(QString());
    m_report->show();
    m_reader->run(
        QStringLiteral("drop-import-%1").arg(++m_seq), this,
        [values, nowNs](db::History& h) { return importAll(h, values, nowNs); },
        [this](Result<std::vector<Line>> result) {
            ++m_done;
            m_lines.clear();
            m_ok = true;
            if (!result) {
                m_lines << QString::fromStdString(result.error());
                m_ok = false;
            } else {
                for (const Line& l : *result) {
                    m_lines << QString::fromStdString(l.text);
                    m_ok = m_ok && !l.error;
                }
            }
            m_report->setStyleSheet(
                m_ok ? QStringLiteral("QLabel{background:#e9f5ec;color:#123;padding:4px}")
                     : QStringLiteral("QLabel{background:#fde7e7;color:#8a1010;padding:4px}"));
            m_report->setText(m_lines.join(QLatin1Char('\n')));
            emit imported(m_lines, m_ok);
        });
}

}  // namespace runplane::gui
