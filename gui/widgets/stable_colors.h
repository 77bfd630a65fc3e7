#pragma once
// Colours that stay (issue 46): a thing's colour follows its identity (a run's id, a memory
// component's name), never its position in a list or the order it was selected in; and text on
// a coloured cell is black or white by the background's luminance, never white on yellow.
// The rules are in docs/gui.md "Colours that stay".

#include <QColor>
#include <QString>
#include <QStringList>

#include <vector>

namespace runplane::gui {

/// The palette slot (series palette, then its lighter tints: 2 x seriesPaletteSize() slots) of
/// `key`: FNV-1a of its UTF-8 bytes, so the same key has the same slot in every process.
int stableSlot(const QString& key);
/// The colour of palette slot `slot` (slots past the palette are its lighter tints).
QColor slotColor(int slot);
/// The colours of `keys`, parallel to them: each key its stableSlot(), except that two keys of
/// the same slot are told apart (the one smaller as a string keeps it, the other takes the next
/// free slot). Depends only on the set of keys, never on their order.
std::vector<QColor> stableColors(const QStringList& keys);

/// WCAG relative luminance of `c` (0 black .. 1 white).
double relativeLuminance(const QColor& c);
/// Near-black or near-white, whichever contrasts more with `background` (WCAG contrast ratio).
QColor textColorOn(const QColor& background);

}  // namespace runplane::gui
