// MemoryBudgetChart's texts (issue 46: "chart group titles and phase labels overlap at the
// default size ("trainweight sync")"). After every layout, fitTexts() makes them fit the pixels
// there are (docs/gui.md "Memory budget charts"):
// - group titles sit above the plot area, each elided to its group's width (whole in the hover);
// - the bars' phase labels are horizontal when the widest fits a bar's slot, vertical when a
//   line of text does, else left out and named once in the axis title;
// - a line's label sits above its line at the left; one that would meet the previous line's
//   label moves to the right end, then under its line; the value axis leaves room above the
//   highest line for its label.
// drawnTexts() lists where each text is drawn, for the tests that check that no two overlap.
#include <qcustomplot.h>

#include <QFontMetrics>
#include <QPolygon>

#include <algorithm>
#include <cmath>

#include "gui/widgets/memory_budget_chart.h"

namespace runplane::gui {

namespace {

constexpr int kTextGap = 6;  // pixels kept between two texts

}  // namespace

void MemoryBudgetChart::fitTexts() {
    QCPAxis* x = m_plot->xAxis;
    QCPAxis* y = m_plot->yAxis;
    QCPAxisRect* rect = m_plot->axisRect();
    if (rect->width() <= 0 || rect->height() <= 0) {
        return;
    }
    bool changed = false;
    const double pxPerKey = rect->width() / std::max(1e-9, x->range().size());

    // The bars' phase labels.
    const QFontMetrics tickFm(x->tickLabelFont());
    int widest = 0;
    QStringList phases;
    for (const BudgetGroup& g : m_data.groups) {
        for (const BudgetBar& b : g.bars) {
            widest = std::max(widest, tickFm.horizontalAdvance(b.label));
            if (!phases.contains(b.label)) {
                phases << b.label;
            }
        }
    }
    double rotation = 0;
    bool labels = true;
    if (widest + kTextGap > pxPerKey) {
        rotation = -90;
        labels = tickFm.height() + 2 <= pxPerKey;
    }
    const QString axisTitle =
        labels || phases.isEmpty()
            ? QString()
            : tr("bars of each group: %1").arg(phases.join(QStringLiteral(" · ")));
    if (x->tickLabelRotation() != rotation || x->tickLabels() != labels ||
        x->label() != axisTitle) {
        x->setTickLabelRotation(rotation);
        x->setTickLabels(labels);
        x->setLabel(axisTitle);
        changed = true;
    }

    // Group titles, each within its group's slots (half of the empty slot on either side).
    size_t g = 0;
    for (QCPItemText* title : m_titles) {
        while (g < m_data.groups.size() && m_data.groups[g].bars.empty()) {
            ++g;
        }
        if (g >= m_data.groups.size()) {
            break;
        }
        const BudgetGroup& group = m_data.groups[g++];
        const QFontMetrics fm(title->font());
        // Within the plot area's width too (the first and last groups end at its edges).
        const double center = x->coordToPixel(title->position->coords().x());
        const double half = std::min({(static_cast<double>(group.bars.size()) + 1) * pxPerKey / 2,
                                      center - rect->left(), rect->right() - center});
        const int room = static_cast<int>(2 * half) - 2 * kTextGap;
        const QString text = fm.elidedText(group.title, Qt::ElideRight, std::max(0, room));
        if (title->text() != text) {
            title->setText(text);
            changed = true;
        }
    }

    // Room above the highest line for its label: upper >= yLine * H / (H - label height).
    double upper = m_valueUpper;
    const double h = rect->height();
    for (QCPItemText* label : m_lineLabels) {
        const QFontMetrics fm(label->font());
        const double need = fm.height() + 2.0 * kTextGap;
        if (h > need) {
            upper = std::max(upper, label->position->coords().y() * h / (h - need));
        }
    }
    if (std::abs(y->range().upper - upper) > 1e-9 * std::max(1.0, upper)) {
        y->setRangeUpper(upper);
        changed = true;
    }

    // Line labels: lowest first; one that would meet the label before it moves right, then under.
    std::vector<QCPItemText*> lines = m_lineLabels;
    std::sort(lines.begin(), lines.end(), [](QCPItemText* a, QCPItemText* b) {
        return a->position->coords().y() < b->position->coords().y();
    });
    std::vector<QRect> placed;
    const auto boxOf = [](QCPItemText* t) {
        QPolygon corners;
        for (QCPItemAnchor* a : {t->topLeft, t->topRight, t->bottomRight, t->bottomLeft}) {
            corners << a->pixelPosition().toPoint();
        }
        return corners.boundingRect().adjusted(-kTextGap / 2, -1, kTextGap / 2, 1);
    };
    for (QCPItemText* label : lines) {
        const double ly = label->position->coords().y();
        const double fromX = label->position->coords().x();
        const Qt::Alignment fromAlign = label->positionAlignment();
        const std::pair<double, Qt::Alignment> spots[] = {{0.005, Qt::AlignLeft | Qt::AlignBottom},
                                                          {0.995, Qt::AlignRight | Qt::AlignBottom},
                                                          {0.005, Qt::AlignLeft | Qt::AlignTop},
                                                          {0.995, Qt::AlignRight | Qt::AlignTop}};
        for (const auto& [at, align] : spots) {
            label->position->setCoords(at, ly);
            label->setPositionAlignment(align);
            const QRect box = boxOf(label);
            if (std::none_of(placed.begin(), placed.end(),
                             [&](const QRect& r) { return r.intersects(box); })) {
                break;
            }
        }
        placed.push_back(boxOf(label));
        changed = changed || label->position->coords().x() != fromX ||
                  label->positionAlignment() != fromAlign;
    }
    if (changed) {
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

std::vector<MemoryBudgetChart::DrawnText> MemoryBudgetChart::drawnTexts() const {
    std::vector<DrawnText> out;
    const QPoint origin = m_plot->mapTo(this, QPoint(0, 0));
    // Items: their eight anchors are the corners of the (rotated) padded text rectangle.
    for (int i = 0; i < m_plot->itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(m_plot->item(i));
        if (text == nullptr || !text->visible() || text->text().isEmpty()) {
            continue;
        }
        QPolygon corners;
        for (QCPItemAnchor* a :
             {text->topLeft, text->topRight, text->bottomRight, text->bottomLeft}) {
            corners << a->pixelPosition().toPoint();
        }
        out.push_back({text->text(), corners.boundingRect().translated(origin)});
    }
    // The x axis' tick labels, centred under their ticks as QCPAxisPainterPrivate places them.
    QCPAxis* x = m_plot->xAxis;
    if (x->visible() && x->tickLabels()) {
        const QFontMetrics fm(x->tickLabelFont());
        const double rotation = x->tickLabelRotation();
        const double rad = rotation * M_PI / 180.0;
        const QVector<double> keys = x->tickVector();
        const QVector<QString> labels = x->tickVectorLabels();
        const int top =
            x->axisRect()->bottom() + x->offset() + x->tickLengthOut() + x->tickLabelPadding();
        for (int i = 0; i < keys.size() && i < labels.size(); ++i) {
            if (labels[i].isEmpty() || keys[i] < x->range().lower || keys[i] > x->range().upper) {
                continue;
            }
            const QRect box =
                fm.boundingRect(QRect(0, 0, 10000, 10000), Qt::AlignCenter, labels[i]);
            const double w =
                std::abs(std::cos(rad)) * box.width() + std::abs(std::sin(rad)) * box.height();
            const double h =
                std::abs(std::sin(rad)) * box.width() + std::abs(std::cos(rad)) * box.height();
            const double cx = x->coordToPixel(keys[i]);
            out.push_back({labels[i],
                           QRect(static_cast<int>(std::lround(cx - w / 2)), top,
                                 static_cast<int>(std::lround(w)), static_cast<int>(std::lround(h)))
                               .translated(origin)});
        }
    }
    return out;
}

}  // namespace runplane::gui
