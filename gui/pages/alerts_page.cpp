#include "gui/pages/alerts_page.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <map>

#include "gui/models/serial_worker.h"
#include "gui/widgets/palette.h"

namespace runplane::gui {
namespace {

constexpr int kRefreshMs = 5000;
constexpr int kDeliveryLimit = 200;  // the newest deliveries read per refresh

QString timeText(std::int64_t ns) {
    if (ns <= 0) {
        return QStringLiteral("–");
    }
    return QDateTime::fromMSecsSinceEpoch(ns / 1000000)
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QColor stateColour(const QString& state) {
    if (state == QLatin1String("sent")) {
        return okColor();
    }
    if (state == QLatin1String("failed")) {
        return errorColor();
    }
    if (state == QLatin1String("pending")) {
        return warningColor();
    }
    return QColor(0x70, 0x70, 0x70);  // suppressed
}

QTableWidgetItem* cell(const QString& text, const QColor& colour = QColor()) {
    auto* i = new QTableWidgetItem(text);
    i->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    i->setToolTip(text);
    if (colour.isValid()) {
        i->setForeground(colour);
    }
    return i;
}

QTableWidget* makeTable(const QStringList& headers, QWidget* parent) {
    auto* t = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setWordWrap(false);
    return t;
}

void setStatus(QLabel* label, const QString& text, const QColor& colour = QColor()) {
    label->setText(text);
    label->setStyleSheet(colour.isValid() ? QStringLiteral("color: %1").arg(colour.name())
                                          : QString());
}

QString tableText(const QTableWidget* t) {
    QStringList out;
    for (int r = 0; r < t->rowCount(); ++r) {
        QStringList row;
        for (int c = 0; c < t->columnCount(); ++c) {
            const QTableWidgetItem* i = t->item(r, c);
            row << (i != nullptr ? i->text() + QStringLiteral(" ") + i->toolTip() : QString());
        }
        out << row.join(QStringLiteral(" | "));
    }
    return out.join(QLatin1Char('\n'));
}

}  // namespace

AlertsPage::AlertsPage(const QString& historyPath, const QString& alertsFile, QWidget* parent)
    : Page(parent),
      m_historyPath(historyPath),
      m_reads(std::make_unique<SerialWorker>()),
      m_sends(std::make_unique<SerialWorker>()) {
    auto* layout = new QVBoxLayout(this);
    auto* fileBar = new QHBoxLayout;
    fileBar->addWidget(new QLabel(tr("Rules file:"), this));
    m_path = new QLineEdit(alertsFile.isEmpty() ? defaultAlertsFile() : alertsFile, this);
    m_path->setToolTip(
        tr("The rules file runplanectl watch / alerts and this window's controller read "
           "(docs/alerts.md)"));
    fileBar->addWidget(m_path, 1);
    auto* reloadButton = new QPushButton(tr("Reload"), this);
    fileBar->addWidget(reloadButton);
    layout->addLayout(fileBar);
    m_fileStatus = new QLabel(this);
    m_fileStatus->setWordWrap(true);
    m_fileStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_fileStatus);

    auto* split = new QSplitter(Qt::Vertical, this);
    auto* destinations = new QWidget(split);
    auto* destinationsLayout = new QVBoxLayout(destinations);
    destinationsLayout->setContentsMargins(0, 0, 0, 0);
    auto* testBar = new QHBoxLayout;
    testBar->addWidget(new QLabel(tr("<b>Destinations</b>"), destinations));
    m_test = new QPushButton(tr("Send test"), destinations);
    m_test->setToolTip(
        tr("Send one test message to each destination and show what came back "
           "(as runplanectl alerts test)"));
    testBar->addWidget(m_test);
    m_testStatus = new QLabel(destinations);
    m_testStatus->setWordWrap(true);
    m_testStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);
    testBar->addWidget(m_testStatus, 1);
    destinationsLayout->addLayout(testBar);
    m_destinations = makeTable(
        {tr("Name"), tr("Type"), tr("Sends to"), tr("Timeout"), tr("Test result")}, destinations);
    destinationsLayout->addWidget(m_destinations, 1);

    auto* rules = new QWidget(split);
    auto* rulesLayout = new QVBoxLayout(rules);
    rulesLayout->setContentsMargins(0, 0, 0, 0);
    rulesLayout->addWidget(new QLabel(tr("<b>Rules</b>"), rules));
    m_rules =
        makeTable({tr("Rule"), tr("Matches"), tr("Runs / nodes"), tr("Min level"), tr("Rate limit"),
                   tr("Quiet"), tr("To"), tr("Deliveries"), tr("Last delivery")},
                  rules);
    rulesLayout->addWidget(m_rules, 1);

    auto* deliveries = new QWidget(split);
    auto* deliveriesLayout = new QVBoxLayout(deliveries);
    deliveriesLayout->setContentsMargins(0, 0, 0, 0);
    m_senderStatus = new QLabel(deliveries);
    m_senderStatus->setWordWrap(true);
    deliveriesLayout->addWidget(m_senderStatus);
    m_deliveriesTitle = new QLabel(deliveries);
    deliveriesLayout->addWidget(m_deliveriesTitle);
    m_deliveries =
        makeTable({tr("Queued"), tr("Rule"), tr("Destination"), tr("State"), tr("Attempts"),
                   tr("Done / next try"), tr("Event"), tr("Last result")},
                  deliveries);
    deliveriesLayout->addWidget(m_deliveries, 1);
    split->addWidget(destinations);
    split->addWidget(rules);
    split->addWidget(deliveries);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setStretchFactor(2, 2);
    layout->addWidget(split, 1);

    m_timer = new QTimer(this);
    m_timer->setInterval(kRefreshMs);
    connect(m_timer, &QTimer::timeout, this, &AlertsPage::refreshDeliveries);
    connect(reloadButton, &QPushButton::clicked, this, &AlertsPage::reload);
    connect(m_path, &QLineEdit::returnPressed, this, &AlertsPage::reload);
    connect(m_test, &QPushButton::clicked, this, &AlertsPage::sendTest);
    connect(m_rules, &QTableWidget::itemSelectionChanged, this, [this] { fillDeliveries(); });
    reload();
}

AlertsPage::~AlertsPage() = default;  // the workers join (a test send in flight ends)

void AlertsPage::setAlertsFile(const QString& path) {
    m_path->setText(path);
    reload();
}

QString AlertsPage::alertsFile() const {
    return m_path->text();
}

void AlertsPage::reload() {
    const QString path = m_path->text().trimmed();
    m_reads->run(
        QStringLiteral("config"), this, [path] { return readAlertsConfig(path); },
        [this](AlertsConfig config) { applyConfig(std::move(config)); });
    refreshDeliveries();
}

void AlertsPage::refreshDeliveries() {
    const QString history = m_historyPath;
    m_reads->run(
        QStringLiteral("status"), this,
        [history] { return readAlertsStatus(history, kDeliveryLimit); },
        [this](AlertsStatus status) { applyStatus(std::move(status)); });
}

void AlertsPage::showEvent(QShowEvent* event) {
    Page::showEvent(event);
    refreshDeliveries();
    m_timer->start();
}

void AlertsPage::hideEvent(QHideEvent* event) {
    Page::hideEvent(event);
    m_timer->stop();
}

void AlertsPage::applyConfig(AlertsConfig config) {
    ++m_configs;
    m_config = std::move(config);
    if (!m_config.exists) {
        setStatus(m_fileStatus,
                  tr("No rules file at %1: no alert is sent (docs/alerts.md shows one).")
                      .arg(m_config.path),
                  warningColor());
    } else if (!m_config.error.isEmpty()) {
        setStatus(m_fileStatus, tr("The rules file is refused: %1").arg(m_config.error),
                  errorColor());
    } else {
        setStatus(m_fileStatus, tr("%1: %2 destination(s), %3 rule(s)")
                                    .arg(m_config.path)
                                    .arg(m_config.destinations.size())
                                    .arg(m_config.rules.size()));
    }
    m_test->setEnabled(!m_testing && m_config.exists && m_config.error.isEmpty() &&
                       !m_config.destinations.empty());
    m_destinations->setRowCount(static_cast<int>(m_config.destinations.size()));
    for (std::size_t i = 0; i < m_config.destinations.size(); ++i) {
        const AlertDestinationRow& d = m_config.destinations[i];
        const int r = static_cast<int>(i);
        m_destinations->setItem(r, 0, cell(d.name));
        m_destinations->item(r, 0)->setToolTip(d.where);
        m_destinations->setItem(r, 1, cell(d.type));
        m_destinations->setItem(r, 2, cell(d.target));
        m_destinations->setItem(r, 3, cell(d.timeout));
        m_destinations->setItem(r, 4, cell(tr("not tested")));
    }
    m_destinations->resizeColumnsToContents();
    fillRules();
}

void AlertsPage::applyStatus(AlertsStatus status) {
    ++m_statuses;
    m_status = std::move(status);
    if (!m_status.historyExists) {
        setStatus(m_senderStatus, tr("No history at %1 yet: no delivery.").arg(m_historyPath));
    } else if (!m_status.error.isEmpty()) {
        setStatus(m_senderStatus, tr("Could not read the deliveries: %1").arg(m_status.error),
                  errorColor());
    } else if (m_status.olderSchema) {
        // Read, not migrated: the first sender (the GUI's controller with a rules file,
        // `runplanectl watch` or `alerts run`) upgrades it when it opens it read-write.
        setStatus(m_senderStatus,
                  tr("History %1 is at schema version %2, older than the alert tables "
                     "(version 9): no sender has run on it yet, so no delivery. It is shown as "
                     "is, not upgraded; the first sender upgrades it.")
                      .arg(m_historyPath)
                      .arg(m_status.schemaVersion));
    } else {
        const double now = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e6;
        QString sender;
        if (m_status.leaseHolder.isEmpty()) {
            sender = tr("no sender has run on this history");
        } else if (static_cast<double>(m_status.leaseUntilNs) > now) {
            sender = tr("sending: %1 (lease until %2)")
                         .arg(m_status.leaseHolder, timeText(m_status.leaseUntilNs));
        } else {
            // A sender that stopped gave its lease up (expiry 0); one that died let it lapse.
            sender =
                m_status.leaseUntilNs > 0
                    ? tr("no sender now (the last was %1; its lease lapsed at %2)")
                          .arg(m_status.leaseHolder, timeText(m_status.leaseUntilNs))
                    : tr("no sender now (the last was %1; it stopped)").arg(m_status.leaseHolder);
        }
        setStatus(m_senderStatus, tr("Sender: %1 · %2 pending · history %3")
                                      .arg(sender)
                                      .arg(m_status.pending)
                                      .arg(m_historyPath));
    }
    fillRules();
}

void AlertsPage::fillRules() {
    // Per rule: the deliveries among the newest read, counted by state, and the newest one.
    std::map<QString, std::map<QString, int>> counts;
    std::map<QString, const AlertDeliveryRow*> last;
    for (const AlertDeliveryRow& d : m_status.recent) {
        ++counts[d.rule][d.state];
        if (last.find(d.rule) == last.end()) {
            last[d.rule] = &d;  // newest first
        }
    }
    const QString selected =
        m_rules->currentRow() >= 0 && m_rules->item(m_rules->currentRow(), 0) != nullptr
            ? m_rules->item(m_rules->currentRow(), 0)->text()
            : QString();
    {
        const QSignalBlocker block(m_rules);
        m_rules->setRowCount(static_cast<int>(m_config.rules.size()));
        for (std::size_t i = 0; i < m_config.rules.size(); ++i) {
            const AlertRuleRow& rule = m_config.rules[i];
            const int r = static_cast<int>(i);
            m_rules->setItem(r, 0, cell(rule.name));
            m_rules->setItem(r, 1, cell(rule.matches));
            m_rules->setItem(r, 2, cell(rule.scope));
            m_rules->setItem(r, 3, cell(rule.minLevel));
            m_rules->setItem(r, 4, cell(rule.rateLimit));
            m_rules->setItem(r, 5, cell(rule.quiet));
            m_rules->setItem(r, 6, cell(rule.to));
            QStringList byState;
            for (const auto& [state, n] : counts[rule.name]) {
                byState << QStringLiteral("%1 %2").arg(n).arg(state);
            }
            m_rules->setItem(
                r, 7,
                cell(byState.isEmpty() ? tr("none yet") : byState.join(QStringLiteral(", "))));
            const auto it = last.find(rule.name);
            if (it == last.end()) {
                m_rules->setItem(r, 8, cell(QStringLiteral("–")));
            } else {
                const AlertDeliveryRow& d = *it->second;
                m_rules->setItem(
                    r, 8,
                    cell(d.state + QStringLiteral(" · ") + d.destination + QStringLiteral(" · ") +
                             timeText(d.createdNs) +
                             (d.result.isEmpty() ? QString() : QStringLiteral(" · ") + d.result),
                         stateColour(d.state)));
            }
            if (rule.name == selected) {
                m_rules->selectRow(r);
            }
        }
    }
    m_rules->resizeColumnsToContents();
    fillDeliveries();
}

void AlertsPage::fillDeliveries() {
    const QList<QTableWidgetItem*> chosen = m_rules->selectedItems();
    const QString rule =
        chosen.isEmpty() ? QString() : m_rules->item(chosen.front()->row(), 0)->text();
    m_deliveriesTitle->setText(
        rule.isEmpty() ? tr("<b>Last deliveries</b> (all rules; choose a rule to see its own)")
                       : tr("<b>Last deliveries of rule %1</b>").arg(rule.toHtmlEscaped()));
    std::vector<const AlertDeliveryRow*> rows;
    for (const AlertDeliveryRow& d : m_status.recent) {
        if (rule.isEmpty() || d.rule == rule) {
            rows.push_back(&d);
        }
    }
    m_deliveries->setRowCount(static_cast<int>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const AlertDeliveryRow& d = *rows[i];
        const int r = static_cast<int>(i);
        m_deliveries->setItem(r, 0, cell(timeText(d.createdNs)));
        m_deliveries->setItem(r, 1, cell(d.rule));
        m_deliveries->setItem(r, 2, cell(d.destination));
        m_deliveries->setItem(r, 3, cell(d.state, stateColour(d.state)));
        m_deliveries->setItem(r, 4, cell(QString::number(d.attempts)));
        m_deliveries->setItem(
            r, 5,
            cell(d.state == QLatin1String("pending") ? tr("next %1").arg(timeText(d.nextNs))
                                                     : timeText(d.doneNs)));
        m_deliveries->setItem(r, 6, cell(QString::number(d.eventId)));
        m_deliveries->setItem(r, 7, cell(d.result, stateColour(d.state)));
    }
    m_deliveries->resizeColumnsToContents();
}

void AlertsPage::sendTest() {
    if (m_testing) {
        return;
    }
    m_testing = true;
    m_test->setEnabled(false);
    m_test->setText(tr("Sending…"));
    setStatus(m_testStatus,
              tr("Sending a test message to %1 destination(s)…").arg(m_config.destinations.size()));
    for (int r = 0; r < m_destinations->rowCount(); ++r) {
        m_destinations->setItem(r, 4, cell(tr("sending…")));
    }
    const QString path = m_path->text().trimmed();
    m_sends->run(
        QStringLiteral("test"), this, [path] { return sendTestAlerts(path); },
        [this](AlertsTestOutcome outcome) { applyTest(std::move(outcome)); });
}

void AlertsPage::applyTest(AlertsTestOutcome outcome) {
    m_testing = false;
    ++m_tests;
    m_test->setText(tr("Send test"));
    m_test->setEnabled(m_config.exists && m_config.error.isEmpty() &&
                       !m_config.destinations.empty());
    if (!outcome.error.isEmpty()) {
        setStatus(m_testStatus, tr("Nothing sent: %1").arg(outcome.error), errorColor());
        for (int r = 0; r < m_destinations->rowCount(); ++r) {
            m_destinations->setItem(r, 4, cell(tr("not tested")));
        }
        return;
    }
    int delivered = 0;
    QStringList failed;
    for (const AlertTestRow& t : outcome.results) {
        delivered += t.delivered ? 1 : 0;
        if (!t.delivered) {
            failed << t.destination + QStringLiteral(" (") + t.result + QLatin1Char(')');
        }
        for (int r = 0; r < m_destinations->rowCount(); ++r) {
            if (m_destinations->item(r, 0)->text() != t.destination) {
                continue;
            }
            auto* c = cell((t.delivered ? tr("delivered") : tr("NOT delivered")) +
                               QStringLiteral(" · ") + t.result,
                           t.delivered ? okColor() : errorColor());
            if (!t.reply.isEmpty()) {
                c->setToolTip(tr("reply: %1").arg(t.reply));
            }
            m_destinations->setItem(r, 4, c);
        }
    }
    const QString text =
        tr("%1 of %2 destination(s) delivered the test message")
            .arg(delivered)
            .arg(outcome.results.size()) +
        (failed.isEmpty() ? QString()
                          : tr("; not delivered: %1").arg(failed.join(QStringLiteral("; "))));
    setStatus(m_testStatus, text, failed.isEmpty() ? okColor() : errorColor());
    m_destinations->resizeColumnsToContents();
}

QString AlertsPage::shownText() const {
    return QStringList{m_path->text(),         m_fileStatus->text(),      m_testStatus->text(),
                       m_senderStatus->text(), tableText(m_destinations), tableText(m_rules),
                       tableText(m_deliveries)}
        .join(QLatin1Char('\n'));
}

}  // namespace runplane::gui
