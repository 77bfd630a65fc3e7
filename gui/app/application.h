#pragma once
// Entry point of the `runplane` executable, kept out of main.cpp so that tests can drive it.

#include <QString>
#include <QStringList>

#include <memory>

namespace runplane::gui {

class MainWindow;

/// The main window with its four pages as `runplane` opens it, its workspace restored from
/// AppSettings (then the Cluster page when `connect` names daemons). Tests build the same.
std::unique_ptr<MainWindow> createMainWindow(const QString& historyPath,
                                             const QStringList& connect);

/// Parses the command line, then either renders the headless report (--report) or opens the
/// main window. Returns the process exit code.
int runApplication(int argc, char** argv);

}  // namespace runplane::gui
