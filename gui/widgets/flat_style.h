#pragma once
// The application's style: the platform's (Fusion here) with its scroll bars, tab-widget frames,
// header sections, tabs and line-edit frames drawn as opaque, axis-aligned rectangles.
//
// Why: Qt 6.4's raster engine blends a fill of more than 96 spans (a gradient over 96 rows, a
// one-pixel line longer than 96 pixels: its stroker emits a span per pixel) in parallel on
// QThreadPool::globalInstance(), and the painting thread sleeps until every part is done.
// Fusion draws scroll-bar grooves with gradients and frames and header sections with lines, so
// each paint of a page with tables and tabs put the GUI thread to sleep 14-25 times, waiting for
// pool threads to wake (2-12 ms per Runs page paint under load, docs/performance.md). An opaque
// solid rectangle takes the engine's direct path and never leaves the painting thread. Tabs and
// line edits, which Fusion strokes as antialiased rounded rectangles, then took half of their
// widgets' paint time (a tab bar 76 -> 43 us, a line edit 56 -> 24 us flat).

#include <QProxyStyle>

namespace runplane::gui {

class FlatStyle : public QProxyStyle {
  public:
    /// A proxy for the style named `baseStyleKey` (QStyleFactory); empty: the default style.
    explicit FlatStyle(const QString& baseStyleKey = {});

    void drawComplexControl(ComplexControl control, const QStyleOptionComplex* option,
                            QPainter* painter, const QWidget* widget = nullptr) const override;
    void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                       const QWidget* widget = nullptr) const override;
    void drawControl(ControlElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget = nullptr) const override;

  private:
    /// A tab above its pane, flat; false (nothing drawn) for other tab shapes.
    bool drawTabShape(const QStyleOption* option, QPainter* painter) const;
};

/// Sets a FlatStyle over the application's current style (so QT_STYLE_OVERRIDE still picks the
/// base); does nothing where the style is one already.
void installFlatStyle();

}  // namespace runplane::gui
