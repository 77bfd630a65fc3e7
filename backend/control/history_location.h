#pragma once
// Where the run history lives by default, shared by the CLI and the GUI.

#include <string>

namespace runplane::control {

/// $RUNPLANE_HISTORY when set and non-empty, else $XDG_DATA_HOME/runplane/history.sqlite, else
/// ~/.local/share/runplane/history.sqlite (falling back to ./history.sqlite without $HOME).
std::string defaultHistoryPath();

}  // namespace runplane::control
