#include "gui/widgets/invalid_banner.h"

namespace runplane::gui {

InvalidBanner::InvalidBanner(QWidget* parent) : QLabel(parent) {
    setObjectName(QStringLiteral("invalidBanner"));
    setWordWrap(true);
    // Never taller than its text: the chart or preview below takes the rest (issue 46; was half
    // of a memory chart). Only the vertical policy changes (height-for-width stays on).
    QSizePolicy policy = sizePolicy();
    policy.setVerticalPolicy(QSizePolicy::Maximum);
    setSizePolicy(policy);
    setTextFormat(Qt::PlainText);
    // Dark text on a pale red band with a red edge: readable, and unlike any data colour.
    setStyleSheet(
        QStringLiteral("QLabel#invalidBanner { background: #ffebee; color: #b71c1c; "
                       "border: 1px solid #c62828; border-left: 6px solid #c62828; "
                       "padding: 4px 8px; font-weight: bold; }"));
    setVisible(false);
}

void InvalidBanner::setReason(const QString& reason) {
    m_reason = reason;
    setText(reason.isEmpty() ? QString() : QStringLiteral("\u26a0 ") + reason);
    setToolTip(reason);
    setVisible(!reason.isEmpty());
}

}  // namespace runplane::gui
