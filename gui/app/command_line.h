#pragma once
// The `runplane` command line:
//   runplane [--history FILE] [--cluster NAME|FILE] [--connect ADDR]... [--alerts FILE]
//            [--report OUT_DIR (--run RUN_ID | --runs A,B,... [--baseline RUN] [--group-by KEY]
//            [--smoothing S])]
// Parsed by QCommandLineParser (no QApplication needed: parse(), not process()); errors name the
// flag. Parsing is separate from main() so it is tested without starting the GUI.

#include <QString>
#include <QStringList>

#include "common/result.h"

namespace runplane::gui {

struct AppOptions {
    QString historyPath;    // empty: the default under the user's data directory
    QStringList connect;    // daemon addresses (host:port) to connect at start
    QString cluster;        // cluster profile NAME or FILE (as `runplanectl --cluster`)
    QString alertsFile;     // alert rules file (as `runplanectl watch --alerts`); "" = default
    QString reportDir;      // non-empty: headless report mode, no window
    QString runId;          // with --report: the run's id in the history
    QStringList runIds;     // with --report: 2-10 runs to compare (--runs A,B,...)
    QString baselineRunId;  // with --runs: the baseline of the deltas (one of them; "" = the first)
    QString groupBy;        // with --runs: group the runs by "tags" or a recipe field (issue 49)
    double smoothing = -1;  // with --runs: the curves' EMA weight in [0, 1); < 0 = the default
    bool help = false;
    bool version = false;
};

/// Parses argv (arguments()[0] is the program). Errors name the flag, e.g.
/// "--history: expects a file path".
Result<AppOptions> parseCommandLine(const QStringList& arguments);
QString usageText();

/// The history file used when --history is not given.
QString defaultHistoryPath();

}  // namespace runplane::gui
