#include "gui/app/command_line.h"

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
               "usage: runplane [--history FILE] [--connect ADDR]... [--report OUT_DIR (--run "
               "RUN_ID | --runs A,B,...)]\n"
               "  --history FILE     run history (SQLite); default %1\n"
               "  --connect ADDR     connect to the daemon at host:port at start (repeatable)\n"
               "  --report OUT_DIR   render a headless report for --run into OUT_DIR (no window):\n"
               "                     host memory per node, eval accuracy (PNG), report.md, "
               "report.html\n"
               "  --run RUN_ID       the run to report on (see `runplanectl runs`)\n"
               "  --runs A,B,...     with --report: compare 2-10 runs headless (eval score "
               "curves,\n"
               "                     host-memory peaks per run, recipe diff)\n"
               "  --help, --version\n")
        .arg(defaultHistoryPath());
}

QString defaultHistoryPath() {
    // The same file the CLI uses ($RUNPLANE_HISTORY, then the XDG data dir), so `runplanectl
    // submit` and the GUI agree without flags.
    return QString::fromStdString(control::defaultHistoryPath());
}

Result<AppOptions> parseCommandLine(const QStringList& arguments) {
    AppOptions options;
    for (qsizetype i = 1; i < arguments.size(); ++i) {
        const QString& arg = arguments[i];
        QString flag = arg;
        QString value;
        bool hasInlineValue = false;
        if (arg.startsWith(QLatin1String("--")) && arg.contains(QLatin1Char('='))) {
            flag = arg.left(arg.indexOf(QLatin1Char('=')));
            value = arg.mid(arg.indexOf(QLatin1Char('=')) + 1);
            hasInlineValue = true;
        }
        auto takeValue = [&]() -> std::optional<QString> {
            if (hasInlineValue) {
                return value;
            }
            if (i + 1 >= arguments.size() || arguments[i + 1].startsWith(QLatin1String("--"))) {
                return std::nullopt;
            }
            return arguments[++i];
        };
        if (flag == QLatin1String("--help") || flag == QLatin1String("-h")) {
            options.help = true;
        } else if (flag == QLatin1String("--version")) {
            options.version = true;
        } else if (flag == QLatin1String("--history")) {
            auto v = takeValue();
            if (!v || v->isEmpty()) {
                return flagError(flag, QStringLiteral("expects a file path"));
            }
            options.historyPath = *v;
        } else if (flag == QLatin1String("--connect")) {
            auto v = takeValue();
            if (!v || v->isEmpty()) {
                return flagError(flag, QStringLiteral("expects an address host:port"));
            }
            if (!validAddress(*v)) {
                return flagError(flag,
                                 QStringLiteral("'%1' is not host:port (port 1-65535)").arg(*v));
            }
            options.connect.push_back(*v);
        } else if (flag == QLatin1String("--report")) {
            auto v = takeValue();
            if (!v || v->isEmpty()) {
                return flagError(flag, QStringLiteral("expects an output directory"));
            }
            options.reportDir = *v;
        } else if (flag == QLatin1String("--run")) {
            auto v = takeValue();
            if (!v) {
                return flagError(flag, QStringLiteral("expects a run id"));
            }
            if (v->trimmed().isEmpty()) {
                return flagError(flag, QStringLiteral("expects a run id"));
            }
            options.runId = v->trimmed();
        } else if (flag == QLatin1String("--runs")) {
            auto v = takeValue();
            if (!v || v->trimmed().isEmpty()) {
                return flagError(flag, QStringLiteral("expects run ids A,B,..."));
            }
            for (const QString& id : v->split(QLatin1Char(','))) {
                if (id.trimmed().isEmpty()) {
                    return flagError(flag, QStringLiteral("'%1' has an empty run id").arg(*v));
                }
                options.runIds << id.trimmed();
            }
            if (options.runIds.size() < 2 || options.runIds.size() > 10) {
                return flagError(
                    flag,
                    QStringLiteral("compares 2 to 10 runs, got %1").arg(options.runIds.size()));
            }
        } else {
            return flagError(arg, QStringLiteral("unknown argument (see --help)"));
        }
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
