#pragma once
// Entry point of the `runplane` executable, kept out of main.cpp so that tests can drive it.

namespace runplane::gui {

/// Parses the command line, then either renders the headless report (--report) or opens the
/// main window. Returns the process exit code.
int runApplication(int argc, char** argv);

}  // namespace runplane::gui
