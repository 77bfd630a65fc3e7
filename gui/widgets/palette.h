#pragma once
// Colours shared by every plot and view so that a node, run or phase keeps its colour across
// pages. The series palette is Okabe–Ito plus a few extras: distinguishable for common forms of
// colour blindness and on white and dark backgrounds.

#include <QColor>
#include <QString>

namespace runplane::gui {

/// Colour for the i-th series (node, run, GPU); cycles after the palette's size.
QColor seriesColor(int index);
int seriesPaletteSize();
/// Shading colour for a phase name ("rollout", "train", "weight_sync", "load", ...).
QColor phaseColor(const QString& phase);
/// Colours for findings and alarm lines by severity.
QColor errorColor();
QColor warningColor();
QColor okColor();

}  // namespace runplane::gui
