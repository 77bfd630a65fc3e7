// main() for the GUI test binaries: a QApplication on the offscreen platform (no display
// needed) with the GUI's style (FlatStyle over Fusion), Qt's test mode for QStandardPaths/QSettings
// (never the user's real settings), then GoogleTest. Defined here, so gtest_main's main() is not
// linked in.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QStandardPaths>

#include "gui/widgets/flat_style.h"

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        qputenv("XDG_RUNTIME_DIR", QDir::tempPath().toLocal8Bit());
    }
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("RunplaneTest"));
    QApplication::setApplicationName(QStringLiteral("runplane-test"));
    runplane::gui::installFlatStyle();  // the tests see the style the GUI paints with
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
