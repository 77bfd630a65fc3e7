#include "gui/app/report_diagnosis.h"

#include <QDateTime>
#include <QStringList>

#include "gui/app/report_text.h"

namespace runplane::gui {
namespace {

QString utcTime(std::int64_t tNs) {
    return QDateTime::fromMSecsSinceEpoch(tNs / 1000000, Qt::UTC)
               .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) +
           QStringLiteral(" UTC");
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// The first members of a stack group ("rank 3 (pid 812 on gpu-a), ..., and 60 more").
QString memberList(const std::vector<std::string>& members) {
    constexpr std::size_t kShown = 4;
    QStringList shown;
    for (std::size_t i = 0; i < members.size() && i < kShown; ++i) {
        shown << qs(members[i]);
    }
    QString s = shown.join(QStringLiteral(", "));
    if (members.size() > kShown) {
        s += QStringLiteral(", and %1 more").arg(members.size() - kShown);
    }
    return s;
}

}  // namespace

ReportSection diagnosisSection(const StoredDiagnoses& stored) {
    ReportSection out;
    out.markdown = QStringLiteral("\n## Diagnosis\n\n");
    out.html = QStringLiteral("<h2>Diagnosis</h2>\n");
    if (!stored.error.isEmpty()) {
        const QString text =
            QStringLiteral("The stored diagnoses could not be read: ") + stored.error;
        out.markdown += text + QLatin1Char('\n');
        out.html += QStringLiteral("<p>") + text.toHtmlEscaped() + QStringLiteral("</p>\n");
        return out;
    }
    if (stored.items.empty()) {
        out.markdown += QStringLiteral("none: no diagnosis is stored with this run.\n");
        out.html += QStringLiteral("<p>none: no diagnosis is stored with this run.</p>\n");
        return out;
    }
    ReportTable list{{QStringLiteral("id"), QStringLiteral("when"), QStringLiteral("trigger"),
                      QStringLiteral("nodes"), QStringLiteral("verdict")},
                     {}};
    for (const StoredDiagnosis& d : stored.items) {
        list.rows.push_back({QString::number(d.id), utcTime(d.tNs), d.trigger,
                             QString::number(d.diagnosis.nodes.size()), d.headline});
    }
    out.markdown +=
        QStringLiteral("%1 stored, newest first.\n\n").arg(stored.items.size()) + list.markdown();
    out.html +=
        QStringLiteral("<p>%1 stored, newest first.</p>\n").arg(stored.items.size()) + list.html();
    for (const StoredDiagnosis& d : stored.items) {
        const QString title = QStringLiteral("Diagnosis %1 (%2, %3)")
                                  .arg(QString::number(d.id), d.trigger, utcTime(d.tNs));
        out.markdown += QStringLiteral("\n### ") + title + QStringLiteral("\n\n**Verdict:** ") +
                        d.headline + QStringLiteral("\n\n");
        out.html += QStringLiteral("<h3>") + title.toHtmlEscaped() +
                    QStringLiteral("</h3>\n<p><b>Verdict:</b> ") + d.headline.toHtmlEscaped() +
                    QStringLiteral("</p>\n");
        if (!d.parseError.isEmpty()) {
            out.markdown +=
                QStringLiteral("Evidence not readable: ") + d.parseError + QLatin1Char('\n');
            out.html += QStringLiteral("<p>Evidence not readable: ") +
                        d.parseError.toHtmlEscaped() + QStringLiteral("</p>\n");
            continue;
        }
        ReportTable evidence{{QStringLiteral("evidence"), QStringLiteral("finding")}, {}};
        for (const auto& f : d.diagnosis.verdict.findings) {
            evidence.rows.push_back({qs(f.kind), qs(f.text)});
        }
        for (const auto& g : d.diagnosis.verdict.stackGroups) {
            evidence.rows.push_back({QStringLiteral("stack group"),
                                     QStringLiteral("%1 process(es) in %2 (%3): %4")
                                         .arg(g.members.size())
                                         .arg(qs(g.frame), qs(g.file), memberList(g.members))});
        }
        out.markdown += evidence.markdown();
        out.html += evidence.html();
    }
    return out;
}

ReportSection diagnosisSummarySection(const std::vector<StoredDiagnoses>& runs) {
    ReportTable table{
        {QStringLiteral("run"), QStringLiteral("stored"), QStringLiteral("newest verdict"),
         QStringLiteral("trigger"), QStringLiteral("when")},
        {}};
    for (const StoredDiagnoses& r : runs) {
        if (!r.error.isEmpty()) {
            table.rows.push_back({r.runId, QStringLiteral("?"),
                                  QStringLiteral("not readable: ") + r.error, QString(),
                                  QString()});
        } else if (r.items.empty()) {
            table.rows.push_back({r.runId, QStringLiteral("0"), QStringLiteral("none"),
                                  QStringLiteral("–"), QStringLiteral("–")});
        } else {
            const StoredDiagnosis& newest = r.items.front();
            table.rows.push_back({r.runId, QString::number(r.items.size()), newest.headline,
                                  newest.trigger, utcTime(newest.tNs)});
        }
    }
    ReportSection out;
    out.markdown = QStringLiteral("\n## Diagnoses\n\n") + table.markdown();
    out.html = QStringLiteral("<h2>Diagnoses</h2>\n") + table.html();
    return out;
}

}  // namespace runplane::gui
