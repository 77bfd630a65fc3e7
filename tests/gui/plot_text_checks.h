#pragma once
// Text-overlap checks on a TimeSeriesPlot as drawn (issue 46: time-axis tick labels rendered as
// `19:32:1019:32:15`; titles drawn over each other). Used by time_ticks_test.cpp and
// afternoon_walk_test.cpp.
//  - tickLabelProblems: the x axis' tick labels from QCustomPlot's own tick vector, each a
//    rectangle of its text's width centred on its tick: no two meet (2 px apart at least).
//  - tickLabelPixelProblems: a pixel test on the plot rendered to a QImage: between the centres
//    of two neighbouring tick labels, the band the labels are drawn in has a run of background
//    columns at least two spaces wide (glyphs inside one label are closer than that).
//  - chartTitleProblems: every chart title on screen (a time plot's title, a memory budget
//    chart's own texts: group titles, phase labels, line labels), from the widgets' own text
//    elements, mapped into the window: no two meet, and a pixel test on the window rendered to a
//    QImage: each has ink in its rectangle, and a plot title's pixels are its own (nothing drawn
//    over it).
//  - placeholderProblems: a plot's placeholder inside its data area, from its text element and
//    by a pixel test at the area's sides (cluster_placeholder_test.cpp).

#include <QColor>
#include <QFontMetrics>
#include <QImage>
#include <QLabel>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <qcustomplot.h>

#include "gui/widgets/memory_budget_chart.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui::plotcheck {

struct TickLabel {
    QString text;
    double x = 0;  // pixel centre
    QRect rect;    // in the QCustomPlot's coordinates
};

inline QCustomPlot* customPlot(TimeSeriesPlot* plot) {
    return plot->findChild<QCustomPlot*>();
}

/// The x axis' tick labels QCustomPlot draws (inside the axis range), left to right.
inline std::vector<TickLabel> xTickLabels(TimeSeriesPlot* plot) {
    std::vector<TickLabel> out;
    QCustomPlot* cp = customPlot(plot);
    if (cp == nullptr || !cp->xAxis->tickLabels()) {
        return out;
    }
    QCPAxis* axis = cp->xAxis;
    const QFontMetrics fm(axis->tickLabelFont());
    const QVector<double> ticks = axis->tickVector();
    const QVector<QString> labels = axis->tickVectorLabels();
    const int top = axis->axisRect()->bottom() + axis->tickLabelPadding();
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
        if (!axis->range().contains(ticks[i]) || labels[i].isEmpty()) {
            continue;
        }
        TickLabel t;
        t.text = labels[i];
        t.x = axis->coordToPixel(ticks[i]);
        const int w = fm.horizontalAdvance(labels[i]);
        t.rect = QRect(static_cast<int>(std::lround(t.x - w / 2.0)), top, w, fm.height());
        out.push_back(t);
    }
    std::sort(out.begin(), out.end(),
              [](const TickLabel& a, const TickLabel& b) { return a.x < b.x; });
    return out;
}

inline QStringList tickLabelProblems(TimeSeriesPlot* plot) {
    QStringList problems;
    const std::vector<TickLabel> ticks = xTickLabels(plot);
    for (size_t i = 1; i < ticks.size(); ++i) {
        if (ticks[i - 1].rect.right() + 2 >= ticks[i].rect.left()) {
            problems << QStringLiteral("tick labels '%1' [%2..%3] and '%4' [%5..%6] meet")
                            .arg(ticks[i - 1].text)
                            .arg(ticks[i - 1].rect.left())
                            .arg(ticks[i - 1].rect.right())
                            .arg(ticks[i].text)
                            .arg(ticks[i].rect.left())
                            .arg(ticks[i].rect.right());
        }
    }
    return problems;
}

/// Renders the plot and looks at the tick-label band's pixels (see the header comment).
inline QStringList tickLabelPixelProblems(TimeSeriesPlot* plot) {
    QStringList problems;
    QCustomPlot* cp = customPlot(plot);
    const std::vector<TickLabel> ticks = xTickLabels(plot);
    if (cp == nullptr || ticks.size() < 2) {
        return problems;
    }
    const QImage img = cp->grab().toImage().convertToFormat(QImage::Format_RGB32);
    const QRect band = ticks.front().rect.united(ticks.back().rect).intersected(img.rect());
    if (band.isEmpty()) {
        return problems;
    }
    // Background: the band's most common colour.
    std::map<QRgb, int> counts;
    for (int y = band.top(); y <= band.bottom(); ++y) {
        for (int x = band.left(); x <= band.right(); ++x) {
            ++counts[img.pixel(x, y)];
        }
    }
    const QColor bg(std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) {
                        return a.second < b.second;
                    })->first);
    const auto inked = [&](int x) {
        for (int y = band.top(); y <= band.bottom(); ++y) {
            const QColor c(img.pixel(x, y));
            if (std::abs(c.red() - bg.red()) + std::abs(c.green() - bg.green()) +
                    std::abs(c.blue() - bg.blue()) >
                96) {
                return true;
            }
        }
        return false;
    };
    const int gap =
        QFontMetrics(cp->xAxis->tickLabelFont()).horizontalAdvance(QStringLiteral("  "));
    int drawn = 0;
    for (const TickLabel& t : ticks) {
        const int c = static_cast<int>(std::lround(t.x));
        drawn += c >= 0 && c < img.width() && (inked(c) || inked(c - 1) || inked(c + 1)) ? 1 : 0;
    }
    if (drawn == 0) {
        problems << QStringLiteral("no tick label drawn where the ticks are");
        return problems;
    }
    for (size_t i = 1; i < ticks.size(); ++i) {
        int run = 0;
        int best = 0;
        for (int x = static_cast<int>(ticks[i - 1].x); x <= static_cast<int>(ticks[i].x); ++x) {
            run = x >= 0 && x < img.width() && !inked(x) ? run + 1 : 0;
            best = std::max(best, run);
        }
        if (best < gap) {
            problems << QStringLiteral(
                            "between tick labels '%1' and '%2' no blank %3 px (widest %4)")
                            .arg(ticks[i - 1].text, ticks[i].text)
                            .arg(gap)
                            .arg(best);
        }
    }
    return problems;
}

/// Pixels of `img` inside `r` whose colour is far from the rectangle's most common one.
inline int inkPixels(const QImage& img, const QRect& r) {
    std::map<QRgb, int> counts;
    const QRect in = r.intersected(img.rect());
    for (int y = in.top(); y <= in.bottom(); ++y) {
        for (int x = in.left(); x <= in.right(); ++x) {
            ++counts[img.pixel(x, y)];
        }
    }
    if (counts.empty()) {
        return 0;
    }
    const QColor bg(std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) {
                        return a.second < b.second;
                    })->first);
    int ink = 0;
    for (int y = in.top(); y <= in.bottom(); ++y) {
        for (int x = in.left(); x <= in.right(); ++x) {
            const QColor c(img.pixel(x, y));
            ink += std::abs(c.red() - bg.red()) + std::abs(c.green() - bg.green()) +
                               std::abs(c.blue() - bg.blue()) >
                           96
                       ? 1
                       : 0;
        }
    }
    return ink;
}

inline QStringList chartTitleProblems(QWidget* window) {
    struct Title {
        QString text;
        QRect rect;               // in the window
        QLabel* label = nullptr;  // a plot's title label (else a chart's own text)
    };
    std::vector<Title> titles;
    for (TimeSeriesPlot* plot : window->findChildren<TimeSeriesPlot*>()) {
        if (!plot->isVisible()) {
            continue;
        }
        for (QLabel* l : plot->findChildren<QLabel*>()) {
            if (l->isVisible() && l->font().bold() && !l->text().isEmpty()) {
                titles.push_back({l->text(), QRect(l->mapTo(window, QPoint(0, 0)), l->size()), l});
            }
        }
    }
    for (MemoryBudgetChart* chart : window->findChildren<MemoryBudgetChart*>()) {
        if (!chart->isVisible()) {
            continue;
        }
        for (const MemoryBudgetChart::DrawnText& t : chart->drawnTexts()) {
            titles.push_back(
                {t.text, QRect(chart->mapTo(window, t.rect.topLeft()), t.rect.size()), nullptr});
        }
    }
    QStringList problems;
    for (size_t i = 0; i < titles.size(); ++i) {
        for (size_t j = i + 1; j < titles.size(); ++j) {
            if (titles[i].rect.intersects(titles[j].rect)) {
                problems << QStringLiteral("'%1' meets '%2'").arg(titles[i].text, titles[j].text);
            }
        }
    }
    const QImage shot = window->grab().toImage().convertToFormat(QImage::Format_RGB32);
    for (const Title& t : titles) {
        if (!t.rect.intersects(shot.rect())) {
            continue;  // scrolled away
        }
        if (inkPixels(shot, t.rect) == 0) {
            problems << QStringLiteral("'%1' is not drawn (no ink in its rectangle)").arg(t.text);
        }
        if (t.label != nullptr) {
            // What the window shows there is the label's own picture.
            const QImage own = t.label->grab().toImage().convertToFormat(QImage::Format_RGB32);
            const QImage there = shot.copy(t.rect);
            int differ = 0;
            for (int y = 0; y < std::min(own.height(), there.height()); ++y) {
                for (int x = 0; x < std::min(own.width(), there.width()); ++x) {
                    differ += own.pixel(x, y) != there.pixel(x, y) ? 1 : 0;
                }
            }
            if (differ > own.width() * own.height() / 50) {
                problems << QStringLiteral("'%1' drawn over: %2 of its %3 pixels differ")
                                .arg(t.text)
                                .arg(differ)
                                .arg(own.width() * own.height());
            }
        }
    }
    return problems;
}

/// The text QCustomPlot draws in the middle of the plot's data area (its placeholder), or null.
inline QCPItemText* placeholderItem(TimeSeriesPlot* plot) {
    QCustomPlot* cp = customPlot(plot);
    for (int i = 0; cp != nullptr && i < cp->itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(cp->item(i));
        if (text != nullptr && text->position->type() == QCPItemPosition::ptAxisRectRatio &&
            text->position->coords() == QPointF(0.5, 0.5)) {
            return text;
        }
    }
    return nullptr;
}

/// Where QCPItemText::draw puts a centred item's text (the QCustomPlot's coordinates).
inline QRect centredTextRect(QCPItemText* text) {
    QRect r = QFontMetrics(text->font())
                  .boundingRect(0, 0, 0, 0, Qt::TextDontClip | text->textAlignment(), text->text());
    r.moveCenter(text->position->pixelPosition().toPoint());
    return r;
}

/// issue 46: the placeholder cut off at the plot's sides ("Cannot reach …" at 1280×720). From
/// the text element: its rectangle lies inside the data area. A pixel test on the plot rendered
/// to a QImage: ink (the text) inside the data area, none in the 5-px bands just inside its
/// left and right sides (text running past a side is clipped there, its glyphs reaching it).
inline QStringList placeholderProblems(TimeSeriesPlot* plot) {
    QStringList problems;
    QCPItemText* text = placeholderItem(plot);
    if (text == nullptr) {
        return {QStringLiteral("no placeholder drawn")};
    }
    const QRect area = plot->dataRect();
    const QRect drawn = centredTextRect(text);
    if (!area.contains(drawn)) {
        problems << QStringLiteral(
                        "placeholder [%1..%2]x[%3..%4] outside the data area "
                        "[%5..%6]x[%7..%8]")
                        .arg(drawn.left())
                        .arg(drawn.right())
                        .arg(drawn.top())
                        .arg(drawn.bottom())
                        .arg(area.left())
                        .arg(area.right())
                        .arg(area.top())
                        .arg(area.bottom());
    }
    const QImage img = customPlot(plot)->grab().toImage().convertToFormat(QImage::Format_RGB32);
    const int top = area.top() + 2;
    const int height = area.height() - 4;
    if (inkPixels(img, QRect(area.left() + 6, top, area.width() - 12, height)) == 0) {
        problems << QStringLiteral("no placeholder text drawn in the data area");
    }
    const int leftInk = inkPixels(img, QRect(area.left() + 2, top, 5, height));
    const int rightInk = inkPixels(img, QRect(area.right() - 6, top, 5, height));
    if (leftInk > 0 || rightInk > 0) {
        problems << QStringLiteral(
                        "text drawn up to the data area's sides (%1 px at the left, "
                        "%2 px at the right)")
                        .arg(leftInk)
                        .arg(rightInk);
    }
    return problems;
}

}  // namespace runplane::gui::plotcheck
