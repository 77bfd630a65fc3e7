#pragma once
// A message wrapped to a width, for text drawn where no layout wraps it (a plot's placeholder,
// issue 46: "Cannot reach …" ran past the Cluster page's plot at 1280×720). Each paragraph (the
// text's own '\n' breaks are kept) is broken at spaces into lines no wider than `width` px,
// greedily; a word wider than that is broken between characters. More than `maxLines` lines:
// the first maxLines, the last ending in "…". Empty text or a width/maxLines < 1: "" (nothing
// can be drawn). No GUI needed (QFontMetrics only); docs/gui.md describes it.

#include <QFontMetrics>
#include <QString>

namespace runplane::gui {

QString wrapToWidth(const QString& text, const QFontMetrics& metrics, int width, int maxLines);

}  // namespace runplane::gui
