#pragma once
// Entry point of the `runplane` executable, kept out of main.cpp so that tests can drive it.

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>

#include "common/result.h"

namespace runplane::gui {

class MainWindow;

/// Before the window opens: the history file's directory must exist. When it does not, `ask`
/// is asked (the window asks with a dialog) whether to create it; nothing is created silently.
/// An error says which directory is missing and that it was not created.
Status prepareHistoryLocation(const QString& historyPath,
                              const std::function<bool(const QString& question)>& ask);

/// The main window with its four pages as `runplane` opens it, its workspace restored from
/// AppSettings (then the Cluster page when `connect` or `cluster` names daemons). `cluster`
/// (NAME or FILE, "" = the one remembered in AppSettings) picks the profile whose TLS / token
/// settings every daemon connection uses. `alertsFile` ("" = the default one) is the rules file
/// the controller sends alerts by and the Alerts page shows (--alerts). Tests build the same.
std::unique_ptr<MainWindow> createMainWindow(const QString& historyPath, const QStringList& connect,
                                             const QString& cluster = {},
                                             const QString& alertsFile = {});

/// Parses the command line, then either renders the headless report (--report) or opens the
/// main window. Returns the process exit code.
int runApplication(int argc, char** argv);

}  // namespace runplane::gui
