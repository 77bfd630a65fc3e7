#include "gui/widgets/wrapped_text.h"

#include <QStringList>

namespace runplane::gui {

namespace {

// Appends `word` to the lines, starting a new line when it does not fit beside the last one.
void place(QStringList& lines, bool& lineOpen, const QString& word, const QFontMetrics& metrics,
           int width) {
    if (lineOpen) {
        const QString joined = lines.back() + QLatin1Char(' ') + word;
        if (metrics.horizontalAdvance(joined) <= width) {
            lines.back() = joined;
            return;
        }
    }
    // On a line of its own, broken between characters while too wide.
    QString rest = word;
    while (metrics.horizontalAdvance(rest) > width && rest.size() > 1) {
        qsizetype n = 1;
        while (n < rest.size() && metrics.horizontalAdvance(rest.left(n + 1)) <= width) {
            ++n;
        }
        lines << rest.left(n);
        rest = rest.mid(n);
    }
    lines << rest;
    lineOpen = true;
}

}  // namespace

QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width, int maxLines) {
    if (text.isEmpty() || width < 1 || maxLines < 1) {
        return {};
    }
    QStringList lines;
    for (const QString& paragraph : text.split(QLatin1Char('\n'))) {
        const QStringList words = paragraph.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (words.isEmpty()) {
            lines << QString();
            continue;
        }
        bool lineOpen = false;
        for (const QString& word : words) {
            place(lines, lineOpen, word, metrics, width);
        }
    }
    if (lines.size() > maxLines) {
        lines = lines.mid(0, maxLines);
        // The last line shown ends in "…" (within the width): more follows.
        QString last = lines.back();
        while (!last.isEmpty() && metrics.horizontalAdvance(last + QChar(0x2026)) > width) {
            last.chop(1);
        }
        lines.back() = last + QChar(0x2026);
    }
    return lines.join(QLatin1Char('\n'));
}

}  // namespace runplane::gui
