#include "gui/app/command_line.h"

#include <QCommandLineOption>
#include <QCommandLineParser>

#include <vector>

#include "backend/control/history_location.h"

namespace runplane::gui {

namespace {

Error flagError(const QString& flag, const QString& message) {
    return Error{QString(flag + QStringLiteral(": ") + message).toStdString()};
}

bool validAddress(const QString& addr) {
    const qsizetype colon = addr.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0 || colon == addr.size() - 1) {
        return false;
    }
    bool ok = false;
    const int port = addr.mid(colon + 1).toInt(&ok);
    return ok && port > 0 && port < 65536;
}

}  // namespace

QString usageText() {
    return QStringLiteral(
               "usage: runplane [--history FILE] [--cluster NAME|FILE] [--connect ADDR]... "
               "[--alerts FILE] [--report OUT_DIR (--run RUN_ID | --runs A,B,... [--baseline "
               "RUN] [--group-by KEY] [--smoothing S])]\n"
               "  --history FILE     run history (SQLite); default %1\n"
               "  --cluster NAME|FILE  connect to a cluster profile's nodes with its TLS / token\n"
               "                     settings (~/.config/runplane/clusters/NAME.yaml or FILE;\n"
               "                     the same profiles as `runplanectl --cluster`)\n"
               "  --connect ADDR     connect to the daemon at host:port at start (repeatable)\n"
               "  --alerts FILE      alert rules the controller sends by and the Alerts page\n"
               "                     shows (default ~/.config/runplane/alerts.yaml; "
               "docs/alerts.md)\n"
               "  --report OUT_DIR   render a headless report for --run into OUT_DIR (no window):\n"
               "                     host memory per node, eval accuracy (PNG), report.md, "
               "report.html\n"
               "  --run RUN_ID       the run to report on (see `runplanectl runs`)\n"
               "  --runs A,B,...     with --report: compare 2-10 runs headless (eval score "
               "curves,\n"
               "                     host-memory peaks per run, recipe diff)\n"
               "  --baseline RUN     with --runs: the run the deltas are against (default: the "
               "first)\n"
               "  --group-by KEY     with --runs: one curve per group (mean, min-max band) by\n"
               "                     \"tags\" or a recipe field that differs between the runs\n"
               "  --smoothing S      with --runs: the curves' EMA weight, 0 (none) to 0.99\n"
               "                     (default 0.6, as the Compare page)\n"
               "  --help, --version\n")
        .arg(defaultHistoryPath());
}

QString defaultHistoryPath() {
    // The same file the CLI uses ($RUNPLANE_HISTORY, then the XDG data dir), so `runplanectl
    // submit` and the GUI agree without flags.
    return QString::fromStdString(control::defaultHistoryPath());
}

Result<AppOptions> parseCommandLine(const QStringList& arguments) {
    // QCommandLineParser does the splitting ("--flag value", "--flag=value", unknown options,
    // missing values); the messages below name the flag the way the rest of Runplane does.
    QCommandLineParser parser;
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("usage"));
    const QCommandLineOption version(QStringLiteral("version"), QStringLiteral("version"));
    struct Valued {
        QCommandLineOption option;
        QString expects;
    };
    const std::vector<Valued> valued = {
        {QCommandLineOption(QStringLiteral("history"), {}, QStringLiteral("FILE")),
         QStringLiteral("expects a file path")},
        {QCommandLineOption(QStringLiteral("cluster"), {}, QStringLiteral("NAME|FILE")),
         QStringLiteral("expects a cluster profile NAME or FILE")},
        {QCommandLineOption(QStringLiteral("connect"), {}, QStringLiteral("ADDR")),
         QStringLiteral("expects an address host:port")},
        {QCommandLineOption(QStringLiteral("alerts"), {}, QStringLiteral("FILE")),
         QStringLiteral("expects an alert rules file path")},
        {QCommandLineOption(QStringLiteral("report"), {}, QStringLiteral("OUT_DIR")),
         QStringLiteral("expects an output directory")},
        {QCommandLineOption(QStringLiteral("run"), {}, QStringLiteral("RUN_ID")),
         QStringLiteral("expects a run id")},
        {QCommandLineOption(QStringLiteral("runs"), {}, QStringLiteral("A,B,...")),
         QStringLiteral("expects run ids A,B,...")},
        {QCommandLineOption(QStringLiteral("baseline"), {}, QStringLiteral("RUN")),
         QStringLiteral("expects a run id (one of --runs)")},
        {QCommandLineOption(QStringLiteral("group-by"), {}, QStringLiteral("KEY")),
         QStringLiteral("expects \"tags\" or a recipe field")},
        {QCommandLineOption(QStringLiteral("smoothing"), {}, QStringLiteral("S")),
         QStringLiteral("expects a number from 0 to 0.99")},
    };
    parser.addOption(help);
    parser.addOption(version);
    for (const Valued& v : valued) {
        parser.addOption(v.option);
    }
    auto expects = [&](const QString& name) {
        for (const Valued& v : valued) {
            if (v.option.names().contains(name)) {
                return v.expects;
            }
        }
        return QStringLiteral("expects a value");
    };
    if (!parser.parse(arguments)) {
        if (!parser.unknownOptionNames().isEmpty()) {
            const QString name = parser.unknownOptionNames().front();
            return flagError((name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + name,
                             QStringLiteral("unknown argument (see --help)"));
        }
        // "Missing value after '--history'."
        const QString text = parser.errorText();
        const qsizetype open = text.indexOf(QLatin1Char('\''));
        const qsizetype close = text.lastIndexOf(QLatin1Char('\''));
        if (open >= 0 && close > open) {
            const QString flag = text.mid(open + 1, close - open - 1);
            QString name = flag;
            while (name.startsWith(QLatin1Char('-'))) {
                name.remove(0, 1);
            }
            return flagError(flag, expects(name));
        }
        return Error{text.toStdString()};
    }
    AppOptions options;
    options.help = parser.isSet(help);
    options.version = parser.isSet(version);
    // A value that is itself a flag ("--history --connect x") is a missing value.
    auto valueOf = [&](const char* name, QString* out) -> Status {
        const QString key = QString::fromLatin1(name);
        const QString v = parser.value(key);
        if (v.isEmpty() || v.startsWith(QLatin1String("--"))) {
            return flagError(QStringLiteral("--") + key, expects(key));
        }
        *out = v;
        return {};
    };
    if (parser.isSet(QStringLiteral("history"))) {
        if (Status st = valueOf("history", &options.historyPath); !st) {
            return Error{st.error()};
        }
    }
    if (parser.isSet(QStringLiteral("cluster"))) {
        if (Status st = valueOf("cluster", &options.cluster); !st) {
            return Error{st.error()};
        }
    }
    if (parser.isSet(QStringLiteral("alerts"))) {
        if (Status st = valueOf("alerts", &options.alertsFile); !st) {
            return Error{st.error()};
        }
    }
    for (const QString& address : parser.values(QStringLiteral("connect"))) {
        if (address.isEmpty() || address.startsWith(QLatin1String("--"))) {
            return flagError(QStringLiteral("--connect"), expects(QStringLiteral("connect")));
        }
        if (!validAddress(address)) {
            return flagError(QStringLiteral("--connect"),
                             QStringLiteral("'%1' is not host:port (port 1-65535)").arg(address));
        }
        options.connect.push_back(address);
    }
    if (parser.isSet(QStringLiteral("report"))) {
        if (Status st = valueOf("report", &options.reportDir); !st) {
            return Error{st.error()};
        }
    }
    if (parser.isSet(QStringLiteral("run"))) {
        QString run;
        if (Status st = valueOf("run", &run); !st || run.trimmed().isEmpty()) {
            return flagError(QStringLiteral("--run"), expects(QStringLiteral("run")));
        }
        options.runId = run.trimmed();
    }
    if (parser.isSet(QStringLiteral("runs"))) {
        QString list;
        if (Status st = valueOf("runs", &list); !st || list.trimmed().isEmpty()) {
            return flagError(QStringLiteral("--runs"), expects(QStringLiteral("runs")));
        }
        for (const QString& id : list.split(QLatin1Char(','))) {
            if (id.trimmed().isEmpty()) {
                return flagError(QStringLiteral("--runs"),
                                 QStringLiteral("'%1' has an empty run id").arg(list));
            }
            options.runIds << id.trimmed();
        }
        if (options.runIds.size() < 2 || options.runIds.size() > 10) {
            return flagError(
                QStringLiteral("--runs"),
                QStringLiteral("compares 2 to 10 runs, got %1").arg(options.runIds.size()));
        }
    }
    if (parser.isSet(QStringLiteral("baseline"))) {
        QString run;
        if (Status st = valueOf("baseline", &run); !st || run.trimmed().isEmpty()) {
            return flagError(QStringLiteral("--baseline"), expects(QStringLiteral("baseline")));
        }
        options.baselineRunId = run.trimmed();
        if (options.runIds.isEmpty()) {
            return flagError(QStringLiteral("--baseline"),
                             QStringLiteral("is only used with --report OUT_DIR --runs A,B,..."));
        }
        if (!options.runIds.contains(options.baselineRunId)) {
            return flagError(
                QStringLiteral("--baseline"),
                QStringLiteral("'%1' is not one of --runs %2")
                    .arg(options.baselineRunId, options.runIds.join(QLatin1Char(','))));
        }
    }
    if (parser.isSet(QStringLiteral("group-by"))) {
        QString key;
        if (Status st = valueOf("group-by", &key); !st || key.trimmed().isEmpty()) {
            return flagError(QStringLiteral("--group-by"), expects(QStringLiteral("group-by")));
        }
        options.groupBy = key.trimmed();
        if (options.runIds.isEmpty()) {
            return flagError(QStringLiteral("--group-by"),
                             QStringLiteral("is only used with --report OUT_DIR --runs A,B,..."));
        }
    }
    if (parser.isSet(QStringLiteral("smoothing"))) {
        QString text;
        bool number = false;
        if (Status st = valueOf("smoothing", &text); st) {
            options.smoothing = text.trimmed().toDouble(&number);
        }
        // 1 would be a flat line at the first point: the Compare page's slider stops at 0.99
        if (!number || !(options.smoothing >= 0 && options.smoothing <= 0.99)) {
            return flagError(QStringLiteral("--smoothing"), expects(QStringLiteral("smoothing")));
        }
        if (options.runIds.isEmpty()) {
            return flagError(QStringLiteral("--smoothing"),
                             QStringLiteral("is only used with --report OUT_DIR --runs A,B,..."));
        }
    }
    // After the values: "--history --connect h:1" is a missing value, not a stray "h:1".
    if (!parser.positionalArguments().isEmpty()) {
        return flagError(parser.positionalArguments().front(),
                         QStringLiteral("unknown argument (see --help)"));
    }
    if (!options.runId.isEmpty() && !options.runIds.isEmpty()) {
        return flagError(QStringLiteral("--runs"), QStringLiteral("cannot be used with --run"));
    }
    if (!options.reportDir.isEmpty() && options.runId.isEmpty() && options.runIds.isEmpty()) {
        return flagError(QStringLiteral("--report"),
                         QStringLiteral("needs --run RUN_ID (or --runs A,B,... to compare)"));
    }
    if (options.reportDir.isEmpty() && !options.runId.isEmpty()) {
        return flagError(QStringLiteral("--run"),
                         QStringLiteral("is only used with --report OUT_DIR"));
    }
    if (options.reportDir.isEmpty() && !options.runIds.isEmpty()) {
        return flagError(QStringLiteral("--runs"),
                         QStringLiteral("is only used with --report OUT_DIR"));
    }
    return options;
}

}  // namespace runplane::gui
