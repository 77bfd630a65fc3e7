// wrapToWidth (gui/widgets/wrapped_text.h, issue 46): a placeholder wrapped to a plot's width.
// Every line fits the width, the words and the text's own line breaks are kept, a word wider
// than the width is broken between characters, and beyond maxLines the last line shown ends
// in "…" within the width. Measured with the application's real font metrics.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFontMetrics>
#include <QStringList>

#include <algorithm>

#include "gui/widgets/wrapped_text.h"

using runplane::gui::wrapToWidth;

namespace {

const QString kMessage = QStringLiteral(
    "Cannot reach 127.0.0.1:1: cannot reach runplaned at 127.0.0.1:1: connection refused; "
    "127.0.0.1:2: cannot reach runplaned at 127.0.0.1:2: connection refused.\nIs runplaned "
    "running there? On that node: `runplaned --listen HOST:PORT` (docs/daemon.md)");

int widest(const QFontMetrics& fm, const QString& text) {
    int w = 0;
    for (const QString& line : text.split('\n')) {
        w = std::max(w, fm.horizontalAdvance(line));
    }
    return w;
}

}  // namespace

TEST(WrappedText, LinesFitTheWidthAndKeepEveryWord) {
    const QFontMetrics fm(QApplication::font());
    for (int width : {120, 300, 700, 5000}) {
        const QString shown = wrapToWidth(kMessage, fm, width, 100);
        EXPECT_LE(widest(fm, shown), width) << width << ": " << shown.toStdString();
        EXPECT_EQ(QString(shown).replace('\n', ' ').simplified(), kMessage.simplified()) << width;
        // The message's own break is kept: "Is runplaned …" starts a line at every width.
        EXPECT_TRUE(shown.contains(QStringLiteral("\nIs "))) << width;
    }
    // Wide enough: the two paragraphs as they are.
    EXPECT_EQ(wrapToWidth(kMessage, fm, 5000, 100), kMessage);
}

TEST(WrappedText, AWordWiderThanTheWidthIsBrokenBetweenCharacters) {
    const QFontMetrics fm(QApplication::font());
    const QString word = QStringLiteral("ipv4:127.0.0.1:7070/failed-to-connect-to-all-addresses");
    const int width = fm.horizontalAdvance(word) / 3;
    const QString shown = wrapToWidth(word, fm, width, 100);
    EXPECT_GE(shown.count('\n'), 2) << shown.toStdString();
    EXPECT_LE(widest(fm, shown), width);
    EXPECT_EQ(QString(shown).remove('\n'), word);
}

TEST(WrappedText, BeyondMaxLinesTheLastLineEndsInAnEllipsis) {
    const QFontMetrics fm(QApplication::font());
    const QString shown = wrapToWidth(kMessage, fm, 200, 3);
    const QStringList lines = shown.split('\n');
    ASSERT_EQ(lines.size(), 3) << shown.toStdString();
    EXPECT_TRUE(lines.back().endsWith(QChar(0x2026))) << shown.toStdString();
    EXPECT_LE(widest(fm, shown), 200);
    EXPECT_EQ(wrapToWidth(kMessage, fm, 0, 3), QString());
    EXPECT_EQ(wrapToWidth(kMessage, fm, 200, 0), QString());
    EXPECT_EQ(wrapToWidth(QString(), fm, 200, 3), QString());
}
