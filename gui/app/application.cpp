#include "gui/app/application.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMessageBox>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/build_info.h"
#include "common/thread_role.h"
#include "gui/app/app_settings.h"
#include "gui/app/command_line.h"
#include "gui/app/compare_report.h"
#include "gui/app/first_start.h"
#include "gui/app/main_window.h"
#include "gui/app/report.h"
#include "gui/models/alerts_data.h"
#include "gui/models/cluster_connection.h"
#include "gui/pages/alerts_page.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/compare_page.h"
#include "gui/pages/design_page.h"
#include "gui/pages/preflight_panel.h"
#include "gui/pages/runs_page.h"
#include "gui/widgets/flat_style.h"

namespace runplane::gui {

namespace {

void printErr(const QString& text) {
    std::fputs(text.toLocal8Bit().constData(), stderr);
    std::fputc('\n', stderr);
}

bool haveDisplay() {
    return !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
           !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

int runCompareReport(const AppOptions& options, const QString& historyPath) {
    CompareReportRequest request;
    request.historyPath = historyPath;
    request.runIds = options.runIds;
    request.baselineRunId = options.baselineRunId;
    request.groupBy = options.groupBy;
    if (options.smoothing >= 0) {
        request.smoothing = options.smoothing;
    }
    request.outDir = options.reportDir;
    auto files = writeCompareReport(request);
    if (!files) {
        printErr(QStringLiteral("runplane --report: ") + QString::fromStdString(files.error()));
        return 1;
    }
    for (const QString& f : files->written) {
        std::printf("wrote %s\n", QDir::toNativeSeparators(f).toLocal8Bit().constData());
    }
    return 0;
}

int runReport(const AppOptions& options, const QString& historyPath) {
    if (!options.runIds.isEmpty()) {
        return runCompareReport(options, historyPath);
    }
    ReportRequest request;
    request.historyPath = historyPath;
    request.runId = options.runId;
    request.outDir = options.reportDir;
    auto files = writeRunReport(request);
    if (!files) {
        printErr(QStringLiteral("runplane --report: ") + QString::fromStdString(files.error()));
        return 1;
    }
    for (const QString& f : files->written) {
        std::printf("wrote %s\n", QDir::toNativeSeparators(f).toLocal8Bit().constData());
    }
    return 0;
}

// Whether XDG_RUNTIME_DIR names a directory Qt accepts: ours, mode 0700 exactly. Anything else
// (unset, /tmp with 0777, another user's) makes QStandardPaths warn on every use.
bool runtimeDirIsPrivate() {
    const QByteArray value = qgetenv("XDG_RUNTIME_DIR");
    if (value.isEmpty()) {
        return false;
    }
    struct stat st {};
    if (::stat(value.constData(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return false;
    }
    return st.st_uid == ::getuid() && (st.st_mode & 0777) == 0700;
}

void ensureRuntimeDir() {
    if (runtimeDirIsPrivate()) {
        return;
    }
    // Qt wants a private (0700) runtime directory; /tmp itself is 0777.
    const QString dir = QDir::tempPath() + QStringLiteral("/runplane-runtime-") +
                        QString::number(static_cast<qulonglong>(::getuid()));
    QDir().mkpath(dir);
    QFile::setPermissions(dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    qputenv("XDG_RUNTIME_DIR", dir.toLocal8Bit());
}

}  // namespace

Status prepareHistoryLocation(const QString& historyPath,
                              const std::function<bool(const QString& question)>& ask) {
    const QString dir = QFileInfo(historyPath).absolutePath();
    if (QFileInfo(dir).isDir()) {
        return {};
    }
    const QString question =
        QObject::tr(
            "The run history %1 does not exist, and neither does its directory %2.\n\n"
            "Create the directory (the history starts empty)?")
            .arg(historyPath, dir);
    if (!ask || !ask(question)) {
        return Error{QObject::tr("%1: the directory %2 does not exist (not created)")
                         .arg(historyPath, dir)
                         .toStdString()};
    }
    if (!QDir().mkpath(dir)) {
        return Error{
            QObject::tr("%1: cannot create the directory %2").arg(historyPath, dir).toStdString()};
    }
    return {};
}

std::unique_ptr<MainWindow> createMainWindow(const QString& historyPath, const QStringList& connect,
                                             const QString& clusterProfile,
                                             const QString& alertsFile) {
    AppSettings settings;
    auto window = std::make_unique<MainWindow>(historyPath);
    auto* design = new DesignPage;
    design->setRecentFiles(settings.recentFiles());
    QObject::connect(design, &DesignPage::recentFileUsed, design, [design](const QString& path) {
        AppSettings s;
        s.addRecentFile(path);
        design->setRecentFiles(s.recentFiles());
    });
    window->addPage(design, QObject::tr("Design"));
    auto* cluster = new ClusterPage(historyPath, alertsFile);
    window->addPage(cluster, QObject::tr("Cluster"));
    window->addPage(new RunsPage(historyPath), QObject::tr("Runs"));
    window->addPage(new ComparePage(historyPath), QObject::tr("Compare"));
    window->addPage(new AlertsPage(historyPath, alertsFile), QObject::tr("Alerts"));  // issue 48
    // issue 47: the Cluster page's preflight asks what the open recipe places on each node; an
    // untouched new recipe is offered but not ticked.
    auto shareRecipe = [design, cluster] {
        const QString path = design->path();
        cluster->preflightPanel()->setRecipe(
            design->recipe(), path.isEmpty() ? QObject::tr("unsaved") : QFileInfo(path).fileName(),
            !path.isEmpty() || design->isModified());
    };
    QObject::connect(design, &DesignPage::planUpdated, cluster, shareRecipe);
    shareRecipe();
    cluster->setExtraClusters(settings.clusterFiles());
    QObject::connect(cluster, &ClusterPage::clusterChanged, window.get(),
                     [](const QString& nameOrFile) {
                         AppSettings s;
                         s.setCurrentCluster(nameOrFile);
                         if (nameOrFile.contains(QLatin1Char('/'))) {
                             s.addClusterFile(nameOrFile);
                         }
                     });
    // A cluster profile first (its TLS / token settings apply to every address added after).
    bool haveCluster = false;
    if (!clusterProfile.isEmpty()) {
        haveCluster = cluster->useCluster(clusterProfile).ok();
    } else if (const QString saved = settings.currentCluster(); !saved.isEmpty()) {
        haveCluster = cluster->useCluster(saved).ok();  // failure: a status message, no cluster
    }
    QStringList addresses = connect;
    if (addresses.isEmpty() && !haveCluster) {
        addresses = settings.daemonAddresses();
    }
    for (const QString& address : addresses) {
        cluster->addAddress(address);
    }
    QObject::connect(cluster, &ClusterPage::addressesChanged, window.get(),
                     [](const QStringList& list) { AppSettings().setDaemonAddresses(list); });
    window->setCurrentPage(QObject::tr("Design"));
    window->restoreWorkspace();
    if (!connect.isEmpty() || !clusterProfile.isEmpty()) {
        window->setCurrentPage(QObject::tr("Cluster"));
    }
    return window;
}

int runApplication(int argc, char** argv) {
    // Parse first: --help, --version and bad flags need no display.
    QStringList arguments;
    for (int i = 0; i < argc; ++i) {
        arguments << QString::fromLocal8Bit(argv[i]);
    }
    auto parsed = parseCommandLine(arguments);
    if (!parsed) {
        printErr(QStringLiteral("runplane: ") + QString::fromStdString(parsed.error()));
        printErr(usageText());
        return 2;
    }
    const AppOptions& options = *parsed;
    if (options.help) {
        std::fputs(usageText().toLocal8Bit().constData(), stdout);
        return 0;
    }
    if (options.version) {
        std::printf("%s\n", runplane::versionLine("runplane").c_str());
        return 0;
    }
    const bool headless = !options.reportDir.isEmpty();
    if (headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");  // no window: never needs a display
    }
    if (!headless && !haveDisplay()) {
        std::fputs(
            "runplane: no display (DISPLAY / WAYLAND_DISPLAY are unset). For a headless report "
            "use `runplane --report OUT_DIR --run RUN_ID`, or set QT_QPA_PLATFORM=offscreen.\n",
            stderr);
        return 2;
    }
    ensureRuntimeDir();
    // Before any page starts its ingest, writer or reader threads: they run below the GUI thread
    // so that a paint does not wait for a core behind them (common/thread_role.h).
    threads::setBackgroundNice(threads::kGuiBackgroundNice);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Runplane"));
    QApplication::setApplicationName(QStringLiteral("runplane"));
    QApplication::setApplicationVersion(QString::fromLatin1(runplane::buildInfo().version));
    installFlatStyle();  // paints never wait on Qt's thread pool (gui/widgets/flat_style.h)

    QString historyPath = options.historyPath;
    if (historyPath.isEmpty()) {
        historyPath = defaultHistoryPath();
    }
    historyPath = QFileInfo(historyPath).absoluteFilePath();
    if (headless) {
        return runReport(options, historyPath);
    }
    const Status location = prepareHistoryLocation(historyPath, [](const QString& question) {
        return askCreateDirectory(nullptr, question);  // Yes is the default (issue 46)
    });
    if (!location) {
        printErr(QStringLiteral("runplane: --history: ") +
                 QString::fromStdString(location.error()));
        return 1;
    }

    QString clusterProfile = options.cluster;
    if (!clusterProfile.isEmpty()) {
        // A bad profile is a start-up error naming the file, line and field (or the token file).
        auto loaded = loadClusterConnection(clusterProfile);
        if (!loaded) {
            printErr(QStringLiteral("runplane: --cluster: ") +
                     QString::fromStdString(loaded.error()));
            return 2;
        }
        if (clusterProfile.contains(QLatin1Char('/')) ||
            clusterProfile.endsWith(QLatin1String(".yaml"))) {
            clusterProfile = QString::fromStdString(loaded->profile.path);  // absolute
        }
    }
    QString alertsFile = options.alertsFile;
    if (!alertsFile.isEmpty()) {
        // A rules file given but missing or wrong is a start-up error naming file:line:col, as
        // `runplanectl watch --alerts` (the default file may be absent: nothing is sent).
        alertsFile = QFileInfo(alertsFile).absoluteFilePath();
        const AlertsConfig rules = readAlertsConfig(alertsFile);
        if (!rules.exists) {
            printErr(QStringLiteral("runplane: --alerts: %1: no such file").arg(alertsFile));
            return 2;
        }
        if (!rules.error.isEmpty()) {
            printErr(QStringLiteral("runplane: --alerts: ") + rules.error);
            return 2;
        }
    }
    AppSettings().setLastHistoryPath(historyPath);
    std::unique_ptr<MainWindow> window =
        createMainWindow(historyPath, options.connect, clusterProfile, alertsFile);
    window->show();
    return QApplication::exec();
}

}  // namespace runplane::gui
