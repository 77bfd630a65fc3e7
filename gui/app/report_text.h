// Internal to runplane_gui_app: the text side of the headless reports (report.cpp and
// compare_report.cpp) — one table type that renders as Markdown and HTML, and the writing of
// report.md + report.html.
#pragma once

#include <QDir>
#include <QString>
#include <QStringList>

#include <vector>

#include "common/result.h"

namespace runplane::gui {

/// A table as Markdown ('|' in cells escaped) and as HTML (cells HTML-escaped).
struct ReportTable {
    QStringList header;
    std::vector<QStringList> rows;

    QString markdown() const;
    QString html() const;
};

/// Writes dir/report.md and dir/report.html; appends both paths to written and sets
/// markdownPath. The error names the file that could not be written.
Status writeReportPages(const QDir& dir, const QString& markdown, const QString& html,
                        QString* markdownPath, QStringList* written);

}  // namespace runplane::gui
