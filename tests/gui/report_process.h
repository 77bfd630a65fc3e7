#pragma once
// Shared by the headless report tests (issue 49: report_baseline, report_groups): run a built
// executable (runplane --report, runplanectl compare) with no display, read a file it wrote,
// parse a `--report --runs` command line.

#include <gtest/gtest.h>

#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <utility>

#include "gui/app/command_line.h"
#include "tests/gui/gui_test_util.h"

namespace runplane::gui::test {

/// Runs $RUNPLANE_BINARY_DIR + `binary` (e.g. "/gui/app/runplane") with `args` to its end (90 s)
/// with DISPLAY, WAYLAND_DISPLAY, QT_QPA_PLATFORM and XDG_RUNTIME_DIR removed from its
/// environment; its exit code and its stdout followed by its stderr.
inline std::pair<int, QString> runHeadless(const QString& binary, const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_RUNTIME_DIR"}) {
        env.remove(QString::fromLatin1(v));
    }
    p.setProcessEnvironment(env);
    p.start(envPath("RUNPLANE_BINARY_DIR") + binary, args);
    EXPECT_TRUE(p.waitForFinished(90000)) << p.errorString().toStdString();
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError())};
}

/// The text of the file at `path` (UTF-8); "" with a failure recorded when it cannot be read.
inline QString readText(const QString& path) {
    QFile f(path);
    EXPECT_TRUE(f.open(QIODevice::ReadOnly)) << path.toStdString();
    return QString::fromUtf8(f.readAll());
}

/// parseCommandLine of `runplane --report o --runs a,b` followed by `more`.
inline Result<AppOptions> parseReportOfTwoRuns(const QStringList& more) {
    return parseCommandLine(QStringList{QStringLiteral("runplane"), QStringLiteral("--report"),
                                        QStringLiteral("o"), QStringLiteral("--runs"),
                                        QStringLiteral("a,b")} +
                            more);
}

}  // namespace runplane::gui::test
