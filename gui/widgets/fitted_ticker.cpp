#include "gui/widgets/fitted_ticker.h"

#include <QFontMetrics>
#include <QLocale>

#include <algorithm>

#include <qcustomplot.h>

namespace runplane::gui {
namespace {

class Fitted {
  public:
    virtual ~Fitted() = default;
    int assumedPixels = 0;  // the data width the last step was chosen for
};

/// The step rule (docs/gui.md "Time-axis ticks"): minStep = range × (widest label + width of
/// "00") / axis pixels; the base ticker's nice step for tickCount 5, 4, ... 1, the first one at
/// least minStep; if none is, the count-1 step doubled until it is.
template <typename Base>
class FittedTicker final : public Base, public Fitted {
  public:
    FittedTicker(QCPAxis* axis, double floorStep) : m_axis(axis), m_floor(floorStep) {}

  protected:
    double getTickStep(const QCPRange& range) override {
        const int count = this->tickCount();
        double step = baseStep(range);
        const int pixels = axisPixels();
        assumedPixels = pixels;
        if (pixels <= 0 || range.size() <= 0) {
            return step;
        }
        const QFontMetrics fm(m_axis->tickLabelFont());
        const QLocale locale = m_axis->parentPlot()->locale();
        const QChar format =
            m_axis->numberFormat().isEmpty() ? QLatin1Char('g') : m_axis->numberFormat().at(0);
        int widest = 0;
        for (double t : {range.lower, range.center(), range.upper}) {
            widest = std::max(widest, fm.horizontalAdvance(this->getTickLabel(
                                          t, locale, format, m_axis->numberPrecision())));
        }
        const double minStep =
            range.size() * (widest + fm.horizontalAdvance(QStringLiteral("00"))) / pixels;
        for (int c = count - 1; step < minStep && c >= 1; --c) {
            this->setTickCount(c);
            step = baseStep(range);
        }
        this->setTickCount(count);
        while (step < minStep) {
            step *= 2;
        }
        return step;
    }

  private:
    double baseStep(const QCPRange& range) { return std::max(m_floor, Base::getTickStep(range)); }

    /// The data area's width at this replot: the ticks are generated before the layout, so the
    /// last layout's width plus what the widget grew (or shrank) by since; exact when asked
    /// again after the layout (fittedTickerStale).
    int axisPixels() const {
        QCPAxisRect* rect = m_axis->axisRect();
        if (rect == nullptr) {
            return 0;
        }
        const int laidOut = rect->outerRect().width();
        const int grown = m_axis->parentPlot()->viewport().width() - laidOut;
        return rect->width() + (laidOut > 0 ? grown : 0);
    }

    QCPAxis* m_axis;
    double m_floor;
};

}  // namespace

QSharedPointer<QCPAxisTicker> makeFittedTicker(XAxisKind kind, QCPAxis* axis) {
    switch (kind) {
        case XAxisKind::WallClock: {
            // At least a second apart: QCustomPlot's date-time ticker steps below a second over
            // a short range, which labelled several ticks with the same second.
            auto* t = new FittedTicker<QCPAxisTickerDateTime>(axis, 1.0);
            t->setDateTimeFormat(QStringLiteral("HH:mm:ss"));
            t->setDateTimeSpec(Qt::LocalTime);
            return QSharedPointer<QCPAxisTicker>(t);
        }
        case XAxisKind::ElapsedSeconds: {
            auto* t = new FittedTicker<QCPAxisTickerTime>(axis, 0.0);
            t->setTimeFormat(QStringLiteral("%h:%m:%s"));
            return QSharedPointer<QCPAxisTicker>(t);
        }
        case XAxisKind::Number:
            break;
    }
    return QSharedPointer<QCPAxisTicker>(new FittedTicker<QCPAxisTicker>(axis, 0.0));
}

bool fittedTickerStale(QCPAxis* axis) {
    const auto* fitted = dynamic_cast<const Fitted*>(axis->ticker().data());
    return fitted != nullptr && axis->axisRect() != nullptr &&
           fitted->assumedPixels != axis->axisRect()->width();
}

}  // namespace runplane::gui
