#include "gui/widgets/memory_budget_chart.h"

#include <qcustomplot.h>

#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <map>

#include "gui/widgets/invalid_banner.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/stable_colors.h"

namespace runplane::gui {

namespace {

// A component's colour follows its identity: the plan's component (colorKey) or else its name,
// never its position in the chart (stable_colors.h).
QColor componentColor(const BudgetComponent& c) {
    return c.colorKey >= 0 ? slotColor(c.colorKey) : slotColor(stableSlot(c.name));
}

}  // namespace

MemoryBudgetChart::MemoryBudgetChart(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_banner = new InvalidBanner(this);
    layout->addWidget(m_banner);
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(300, 200);
    m_plot->legend->setVisible(true);
    QFont legendFont = font();
    legendFont.setPointSizeF(std::max(6.0, legendFont.pointSizeF() - 1.5));
    m_plot->legend->setFont(legendFont);
    m_plot->legend->setBrush(QColor(255, 255, 255, 220));
    // The legend goes below the bars (inside, it would hide group titles and bars).
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(1, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(1, 0.001);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setWrap(4);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->setMouseTracking(true);
    layout->addWidget(m_plot, 1);  // the rest is the plot's, never the banner's (issue 46)
    // Titles and labels fit the pixels each layout gives (memory_budget_text.cpp).
    connect(m_plot, &QCustomPlot::afterLayout, this, &MemoryBudgetChart::fitTexts);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const QPoint pos = m_plot->mapTo(this, e->position().toPoint());
        const QString tip = tooltipAt(pos);
        if (tip.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(e->globalPosition().toPoint(), tip, m_plot);
        }
    });
}

MemoryBudgetChart::~MemoryBudgetChart() = default;

void MemoryBudgetChart::setData(BudgetChartData data) {
    m_data = std::move(data);
    m_placeholder.clear();
    rebuild();
}

void MemoryBudgetChart::setPlaceholder(const QString& message) {
    m_data = {};
    m_placeholder = message;
    rebuild();
}

void MemoryBudgetChart::setInvalid(const QString& reason) {
    if (reason == m_banner->reason()) {
        return;
    }
    m_banner->setReason(reason);
    rebuild();
}

QString MemoryBudgetChart::invalidReason() const {
    return m_banner->reason();
}

double MemoryBudgetChart::keyOf(int group, int bar) const {
    // Groups are separated by one empty slot.
    double key = 0;
    for (int g = 0; g < group; ++g) {
        key += static_cast<double>(m_data.groups[static_cast<size_t>(g)].bars.size()) + 1;
    }
    return key + bar;
}

int MemoryBudgetChart::barCount() const {
    int n = 0;
    for (const BudgetGroup& g : m_data.groups) {
        n += static_cast<int>(g.bars.size());
    }
    return n;
}

void MemoryBudgetChart::rebuild() {
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_titles.clear();
    m_lineLabels.clear();

    // One QCPBars per distinct component name, stacked in order of first appearance.
    std::vector<QString> names;
    std::vector<QColor> colors;
    std::map<QString, size_t> nameIndex;
    for (const BudgetGroup& g : m_data.groups) {
        for (const BudgetBar& b : g.bars) {
            for (const BudgetComponent& c : b.components) {
                if (nameIndex.emplace(c.name, names.size()).second) {
                    names.push_back(c.name);
                    colors.push_back(componentColor(c));
                }
            }
        }
    }
    std::vector<QCPBars*> bars;
    QCPBars* below = nullptr;
    for (size_t i = 0; i < names.size(); ++i) {
        auto* b = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        b->setName(names[i]);
        QColor color = colors[i];
        QColor edge = color.darker(130);
        if (!m_banner->reason().isEmpty()) {
            color.setAlpha(60);  // an invalid design: the numbers are not a layout's
            edge = QColor(150, 150, 150);
        }
        b->setBrush(color);
        b->setPen(QPen(edge, 0.8, m_banner->reason().isEmpty() ? Qt::SolidLine : Qt::DashLine));
        b->setWidth(0.8);
        if (below != nullptr) {
            b->moveAbove(below);
        }
        below = b;
        bars.push_back(b);
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double maxValue = 0;
    for (size_t g = 0; g < m_data.groups.size(); ++g) {
        const BudgetGroup& group = m_data.groups[g];
        for (size_t bi = 0; bi < group.bars.size(); ++bi) {
            const BudgetBar& bar = group.bars[bi];
            const double key = keyOf(static_cast<int>(g), static_cast<int>(bi));
            ticker->addTick(key, bar.label);
            std::vector<double> values(names.size(), 0.0);
            for (const BudgetComponent& c : bar.components) {
                values[nameIndex[c.name]] += c.value;
            }
            for (size_t i = 0; i < names.size(); ++i) {
                bars[i]->addData(key, values[i]);
            }
            maxValue = std::max(maxValue, bar.total());
        }
        if (!group.bars.empty()) {
            // Above the plot area (never over a bar or a line's label); elided to the group's
            // width by fitTexts.
            auto* title = new QCPItemText(m_plot);
            title->setClipToAxisRect(false);
            title->position->setTypeX(QCPItemPosition::ptPlotCoords);
            title->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            title->position->setCoords(
                keyOf(static_cast<int>(g), 0) + (static_cast<double>(group.bars.size()) - 1) / 2.0,
                0);
            title->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            title->setText(group.title);
            QFont f = font();
            f.setBold(true);
            title->setFont(f);
            m_titles.push_back(title);
        }
    }
    for (const AlarmLine& a : m_data.lines) {
        auto* line = new QCPItemStraightLine(m_plot);
        line->point1->setCoords(0, a.y);
        line->point2->setCoords(1, a.y);
        QPen pen(a.color, 1.5);
        pen.setStyle(a.dashed ? Qt::DashLine : Qt::SolidLine);
        line->setPen(pen);
        auto* label = new QCPItemText(m_plot);
        label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
        label->position->setTypeY(QCPItemPosition::ptPlotCoords);
        label->position->setCoords(0.005, a.y);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setText(a.label);
        label->setColor(a.color);
        m_lineLabels.push_back(label);
        maxValue = std::max(maxValue, a.y);
    }
    if (!m_placeholder.isEmpty()) {
        auto* text = new QCPItemText(m_plot);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.5, 0.5);
        text->setText(m_placeholder);
        text->setColor(QColor(110, 110, 110));
    }
    m_plot->xAxis->setTicker(ticker);
    m_plot->xAxis->setTickLabelRotation(0);
    m_plot->xAxis->grid()->setVisible(false);
    const int n = barCount();
    const double lastKey = m_data.groups.empty()
                               ? 0
                               : keyOf(static_cast<int>(m_data.groups.size()) - 1, 0) +
                                     static_cast<double>(m_data.groups.back().bars.size()) - 1;
    m_plot->xAxis->setRange(-0.7, std::max(1.0, lastKey + 0.7));
    m_valueUpper = maxValue > 0 ? maxValue * 1.12 : 1;
    m_plot->yAxis->setRange(0, m_valueUpper);
    m_plot->xAxis->setTickLabels(true);
    m_plot->xAxis->setLabel(QString());
    QFont titleFont = font();
    titleFont.setBold(true);
    m_plot->axisRect()->setMinimumMargins(
        QMargins(0, m_titles.empty() ? 0 : QFontMetrics(titleFont).height() + 8, 0, 0));
    m_plot->yAxis->setLabel(m_data.yLabel);
    m_plot->legend->setVisible(n > 0);
    m_plot->replot();
}

QString MemoryBudgetChart::tooltipAt(const QPoint& pos) const {
    const QString tip = barTooltipAt(pos);
    if (tip.isEmpty() || m_banner->reason().isEmpty()) {
        return tip;
    }
    return m_banner->reason() + QStringLiteral("\n\n") + tip;
}

QString MemoryBudgetChart::barTooltipAt(const QPoint& pos) const {
    const QPoint p = m_plot->mapFrom(this, pos);
    if (!m_plot->axisRect()->rect().contains(p)) {
        return {};
    }
    const double x = m_plot->xAxis->pixelToCoord(p.x());
    const double y = m_plot->yAxis->pixelToCoord(p.y());
    for (size_t g = 0; g < m_data.groups.size(); ++g) {
        const BudgetGroup& group = m_data.groups[g];
        for (size_t bi = 0; bi < group.bars.size(); ++bi) {
            const double key = keyOf(static_cast<int>(g), static_cast<int>(bi));
            if (std::fabs(x - key) > 0.4) {
                continue;
            }
            const BudgetBar& bar = group.bars[bi];
            // Same stacking order as the plot: by first appearance of the name.
            double base = 0;
            std::vector<QString> order;
            for (const BudgetGroup& gg : m_data.groups) {
                for (const BudgetBar& bb : gg.bars) {
                    for (const BudgetComponent& c : bb.components) {
                        if (std::find(order.begin(), order.end(), c.name) == order.end()) {
                            order.push_back(c.name);
                        }
                    }
                }
            }
            for (const QString& name : order) {
                for (const BudgetComponent& c : bar.components) {
                    if (c.name != name) {
                        continue;
                    }
                    if (y >= base && y < base + c.value) {
                        return group.title + QStringLiteral(" · ") + bar.label +
                               QStringLiteral("\n") + c.name + QStringLiteral(": ") + c.detail +
                               QStringLiteral("\ntotal %1 GB").arg(bar.total(), 0, 'f', 1);
                    }
                    base += c.value;
                }
            }
            return group.title + QStringLiteral(" · ") + bar.label +
                   QStringLiteral(": total %1 GB").arg(bar.total(), 0, 'f', 1);
        }
    }
    return {};
}

QPoint MemoryBudgetChart::segmentCenter(int group, int bar, int component) const {
    const BudgetBar& b =
        m_data.groups.at(static_cast<size_t>(group)).bars.at(static_cast<size_t>(bar));
    // Stack order is by first appearance over the whole chart.
    std::vector<QString> order;
    for (const BudgetGroup& gg : m_data.groups) {
        for (const BudgetBar& bb : gg.bars) {
            for (const BudgetComponent& c : bb.components) {
                if (std::find(order.begin(), order.end(), c.name) == order.end()) {
                    order.push_back(c.name);
                }
            }
        }
    }
    const QString& target = b.components.at(static_cast<size_t>(component)).name;
    double base = 0;
    double mid = 0;
    for (const QString& name : order) {
        for (const BudgetComponent& c : b.components) {
            if (c.name == name) {
                if (name == target) {
                    mid = base + c.value / 2;
                }
                base += c.value;
            }
        }
    }
    const QPointF p(m_plot->xAxis->coordToPixel(keyOf(group, bar)),
                    m_plot->yAxis->coordToPixel(mid));
    return m_plot->mapTo(this, p.toPoint());
}

bool MemoryBudgetChart::savePng(const QString& path, int width, int height) {
    return m_plot->savePng(path, width, height);
}

}  // namespace runplane::gui
