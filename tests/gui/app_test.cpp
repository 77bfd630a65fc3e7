// The runplane executable's command line and the headless report (--report): in-process through
// the library, and as a real child process without any display.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>

#include "db/history/history.h"
#include "gui/app/app_settings.h"
#include "gui/app/application.h"
#include "gui/app/command_line.h"
#include "gui/app/main_window.h"
#include "gui/app/report.h"
#include "gui/models/cluster_connection.h"
#include "gui/models/node_table_model.h"
#include "gui/pages/cluster_page.h"
#include "gui/pages/design_page.h"
#include "gui/pages/plot_builders.h"
#include "gui/pages/preflight_panel.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/synthetic_history.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

QStringList argv(std::initializer_list<const char*> args) {
    QStringList out{QStringLiteral("runplane")};
    for (const char* a : args) {
        out << QString::fromUtf8(a);
    }
    return out;
}

QString readAll(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        return {};
    }
    return QString::fromUtf8(f.readAll());
}

QString writeHistory(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("history.sqlite"));
    auto h = db::History::open(path.toStdString());
    EXPECT_TRUE(h) << h.error();
    test::SyntheticRunSpec spec;
    spec.recipeYaml = test::sourceRecipe("qwen3.8-2.4T-A95B-full.yaml");
    EXPECT_TRUE(test::writeSyntheticRun(**h, spec));
    return path;
}

QString runplaneBinary() {
    return test::envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/gui/app/runplane");
}

}  // namespace

TEST(CommandLine, ParsesEveryFlag) {
    auto o = parseCommandLine(argv(
        {"--history", "/tmp/h.sqlite", "--connect", "127.0.0.1:7070", "--connect=127.0.0.1:7071"}));
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->historyPath, QStringLiteral("/tmp/h.sqlite"));
    EXPECT_EQ(o->connect.size(), 2);
    EXPECT_TRUE(o->reportDir.isEmpty());
    auto r = parseCommandLine(argv({"--report", "out", "--run", "run-1"}));
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->reportDir, QStringLiteral("out"));
    EXPECT_EQ(r->runId, QStringLiteral("run-1"));
}

TEST(CommandLine, BadInputNamesTheFlag) {
    auto bad = [](std::initializer_list<const char*> args) {
        auto r = parseCommandLine(argv(args));
        EXPECT_FALSE(r);
        return r ? std::string() : r.error();
    };
    EXPECT_NE(bad({"--connect", "nowhere"}).find("--connect: 'nowhere' is not host:port"),
              std::string::npos);
    EXPECT_NE(bad({"--connect", "h:70000"}).find("--connect"), std::string::npos);
    EXPECT_NE(bad({"--history"}).find("--history: expects a file path"), std::string::npos);
    EXPECT_NE(bad({"--report", "out"}).find("--report: needs --run"), std::string::npos);
    EXPECT_NE(bad({"--run", "x"}).find("--run: is only used with --report"), std::string::npos);
    EXPECT_NE(bad({"--frobnicate"}).find("--frobnicate: unknown argument"), std::string::npos);
    // QCommandLineParser splits; a flag where a value belongs and a stray word are named.
    EXPECT_NE(bad({"--history", "--connect", "h:1"}).find("--history: expects a file path"),
              std::string::npos);
    EXPECT_NE(bad({"stray"}).find("stray: unknown argument"), std::string::npos);
    EXPECT_NE(bad({"--connect="}).find("--connect: expects an address"), std::string::npos);
    EXPECT_NE(bad({"--cluster"}).find("--cluster: expects a cluster profile NAME or FILE"),
              std::string::npos);
}

TEST(CommandLine, ClusterTakesANameOrAFile) {
    auto o = parseCommandLine(argv({"--cluster", "lab", "--connect", "127.0.0.1:7070"}));
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->cluster, QStringLiteral("lab"));
    EXPECT_EQ(o->connect.size(), 1);
    EXPECT_TRUE(usageText().contains(QStringLiteral("--cluster NAME|FILE")));
}

TEST(ClusterProfileStartup, ABadProfileStopsTheStartNamingTheFile) {
    QTemporaryDir dir;
    const QString broken = dir.filePath(QStringLiteral("broken.yaml"));
    {
        QFile f(broken);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write("nodes:\n  - address: \"127.0.0.1:7070\"\ntls:\n  kee: x.pem\n");
    }
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.filePath(QStringLiteral("config")));
    p.setProcessEnvironment(env);
    p.start(runplaneBinary(),
            {QStringLiteral("--history"), dir.filePath(QStringLiteral("h.sqlite")),
             QStringLiteral("--cluster"), broken});
    ASSERT_TRUE(p.waitForFinished(60000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    EXPECT_EQ(p.exitCode(), 2) << err.toStdString();
    EXPECT_TRUE(err.contains(QStringLiteral("runplane: --cluster: ") + broken + ":4:3"))
        << err.toStdString();
    EXPECT_TRUE(err.contains(QStringLiteral("tls.kee"))) << err.toStdString();
}

TEST(ClusterProfileStartup, TheWindowUsesTheProfileAndRemembersIt) {
    QTemporaryDir dir;
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    const QString profile = dir.filePath(QStringLiteral("local.yaml"));
    control::ClusterProfile p;
    p.nodes.push_back({"127.0.0.1:1", "a", "head"});
    p.nodes.push_back({"127.0.0.1:2", "b", ""});
    ASSERT_TRUE(writeClusterProfile(profile, p, false).ok());
    const QString history = dir.filePath(QStringLiteral("history.sqlite"));
    auto clusterPage = [](MainWindow& w) -> ClusterPage* {
        for (int i = 0; i < w.tabs()->count(); ++i) {
            if (auto* c = qobject_cast<ClusterPage*>(w.tabs()->widget(i))) {
                return c;
            }
        }
        return nullptr;
    };
    {
        auto w = createMainWindow(history, {}, profile);
        ClusterPage* c = clusterPage(*w);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(w->currentPage(), c);
        EXPECT_EQ(c->currentCluster(), profile);
        EXPECT_EQ(c->addresses(),
                  (QStringList{QStringLiteral("127.0.0.1:1"), QStringLiteral("127.0.0.1:2")}));
        EXPECT_EQ(c->model()->row(0).security, QStringLiteral("plaintext (loopback)"));
    }
    EXPECT_EQ(AppSettings().currentCluster(), profile);
    EXPECT_EQ(AppSettings().clusterFiles(), QStringList{profile});
    {
        // No --cluster: the remembered one, listed in the picker.
        auto w = createMainWindow(history, {});
        ClusterPage* c = clusterPage(*w);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->currentCluster(), profile);
        EXPECT_EQ(c->addresses().size(), 2);
        ASSERT_TRUE(c->useCluster(QString()).ok());
        EXPECT_TRUE(c->addresses().isEmpty());
    }
    EXPECT_EQ(AppSettings().currentCluster(), QString());
    setActiveClientOptions({});
    AppSettings::setFileOverride(QString());
}

// issue 47: the Cluster page's preflight is offered the Design page's recipe as it changes; the
// untouched new recipe is offered unticked, an opened or edited one ticked.
TEST(ClusterPreflightRecipe, TheDesignPagesRecipeFollowsIntoTheClusterPreflight) {
    QTemporaryDir dir;
    AppSettings::setFileOverride(dir.filePath(QStringLiteral("settings.ini")));
    auto w = createMainWindow(dir.filePath(QStringLiteral("history.sqlite")), {});
    DesignPage* design = nullptr;
    ClusterPage* cluster = nullptr;
    for (int i = 0; i < w->tabs()->count(); ++i) {
        if (auto* d = qobject_cast<DesignPage*>(w->tabs()->widget(i))) {
            design = d;
        }
        if (auto* c = qobject_cast<ClusterPage*>(w->tabs()->widget(i))) {
            cluster = c;
        }
    }
    ASSERT_NE(design, nullptr);
    ASSERT_NE(cluster, nullptr);
    QCheckBox* box = cluster->preflightPanel()->recipeCheck();
    ASSERT_TRUE(box->isEnabled());
    EXPECT_TRUE(box->text().contains(QStringLiteral("new-run (unsaved)")))
        << box->text().toStdString();
    EXPECT_FALSE(box->isChecked()) << "the untouched new recipe is not imposed on the nodes";

    const char* sourceDir = std::getenv("RUNPLANE_SOURCE_DIR");
    ASSERT_NE(sourceDir, nullptr);
    auto recipe = plan::loadRecipe(std::string(sourceDir) + "/recipes/vime-qwen3-30B-A3B-2x8.yaml");
    ASSERT_TRUE(recipe.ok()) << recipe.error();
    design->setRecipe(*recipe, QStringLiteral("use the 2x8 recipe"));
    ASSERT_TRUE(test::waitUntil(
        [&] { return box->text().contains(QStringLiteral("vime-qwen3-30B-A3B-2x8")); }, 30000))
        << box->text().toStdString();
    EXPECT_TRUE(box->text().contains(QStringLiteral("2 node(s) of 8 H100")))
        << box->text().toStdString();
    EXPECT_TRUE(box->isChecked());
    EXPECT_TRUE(cluster->preflightPanel()->usingRecipe());
    w.reset();
    AppSettings::setFileOverride(QString());
}

TEST(HistoryLocation, AMissingDirectoryIsCreatedOnlyWhenTheUserSaysSo) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("a/b/history.sqlite"));
    QString asked;
    Status no = prepareHistoryLocation(path, [&](const QString& q) {
        asked = q;
        return false;
    });
    ASSERT_FALSE(no);
    EXPECT_TRUE(asked.contains(dir.filePath(QStringLiteral("a/b"))));
    EXPECT_NE(no.error().find("not created"), std::string::npos) << no.error();
    EXPECT_FALSE(QFileInfo::exists(dir.filePath(QStringLiteral("a"))));
    ASSERT_TRUE(prepareHistoryLocation(path, [](const QString&) { return true; }));
    EXPECT_TRUE(QFileInfo(dir.filePath(QStringLiteral("a/b"))).isDir());
    EXPECT_FALSE(QFileInfo::exists(path));  // the directory only: the history opens it later
    // An existing directory is not asked about.
    bool called = false;
    EXPECT_TRUE(prepareHistoryLocation(path, [&](const QString&) { return called = true; }));
    EXPECT_FALSE(called);
}

TEST(AppSettings, RecentFilesAreDeduplicatedAndBounded) {
    AppSettings settings;  // QStandardPaths test mode: never the user's settings
    for (int i = 0; i < 15; ++i) {
        settings.addRecentFile(QStringLiteral("/r/%1.yaml").arg(i));
    }
    settings.addRecentFile(QStringLiteral("/r/3.yaml"));
    const QStringList recent = settings.recentFiles();
    EXPECT_EQ(recent.size(), AppSettings::kMaxRecentFiles);
    EXPECT_EQ(recent.front(), QStringLiteral("/r/3.yaml"));
    EXPECT_EQ(recent.count(QStringLiteral("/r/3.yaml")), 1);
    settings.setDaemonAddresses({QStringLiteral("127.0.0.1:7070")});
    EXPECT_EQ(AppSettings().daemonAddresses(), QStringList{QStringLiteral("127.0.0.1:7070")});
}

TEST(Report, WritesPlotsAndSummaryForARun) {
    QTemporaryDir dir;
    ReportRequest request;
    request.historyPath = writeHistory(dir);
    request.runId = QStringLiteral("run-synthetic-1");
    request.outDir = dir.filePath(QStringLiteral("report"));
    auto files = writeRunReport(request);
    ASSERT_TRUE(files) << files.error();
    EXPECT_EQ(files->written.size(), 5);
    const QImage host(request.outDir + QStringLiteral("/host_memory.png"));
    ASSERT_FALSE(host.isNull());
    EXPECT_EQ(host.size(), QSize(request.width, request.height));
    EXPECT_FALSE(QImage(request.outDir + QStringLiteral("/eval.png")).isNull());
    EXPECT_FALSE(QImage(request.outDir + QStringLiteral("/gpu_memory.png")).isNull());
    const QString md = readAll(files->markdown);
    // GPU memory per GPU, not only host memory: one peak row per node and GPU.
    EXPECT_TRUE(md.contains(QStringLiteral("## GPU memory per GPU"))) << md.toStdString();
    for (const char* row :
         {"| node-a | gpu.0.mem.used_bytes | ", "| node-b | gpu.3.mem.used_bytes | "}) {
        EXPECT_TRUE(md.contains(QString::fromLatin1(row))) << row << "\n" << md.toStdString();
    }
    EXPECT_TRUE(md.contains(QStringLiteral("| node-b | 900.0 GB |"))) << md.toStdString();
    EXPECT_TRUE(md.contains(QStringLiteral("eval/gsm8k")));
    EXPECT_TRUE(md.contains(QStringLiteral("**fail**")));  // NCCL 2.28.9 < 2.30.7
    EXPECT_TRUE(md.contains(QStringLiteral("time above alarm (750.0 GB)")));
    const QString html = readAll(request.outDir + QStringLiteral("/report.html"));
    EXPECT_TRUE(html.contains(QStringLiteral("<img src=\"host_memory.png\"")));
}

TEST(Report, GpuSeriesLabelsTellTheGpuFromOneProcessOnIt) {
    PointSeries gpu;
    gpu.nodeId = QStringLiteral("vm");
    gpu.name = QStringLiteral("gpu.0.mem.used_bytes");
    EXPECT_EQ(seriesLabel(gpu), QStringLiteral("vm gpu0"));
    gpu.name = QStringLiteral("gpu.3.pid.1343.mem.used_bytes");
    EXPECT_EQ(seriesLabel(gpu), QStringLiteral("vm gpu3 pid 1343"));
    gpu.name = QStringLiteral("host.mem.used_bytes");
    EXPECT_EQ(seriesLabel(gpu), QStringLiteral("vm"));
}

TEST(Report, RunsAsAChildProcessWithoutADisplay) {
    QTemporaryDir dir;
    const QString history = writeHistory(dir);
    const QString out = dir.filePath(QStringLiteral("out"));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.remove(QStringLiteral("XDG_RUNTIME_DIR"));
    p.setProcessEnvironment(env);
    p.start(runplaneBinary(), {QStringLiteral("--history"), history, QStringLiteral("--report"),
                               out, QStringLiteral("--run"), QStringLiteral("run-synthetic-1")});
    ASSERT_TRUE(p.waitForFinished(60000)) << p.errorString().toStdString();
    const QString output = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    EXPECT_EQ(p.exitCode(), 0) << output.toStdString();
    EXPECT_TRUE(QFileInfo::exists(out + QStringLiteral("/host_memory.png")));
    EXPECT_TRUE(QFileInfo::exists(out + QStringLiteral("/report.md")));
    EXPECT_TRUE(output.contains(QStringLiteral("wrote"))) << output.toStdString();
}

TEST(Report, BadInputGivesAClearMessageAndTouchesNothing) {
    QTemporaryDir dir;
    const QString history = writeHistory(dir);
    auto run = [&](const QStringList& args) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(QStringLiteral("DISPLAY"));
        env.remove(QStringLiteral("WAYLAND_DISPLAY"));
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
        p.setProcessEnvironment(env);
        p.start(runplaneBinary(), args);
        p.waitForFinished(60000);
        return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError()));
    };
    // Unknown run: names the run and the file.
    auto [code, err] = run({QStringLiteral("--history"), history, QStringLiteral("--report"),
                            dir.filePath(QStringLiteral("o1")), QStringLiteral("--run"),
                            QStringLiteral("no-such-run")});
    EXPECT_EQ(code, 1);
    EXPECT_TRUE(err.contains(QStringLiteral("no-such-run")) && err.contains(history))
        << err.toStdString();
    // A file that is not a history: named, and left byte-for-byte as it was.
    const QString corrupt = dir.filePath(QStringLiteral("corrupt.sqlite"));
    {
        QFile f(corrupt);
        ASSERT_TRUE(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(8192, 'x'));
    }
    std::tie(code, err) =
        run({QStringLiteral("--history"), corrupt, QStringLiteral("--report"),
             dir.filePath(QStringLiteral("o2")), QStringLiteral("--run"), QStringLiteral("r")});
    EXPECT_EQ(code, 1);
    EXPECT_TRUE(err.contains(corrupt)) << err.toStdString();
    EXPECT_EQ(readAll(corrupt).toUtf8(), QByteArray(8192, 'x'));
    // Missing file and bad flags.
    std::tie(code, err) =
        run({QStringLiteral("--history"), dir.filePath(QStringLiteral("none.sqlite")),
             QStringLiteral("--report"), dir.filePath(QStringLiteral("o3")),
             QStringLiteral("--run"), QStringLiteral("r")});
    EXPECT_EQ(code, 1);
    EXPECT_TRUE(err.contains(QStringLiteral("no such history file"))) << err.toStdString();
    std::tie(code, err) = run({QStringLiteral("--run"), QStringLiteral("r")});
    EXPECT_EQ(code, 2);
    EXPECT_TRUE(err.contains(QStringLiteral("--run"))) << err.toStdString();
    // No display and no --report: says what to do instead of crashing in Qt.
    std::tie(code, err) = run({});
    EXPECT_EQ(code, 2);
    EXPECT_TRUE(err.contains(QStringLiteral("--report"))) << err.toStdString();
}
