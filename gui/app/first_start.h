#pragma once
// Two small dialogs of the window's edges (issue 46): the first-start question whether to create
// the history's directory (Yes is the default: Enter creates it, as the user asked for that
// history), and the About box (version, git commit, build date, a link to the user guide).
// GUI thread only.

#include <QString>

class QWidget;

namespace runplane::gui {

/// Asks `question` with Yes / No, Yes the default button. True = Yes.
bool askCreateDirectory(QWidget* parent, const QString& question);

/// The About box's rich text: "Runplane 0.1.0", the commit and build date, and a link to the
/// user guide (`userGuideUrl()`).
QString aboutText();
/// The user guide: docs/user-guide.md of the source tree the program runs from (found upwards
/// from the executable's directory) as a file URL, else the guide's path in the source tree.
QString userGuideUrl();
void showAbout(QWidget* parent);

}  // namespace runplane::gui
