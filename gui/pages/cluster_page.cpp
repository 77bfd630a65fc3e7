#include "gui/pages/cluster_page.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "db/history/history.h"
#include "gui/models/cluster_connection.h"
#include "gui/models/cluster_service.h"
#include "gui/models/daemon_memory.h"
#include "gui/models/history_queries.h"
#include "gui/models/history_reader.h"
#include "gui/models/node_table_model.h"
#include "gui/models/run_derivations.h"
#include "gui/pages/add_cluster_dialog.h"
#include "gui/pages/cluster_roles_panel.h"
#include "gui/pages/fit_columns.h"
#include "gui/pages/node_oom_alerts.h"
#include "gui/pages/plot_builders.h"
#include "gui/pages/preflight_panel.h"
#include "gui/pages/ray_membership_panel.h"
#include "gui/widgets/cached_text_delegate.h"
#include "gui/widgets/grip_splitter.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {

constexpr int kRefreshMs = 1000;
constexpr int kLayoutMs = 1000;
// Rows of the node table kept on screen at any window size (issue 46).
constexpr int kTableRows = 6;

QString triggerText(const QString& trigger) {
    if (trigger == QLatin1String("stall")) {
        return ClusterPage::tr("it stalled");
    }
    if (trigger == QLatin1String("failed")) {
        return ClusterPage::tr("it failed");
    }
    return trigger;
}

double nowSeconds() {
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) * 1e-3;
}

bool looksLikeAddress(const QString& address) {
    const qsizetype colon = address.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0) {
        return false;
    }
    bool ok = false;
    const int port = address.mid(colon + 1).toInt(&ok);
    return ok && port > 0 && port < 65536;
}

}  // namespace

ClusterPage::ClusterPage(const QString& historyPath, const QString& alertsFile, QWidget* parent)
    : Page(parent),
      m_service(std::make_unique<ClusterService>(historyPath, alertsFile)),
      m_reader(std::make_unique<HistoryReader>(historyPath)) {
    m_model = new NodeTableModel(this);

    auto* layout = new QVBoxLayout(this);
    auto* clusterBar = new QHBoxLayout;
    clusterBar->addWidget(new QLabel(tr("Cluster:"), this));
    m_clusterCombo = new QComboBox(this);
    m_clusterCombo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_clusterCombo->setToolTip(
        tr("Cluster profiles (%1/NAME.yaml, the same as `runplanectl --cluster NAME`)")
            .arg(QString::fromStdString(control::clusterProfileDir())));
    clusterBar->addWidget(m_clusterCombo);
    m_addClusterButton = new QPushButton(tr("Add cluster…"), this);
    clusterBar->addWidget(m_addClusterButton);
    m_clusterInfo = new QLabel(this);
    m_clusterInfo->setTextInteractionFlags(Qt::TextSelectableByMouse);
    clusterBar->addWidget(m_clusterInfo, 1);
    layout->addLayout(clusterBar);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Daemon address:"), this));
    m_addressEdit = new QLineEdit(this);
    m_addressEdit->setPlaceholderText(tr("host:port, e.g. 127.0.0.1:7070"));
    m_addressEdit->setClearButtonEnabled(true);
    bar->addWidget(m_addressEdit, 1);
    m_addButton = new QPushButton(tr("Add"), this);
    m_removeButton = new QPushButton(tr("Remove selected"), this);
    m_removeButton->setEnabled(false);
    bar->addWidget(m_addButton);
    bar->addWidget(m_removeButton);
    layout->addLayout(bar);

    // issue 46: at 1280x720 the node table showed two rows under four stacked boxes. The table
    // keeps six rows; memory by role, Ray membership and preflight share one tab box under the
    // plot; every handle can be seen and grabbed (GripSplitter).
    auto* splitter = new GripSplitter(Qt::Vertical, this);
    m_table = new QTableView(splitter);
    m_table->setModel(m_model);
    m_table->setItemDelegate(new CachedTextDelegate(m_table));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setMinimumHeight(m_table->horizontalHeader()->sizeHint().height() +
                              kTableRows * m_table->verticalHeader()->defaultSectionSize() +
                              2 * m_table->frameWidth());
    m_plot = new TimeSeriesPlot(splitter);
    m_plot->setTitle(tr("Host memory used per node (live, from the history)"));
    m_plot->setXAxisKind(XAxisKind::WallClock);
    m_plot->setFollowWindow(m_followWindow);
    m_plot->setPlaceholder(tr("Add a daemon address to see its host memory"));
    auto* boxes = new QTabWidget(splitter);
    boxes->setDocumentMode(true);
    m_roles = new ClusterRolesPanel(boxes);
    boxes->addTab(m_roles, tr("Memory by role"));
    // issue 47: which Ray cluster each node joined, asked on demand (ray_membership_panel.h)
    m_membership = new RayMembershipPanel(boxes);
    boxes->addTab(m_membership, tr("Ray membership"));
    connect(m_membership, &RayMembershipPanel::checkRequested, this,
            [this] { m_membership->refresh(addresses(), m_service->clientOptions()); });
    // issue 47: every node's preflight row (interfaces, MASTER_ADDR, GPU UUIDs), asked on demand
    m_preflight = new PreflightPanel(boxes);
    boxes->addTab(m_preflight, tr("Preflight"));
    connect(m_preflight, &PreflightPanel::checkRequested, this,
            [this] { m_preflight->refresh(addresses(), m_service->clientOptions()); });
    splitter->addWidget(m_table);
    splitter->addWidget(m_plot);
    splitter->addWidget(boxes);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    splitter->setStretchFactor(2, 2);
    layout->addWidget(splitter, 1);
    m_oomPanel = new NodeOomPanel(this);
    layout->addWidget(m_oomPanel);
    m_summary = new QLabel(this);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);

    connect(m_addButton, &QPushButton::clicked, this, [this] {
        if (addAddress(m_addressEdit->text())) {
            m_addressEdit->clear();
        }
    });
    connect(m_addressEdit, &QLineEdit::returnPressed, m_addButton, &QPushButton::click);
    connect(m_removeButton, &QPushButton::clicked, this, &ClusterPage::removeSelected);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { m_removeButton->setEnabled(m_table->selectionModel()->hasSelection()); });

    connect(m_service.get(), &ClusterService::nodeChanged, this, &ClusterPage::onNodeChanged);
    connect(m_service.get(), &ClusterService::nodeRemoved, this, [this](const QString& address) {
        m_model->remove(address);
        requestPlotData();
    });
    connect(m_service.get(), &ClusterService::errorOccurred, this,
            [this](const QString& address, const QString& message) {
                NodeRow row;
                row.address = address;
                row.state = QStringLiteral("failed");
                row.error = message;
                row.security = m_service->securityOf(address);
                if (m_model->indexOf(address) >= 0) {
                    m_model->upsert(row);
                }
                emit statusMessage(message);
                requestPlotData();
            });
    connect(m_service.get(), &ClusterService::memorySample, m_model,
            &NodeTableModel::setMemoryUsed);
    // The controller's own diagnoses (issue #44): the verdict in the status bar; the Runs page
    // reads it back from the history (its Diagnosis column, the run header, the Diagnosis tab).
    connect(m_service.get(), &ClusterService::diagnosisStarted, this,
            [this](const QString& runId, const QString& trigger, const QString& why) {
                emit statusMessage(
                    why.isEmpty()
                        ? tr("Run %1: %2; diagnosing its nodes").arg(runId, triggerText(trigger))
                        : tr("Run %1: %2; diagnosing its nodes").arg(runId, why));
            });
    connect(m_service.get(), &ClusterService::runDiagnosed, this,
            [this](const QString& runId, const QString& trigger, bool ok, const QString& text) {
                emit statusMessage(
                    ok ? tr("Run %1 diagnosed (%2): %3").arg(runId, trigger, text)
                       : tr("Run %1: the diagnosis (%2) failed: %3").arg(runId, trigger, text));
            });
    // Under load every few milliseconds some node commits: the plot is re-read at most once per
    // refresh period for that (the timer below), not once per commit.
    connect(m_service.get(), &ClusterService::telemetryCommitted, this, [this] {
        if (!m_lastQuery.isValid() || m_lastQuery.elapsed() >= kRefreshMs) {
            requestPlotData();
        }
    });

    connect(m_plot, &TimeSeriesPlot::visibleRangeChanged, this,
            [this](double lo, double hi, int pixels) {
                m_frozenLo = lo;
                m_frozenHi = hi;
                m_frozenPixels = pixels;
                requestPlotData();
            });
    connect(m_plot, &TimeSeriesPlot::followingChanged, this, [this] { requestPlotData(); });

    m_layoutTimer = new QTimer(this);
    m_layoutTimer->setSingleShot(true);
    m_layoutTimer->setInterval(kLayoutMs);
    connect(m_layoutTimer, &QTimer::timeout, this, &ClusterPage::relayoutTable);

    m_refreshTimer = new QTimer(this);
    m_refreshTimer->setInterval(kRefreshMs);
    connect(m_refreshTimer, &QTimer::timeout, this, &ClusterPage::requestPlotData);
    connect(m_refreshTimer, &QTimer::timeout, this, &ClusterPage::requestOomAlerts);
    m_refreshTimer->start();

    refreshClusterList();
    connect(m_clusterCombo, &QComboBox::activated, this, [this](int index) {
        const QString wanted = m_clusterCombo->itemData(index).toString();
        if (wanted != m_cluster && !useCluster(wanted)) {
            refreshClusterList();  // back to the cluster still in use
        }
    });
    connect(m_addClusterButton, &QPushButton::clicked, this, [this] {
        AddClusterDialog* dialog = openAddClusterDialog();
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->open();
    });
}

void ClusterPage::refreshClusterList() {
    const QSignalBlocker block(m_clusterCombo);
    m_clusterCombo->clear();
    m_clusterCombo->addItem(tr("none (plaintext, loopback only)"), QString());
    for (const QString& name : listClusterProfileNames()) {
        m_clusterCombo->addItem(name, name);
    }
    for (const QString& path : m_extraClusters) {
        if (m_clusterCombo->findData(path) < 0) {
            m_clusterCombo->addItem(path, path);
        }
    }
    if (!m_cluster.isEmpty() && m_clusterCombo->findData(m_cluster) < 0) {
        m_clusterCombo->addItem(m_cluster, m_cluster);
    }
    m_clusterCombo->setCurrentIndex(std::max(0, m_clusterCombo->findData(m_cluster)));
}

void ClusterPage::setExtraClusters(const QStringList& paths) {
    m_extraClusters = paths;
    refreshClusterList();
}

Status ClusterPage::useCluster(const QString& nameOrFile) {
    ClusterConnection connection;
    if (!nameOrFile.isEmpty()) {
        auto loaded = loadClusterConnection(nameOrFile);
        if (!loaded) {
            emit statusMessage(QString::fromStdString(loaded.error()));
            return Error{loaded.error()};
        }
        connection = std::move(*loaded);
    }
    m_model->clear();
    // Rebuilds the controller: the old daemons are dropped there, their late updates ignored.
    m_service->setConnection(connection.options, connection.telemetryHz);
    setActiveClientOptions(connection.options);  // the Runs page's log tailer uses them too
    m_cluster = nameOrFile;
    refreshClusterList();
    if (nameOrFile.isEmpty()) {
        m_clusterInfo->setText(tr("plaintext; only loopback daemons can be reached"));
    } else {
        m_clusterInfo->setText(
            tr("%1 node(s), %2 · %3")
                .arg(connection.profile.nodes.size())
                .arg(
                    securityText(connection.options,
                                 connection.profile.nodes.empty()
                                     ? QStringLiteral("x:1")
                                     : QString::fromStdString(connection.profile.nodes[0].address)))
                .arg(QString::fromStdString(connection.profile.path)));
    }
    for (const auto& node : connection.profile.nodes) {
        addAddress(QString::fromStdString(node.address));
    }
    emit addressesChanged(m_model->addresses());
    emit clusterChanged(nameOrFile);
    emit statusMessage(nameOrFile.isEmpty() ? tr("no cluster profile: plaintext, loopback only")
                                            : tr("cluster %1: connecting to %2 node(s) …")
                                                  .arg(connection.displayName())
                                                  .arg(connection.profile.nodes.size()));
    requestPlotData();
    return {};
}

AddClusterDialog* ClusterPage::openAddClusterDialog() {
    auto* dialog = new AddClusterDialog(this);
    connect(dialog, &AddClusterDialog::saved, this, [this](const QString& path) {
        emit clusterSaved(path);
        refreshClusterList();
        const QFileInfo file(path);
        const bool inDir = QDir::cleanPath(file.absolutePath()) ==
                           QDir::cleanPath(QString::fromStdString(control::clusterProfileDir()));
        // A failure is reported by useCluster as a status message.
        (void)useCluster(inDir ? file.completeBaseName() : path);
    });
    return dialog;
}

ClusterPage::~ClusterPage() = default;

void ClusterPage::setFollowWindow(double seconds) {
    m_followWindow = seconds;
    m_plot->setFollowWindow(seconds);
    requestPlotData();
}

bool ClusterPage::addAddress(const QString& input) {
    const QString address = input.trimmed();
    if (!looksLikeAddress(address)) {
        emit statusMessage(
            tr("'%1' is not an address: expected host:port, e.g. 127.0.0.1:7070").arg(address));
        return false;
    }
    if (m_model->indexOf(address) >= 0) {
        emit statusMessage(tr("%1 is already in the list").arg(address));
        return false;
    }
    m_model->addPending(address, m_service->securityOf(address));
    m_service->addNode(address);
    emit statusMessage(tr("connecting to %1 …").arg(address));
    emit addressesChanged(m_model->addresses());
    return true;
}

void ClusterPage::removeAddress(const QString& address) {
    if (m_model->indexOf(address) < 0) {
        return;
    }
    m_service->removeNode(address);
    m_model->remove(address);  // the row goes at once; the ingest thread stops on the worker
    emit addressesChanged(m_model->addresses());
    requestPlotData();
}

QStringList ClusterPage::addresses() const {
    return m_model->addresses();
}

void ClusterPage::removeSelected() {
    QStringList selected;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
        selected << index.data(NodeTableModel::AddressRole).toString();
    }
    for (const QString& address : selected) {
        removeAddress(address);
    }
}

void ClusterPage::onNodeChanged(const NodeRow& row) {
    const int index = m_model->indexOf(row.address);
    if (index < 0) {
        return;  // removed meanwhile
    }
    const bool idLearned =
        !row.nodeId.isEmpty() && (m_model->row(index).nodeId != row.nodeId ||
                                  m_model->row(index).incarnation != row.incarnation);
    const QString stateBefore = m_model->row(index).state;
    m_model->upsert(row);
    // The status bar follows the connection: never left on "connecting …" after it failed.
    if (row.state != stateBefore) {
        emit statusMessage(row.error.isEmpty()
                               ? tr("%1: %2").arg(row.address, row.state)
                               : tr("%1: %2: %3").arg(row.address, row.state, row.error));
    }
    // Column widths and the summary go over every row: with hundreds of nodes each reporting
    // once a second, they are redone at most every kLayoutMs, not per update.
    if (!m_layoutTimer->isActive()) {
        m_layoutTimer->start();
    }
    // The plot's query changes only when a node's id becomes known (before that, what it shows
    // is why none answers); otherwise its timer refreshes it.
    if (idLearned || row.nodeId.isEmpty()) {
        requestPlotData();
    }
}

void ClusterPage::relayoutTable() {
    // Every column on screen (issue 46): a long error in State gives up its width first, down to
    // the widest state with ": …"; the cell elides and its tooltip has the whole error.
    const int margin =
        2 * (m_table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_table) + 1);
    const QFontMetrics metrics(m_table->font());
    int stateFloor = metrics.horizontalAdvance(tr("State"));
    for (int i = 0; i < m_model->rowCount(); ++i) {
        stateFloor = std::max(
            stateFloor, metrics.horizontalAdvance(m_model->row(i).state + QStringLiteral(": …")));
    }
    fitColumnsToViewport(m_table, {{NodeTableModel::StateColumn, stateFloor + margin}});
    int streaming = 0;
    for (int i = 0; i < m_model->rowCount(); ++i) {
        streaming += m_model->row(i).state == QLatin1String("streaming") ? 1 : 0;
    }
    m_summary->setText(tr("%1 daemon(s), %2 streaming · history: %3")
                           .arg(m_model->rowCount())
                           .arg(streaming)
                           .arg(m_service->historyPath()));
}

void ClusterPage::requestPlotData() {
    const QStringList nodeIds = m_model->nodeIds();
    if (nodeIds.isEmpty()) {
        // No daemon answered yet: say which cannot be reached and what to do about it.
        QStringList unreachable;
        for (int i = 0; i < m_model->rowCount(); ++i) {
            const NodeRow& r = m_model->row(i);
            if ((r.state == QLatin1String("backoff") || r.state == QLatin1String("failed")) &&
                !r.error.isEmpty()) {
                unreachable << QStringLiteral("%1: %2").arg(r.address, r.error);
            }
        }
        if (m_model->rowCount() == 0) {
            m_plot->setPlaceholder(tr("Add a daemon address to see its host memory"));
        } else if (unreachable.size() == m_model->rowCount()) {
            m_plot->setPlaceholder(
                tr("Cannot reach %1.\nIs runplaned running there? On that node: `runplaned "
                   "--listen HOST:PORT` (docs/daemon.md), or `make demo` for a local one.")
                    .arg(unreachable.join(QStringLiteral("; "))));
        } else {
            m_plot->setPlaceholder(tr("Waiting for the daemons to answer …"));
        }
        return;
    }
    m_roles->request(*m_reader, nodeIds,
                     [model = m_model](const QString& node) { return model->displayName(node); });
    if (m_queryInFlight) {
        m_queryWanted = true;  // coalesce: one more query when the current one answers
        return;
    }
    m_queryInFlight = true;
    m_queryWanted = false;
    m_lastQuery.start();
    double t0 = 0;
    double t1 = 0;
    int buckets = std::max(200, m_plot->width());
    if (m_plot->isFollowing()) {
        t1 = nowSeconds() + 5;
        t0 = t1 - 5 - m_followWindow;
    } else {
        t0 = m_frozenLo;
        t1 = m_frozenHi;
        buckets = std::max(200, m_frozenPixels);
    }
    // One series per daemon, not per node id: two daemons both calling their node `vm` are two
    // lines (daemon_memory.h, issue 46).
    std::vector<DaemonKey> daemons;
    for (int i = 0; i < m_model->rowCount(); ++i) {
        const NodeRow& r = m_model->row(i);
        if (!r.nodeId.isEmpty()) {
            daemons.push_back(DaemonKey{r.address, r.nodeId, r.incarnation});
        }
    }
    m_reader->run(
        QStringLiteral("cluster-memory"), this,
        [daemons, t0, t1, buckets](db::History& history) {
            return loadDaemonHostMemory(history, daemons, t0, t1, buckets);
        },
        [this](Result<NodeMemoryResult> result) {
            m_queryInFlight = false;
            if (!result) {
                emit statusMessage(QString::fromStdString(result.error()));
            } else if (!result->error.isEmpty()) {
                emit statusMessage(result->error);
            } else if (result->series.empty()) {
                m_plot->setPlaceholder(tr("Waiting for host-memory samples …"));
            } else {
                double ram = 0;
                for (double r : result->ramBytes) {
                    if (r > 0 && (ram == 0 || r < ram)) {
                        ram = r;
                    }
                }
                // RAM of the smallest node only: without a run there is no plan and no alarm
                // setting to draw (docs/gui.md).
                const MemoryLines lines = memoryLinesFromRecipe(QString(), ram);
                showHostMemory(
                    *m_plot, result->series, lines, {}, {}, [this](const PointSeries& s) {
                        return m_model->displayNameOfAddress(s.nodeId);  // the daemon's address
                    });
                ++m_appliedQueries;
            }
            if (m_queryWanted) {
                requestPlotData();
            }
        });
}

// OOM events of the page's nodes (issue 42): read with the plot's refresh, one query in flight.
void ClusterPage::requestOomAlerts() {
    QStringList nodeIds;
    for (int i = 0; i < m_model->rowCount(); ++i) {
        if (!m_model->row(i).nodeId.isEmpty()) {
            nodeIds << m_model->row(i).nodeId;
        }
    }
    if (nodeIds.isEmpty() || m_oomQueryInFlight) {
        if (nodeIds.isEmpty()) {
            m_oomPanel->setAlerts({}, [](const QString& n) { return n; });
        }
        return;
    }
    m_oomQueryInFlight = true;
    const double t0 = nowSeconds() - kOomAlertWindowSeconds;
    m_reader->run(
        QStringLiteral("cluster-oom"), this,
        [nodeIds, t0](db::History& history) { return loadNodeOomAlerts(history, nodeIds, t0); },
        [this](Result<NodeOomResult> result) {
            m_oomQueryInFlight = false;
            if (!result) {
                emit statusMessage(QString::fromStdString(result.error()));
            } else if (!result->error.isEmpty()) {
                emit statusMessage(result->error);
            } else {
                m_oomPanel->setAlerts(*result,
                                      [this](const QString& n) { return m_model->displayName(n); });
            }
        });
}

}  // namespace runplane::gui
