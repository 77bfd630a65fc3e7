#include "gui/app/report_text.h"

#include <QFile>

namespace runplane::gui {
namespace {

Status writeText(const QString& path, const QString& text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
        return Error{
            QString(path + QStringLiteral(": cannot write: ") + f.errorString()).toStdString()};
    }
    f.write(text.toUtf8());
    if (!f.flush()) {
        return Error{
            QString(path + QStringLiteral(": write failed: ") + f.errorString()).toStdString()};
    }
    return {};
}

}  // namespace

QString ReportTable::markdown() const {
    auto cells = [](QStringList r) -> QString {
        for (QString& c : r) {
            c.replace(QLatin1Char('|'), QStringLiteral("\\|"));
        }
        return QStringLiteral("| ") + r.join(QStringLiteral(" | ")) + QStringLiteral(" |\n");
    };
    QString s = cells(header) + QStringLiteral("|");
    for (qsizetype i = 0; i < header.size(); ++i) {
        s += QStringLiteral("---|");
    }
    s += QLatin1Char('\n');
    for (const QStringList& r : rows) {
        s += cells(r);
    }
    return s;
}

QString ReportTable::html() const {
    QString s = QStringLiteral("<table><tr>");
    for (const QString& h : header) {
        s += QStringLiteral("<th>") + h.toHtmlEscaped() + QStringLiteral("</th>");
    }
    s += QStringLiteral("</tr>\n");
    for (const QStringList& r : rows) {
        s += QStringLiteral("<tr>");
        for (const QString& c : r) {
            s += QStringLiteral("<td>") + c.toHtmlEscaped() + QStringLiteral("</td>");
        }
        s += QStringLiteral("</tr>\n");
    }
    return s + QStringLiteral("</table>\n");
}

Status writeReportPages(const QDir& dir, const QString& markdown, const QString& html,
                        QString* markdownPath, QStringList* written) {
    *markdownPath = dir.filePath(QStringLiteral("report.md"));
    if (Status s = writeText(*markdownPath, markdown); !s) {
        return s;
    }
    *written << *markdownPath;
    const QString htmlPath = dir.filePath(QStringLiteral("report.html"));
    if (Status s = writeText(htmlPath, html); !s) {
        return s;
    }
    *written << htmlPath;
    return {};
}

}  // namespace runplane::gui
