#include "gui/pages/runs_page.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "db/history/history.h"
#include "gui/models/history_queries.h"
#include "gui/models/history_reader.h"
#include "gui/models/run_derivations.h"
#include "gui/models/run_models.h"
#include "gui/pages/column_fitter.h"
#include "gui/pages/fit_columns.h"
#include "gui/pages/run_annotations_bar.h"
#include "gui/pages/run_drop_import.h"
#include "gui/pages/run_view.h"
#include "gui/widgets/cached_text_delegate.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {
constexpr int kListRefreshMs = 3000;
constexpr int kLiveRefreshMs = 1000;
constexpr int kMinNameWidth = 110;  // px: the run name never shrinks below this
constexpr int kMinViewWidth = 640;  // px: the list never takes the run view below this
}  // namespace

RunsPage::RunsPage(const QString& historyPath, QWidget* parent)
    : Page(parent),
      m_reader(std::make_unique<HistoryReader>(historyPath)),
      m_historyPath(historyPath) {
    m_runs = new RunListModel(this);
    m_proxy = new RunFilterProxy(this);
    m_proxy->setSourceModel(m_runs);

    auto* layout = new QHBoxLayout(this);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    layout->addWidget(splitter);

    auto* left = new QWidget(splitter);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    m_filter = new QLineEdit(left);
    m_filter->setPlaceholderText(tr("filter runs (name, recipe, node, id)"));
    m_filter->setClearButtonEnabled(true);
    m_state = new QComboBox(left);
    m_state->addItem(tr("any status"), QString());
    for (telemetry::RunState s : telemetry::kRunStates) {
        const std::string_view text = telemetry::label(s);
        m_state->addItem(QString::fromLatin1(text.data(), static_cast<qsizetype>(text.size())),
                         stateName(s));
    }
    auto* refresh = new QPushButton(tr("Refresh"), left);
    bar->addWidget(m_filter, 1);
    bar->addWidget(m_state);
    bar->addWidget(refresh);
    leftLayout->addLayout(bar);
    m_banner = new QLabel(left);
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->hide();
    leftLayout->addWidget(m_banner);
    m_table = new QTableView(left);
    m_table->setObjectName(QStringLiteral("runsTable"));
    m_table->setModel(m_proxy);
    m_table->setItemDelegate(new CachedTextDelegate(m_table));
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunListModel::StartColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setTextElideMode(Qt::ElideRight);
    // The key columns (run, status, start, peak host memory, primary eval) fit without scrolling;
    // recipe, nodes and duration are one right-click on the header away (the choice persists
    // with the header state).
    // The Diagnosis column too (issue 44): the Status tooltip and the run header carry the
    // verdict, and the key columns keep their room.
    for (int c : {RunListModel::RecipeColumn, RunListModel::NodesColumn,
                  RunListModel::DurationColumn, RunListModel::DiagnosisColumn}) {
        m_table->setColumnHidden(c, true);
    }
    m_table->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table->horizontalHeader(), &QWidget::customContextMenuRequested, this,
            [this](const QPoint& pos) {
                QMenu menu(this);
                for (int c = 0; c < RunListModel::ColumnCount; ++c) {
                    QAction* a = menu.addAction(
                        m_runs->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
                    a->setCheckable(true);
                    a->setChecked(!m_table->isColumnHidden(c));
                    a->setEnabled(c != RunListModel::NameColumn);
                    connect(a, &QAction::toggled, this, [this, c](bool on) {
                        m_table->setColumnHidden(c, !on);
                        m_fitter->fit();  // the list keeps fitting with the column shown or gone
                    });
                }
                menu.exec(m_table->horizontalHeader()->mapToGlobal(pos));
            });
    // issue 46: no horizontal scroll at 1280×720. The columns are fitted to the list's width
    // whenever it changes (column_fitter.h), until the user drags a column's edge: every visible
    // column at its contents, then the cause (free text) giving way first down to its header, then
    // the run name down to kMinNameWidth, then the widest of the others down to their headers
    // (fit_columns.h); elided cells keep the whole text in their tooltip.
    m_fitter = new ColumnFitter(
        m_table,
        [this] {
            return std::vector<std::pair<int, int>>{
                {RunListModel::CauseColumn, headerTitleWidth(m_table, RunListModel::CauseColumn)},
                {RunListModel::NameColumn, kMinNameWidth}};
        },
        kMinNameWidth, this);
    // Narrower than the columns at their narrowest, the list takes the missing pixels from the
    // run view, which keeps at least kMinViewWidth.
    m_fitter->growInto(splitter, 0, kMinViewWidth);
    leftLayout->addWidget(m_table, 1);
    m_annotations = new RunAnnotationsBar(m_reader.get(), left);
    leftLayout->addWidget(m_annotations);
    m_dropImport = new RunDropImport(this, m_reader.get());
    leftLayout->addWidget(m_dropImport->reportLabel());

    m_view = new RunView(splitter);
    m_view->setHistoryPath(historyPath);
    splitter->addWidget(left);
    splitter->addWidget(m_view);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 5);
    splitter->setSizes({470, 1230});

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &RunFilterProxy::setText);
    connect(m_state, &QComboBox::currentIndexChanged, this,
            [this] { m_proxy->setState(m_state->currentData().toString()); });
    connect(refresh, &QPushButton::clicked, this, &RunsPage::refreshRuns);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunsPage::onSelectionChanged);
    connect(m_view, &RunView::rangeRequested, this, &RunsPage::requestSnapshot);
    connect(m_annotations, &RunAnnotationsBar::written, this, [this](const QString& message) {
        emit statusMessage(message);
        refreshRuns();
    });
    connect(m_annotations, &RunAnnotationsBar::failed, this, &RunsPage::statusMessage);
    connect(m_dropImport, &RunDropImport::imported, this, [this](const QStringList& lines, bool) {
        emit statusMessage(lines.isEmpty() ? QString() : lines.back());
        refreshRuns();
    });

    m_find = new QAction(tr("Find runs"), this);
    connect(m_find, &QAction::triggered, this, [this] {
        m_filter->setFocus(Qt::ShortcutFocusReason);
        m_filter->selectAll();
    });

    m_listTimer = new QTimer(this);
    m_listTimer->setInterval(kListRefreshMs);
    connect(m_listTimer, &QTimer::timeout, this, &RunsPage::refreshRuns);
    m_listTimer->start();
    m_liveTimer = new QTimer(this);
    m_liveTimer->setInterval(kLiveRefreshMs);
    connect(m_liveTimer, &QTimer::timeout, this, [this] {
        const RunRow* run = m_runs->run(m_selected);
        if (run != nullptr && run->state == telemetry::RunState::Running && m_view->isFollowing()) {
            requestSnapshot(0, 0, m_rangePixels);
        }
    });
    m_liveTimer->start();
    refreshRuns();
}

RunsPage::~RunsPage() = default;

QString RunsPage::bannerText() const {
    return m_banner->isHidden() ? QString() : m_banner->text();
}

void RunsPage::refreshRuns() {
    m_reader->run(
        QStringLiteral("runs"), this, [](db::History& h) { return loadRunList(h); },
        [this](Result<Result<std::vector<RunRow>>> result) {
            if (!result || !*result) {
                const QString error =
                    QString::fromStdString(!result ? result.error() : result->error());
                m_banner->setStyleSheet(QStringLiteral(
                    "QLabel{background:#fde7e7;color:#8a1010;padding:6px;border-radius:3px}"));
                m_banner->setText(
                    tr("The run history %1 cannot be read: %2").arg(m_historyPath, error));
                m_banner->show();
                emit statusMessage(error);
                return;
            }
            if ((*result)->empty()) {
                m_banner->setStyleSheet(QStringLiteral(
                    "QLabel{background:#eef3fb;color:#223;padding:6px;border-radius:3px}"));
                m_banner->setText(
                    tr("No runs yet in %1. Run `make demo` to record two smoke runs, or start "
                       "one with `runplanectl submit HOST:PORT --recipe FILE -- CMD`.")
                        .arg(m_historyPath));
                m_banner->show();
            } else {
                m_banner->hide();
                m_banner->clear();
            }
            m_runs->setRuns(std::move(**result));
            m_fitter->fit();
            ++m_listsApplied;
            if (const RunRow* row = m_runs->run(m_selected)) {
                m_annotations->setRuns({row});
            }
            if (!m_selected.isEmpty()) {
                selectRun(m_selected);  // keep the selection across a reset
                // The header and the list tell one state: a run the list now calls finished (or
                // running again) is reloaded, never left "running" in the header.
                const RunRow* row = m_runs->run(m_selected);
                const auto shown = m_view->snapshot();
                if (row != nullptr && shown != nullptr && shown->run.id == m_selected &&
                    shown->run.state != row->state) {
                    requestSnapshot(0, 0, m_rangePixels);
                }
            }
        });
}

QAction* RunsPage::standardAction(Action action) const {
    return action == Action::Find ? m_find : nullptr;
}

void RunsPage::saveWorkspace(QSettings& settings) const {
    Page::saveWorkspace(settings);
    settings.setValue(QStringLiteral("selectedRun"), m_selected);
    settings.setValue(QStringLiteral("filter"), m_filter->text());
    settings.setValue(QStringLiteral("status"), m_state->currentData().toString());
    settings.setValue(QStringLiteral("metric"), m_view->metricKey());
    settings.setValue(QStringLiteral("metricAxis"), m_view->metricAxisIndex());
    settings.setValue(QStringLiteral("columnsByUser"), m_fitter->userSized());
}

void RunsPage::restoreWorkspace(QSettings& settings) {
    Page::restoreWorkspace(settings);
    // Restored widths the user had dragged stay theirs; fitted ones are fitted again.
    m_fitter->setUserSized(headerRestored(m_table->objectName()) &&
                           settings.value(QStringLiteral("columnsByUser"), false).toBool());
    m_fitter->fit();
    m_filter->setText(settings.value(QStringLiteral("filter")).toString());
    const int state = m_state->findData(settings.value(QStringLiteral("status")).toString());
    m_state->setCurrentIndex(std::max(0, state));
    m_view->setMetricAxisIndex(settings.value(QStringLiteral("metricAxis"), 0).toInt());
    const QString metric = settings.value(QStringLiteral("metric")).toString();
    if (!metric.isEmpty()) {
        m_view->showMetric(metric);
    }
    const QString run = settings.value(QStringLiteral("selectedRun")).toString();
    if (!run.isEmpty() && !selectRun(run)) {
        m_selected = run;  // the list is not here yet: selected when it arrives
    }
}

bool RunsPage::selectRun(const QString& runId) {
    const int row = m_runs->indexOf(runId);
    if (row < 0) {
        return false;
    }
    const QModelIndex index = m_proxy->mapFromSource(m_runs->index(row, 0));
    if (!index.isValid()) {
        return false;  // filtered out
    }
    if (m_selected == runId && m_table->selectionModel()->isRowSelected(index.row(), {})) {
        return true;
    }
    m_table->selectionModel()->select(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_table->scrollTo(index);
    return true;
}

void RunsPage::onSelectionChanged() {
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        return;
    }
    const QString runId = rows.front().data(RunListModel::RunIdRole).toString();
    if (const RunRow* row = m_runs->run(runId)) {
        m_annotations->setRuns({row});
    }
    if (runId == m_selected && m_view->snapshot()) {
        return;
    }
    m_selected = runId;
    m_rangeLo = m_rangeHi = 0;
    requestSnapshot(0, 0, std::max(400, m_view->hostMemoryPlot()->width()));
}

void RunsPage::requestSnapshot(double lo, double hi, int pixels) {
    if (m_selected.isEmpty()) {
        return;
    }
    m_rangeLo = lo;
    m_rangeHi = hi;
    m_rangePixels = std::max(200, pixels);
    const QString runId = m_selected;
    const int buckets = m_rangePixels;
    if (!m_cache || m_cacheRun != runId) {
        // What the last refresh of this run read (worker-side only): a live refresh reads only
        // what is new. Another run starts afresh; the old cache goes with its last query.
        m_cache = std::make_shared<SeriesCache>();
        m_cacheRun = runId;
    }
    std::shared_ptr<SeriesCache> cache = m_cache;
    // Superseding: a newer request for the snapshot replaces a pending one, an older answer is
    // dropped on arrival (HistoryReader keys), so zooming fast never queues stale work.
    m_reader->run(
        QStringLiteral("snapshot"), this,
        [runId, lo, hi, buckets, cache](db::History& h) {
            auto snap =
                loadRunSnapshot(h, runId, lo, hi, buckets, defaultModelCatalog(), cache.get());
            if (!snap) {
                return Result<std::shared_ptr<const RunSnapshot>>(Error{snap.error()});
            }
            return Result<std::shared_ptr<const RunSnapshot>>(
                std::make_shared<const RunSnapshot>(std::move(*snap)));
        },
        [this, runId](Result<Result<std::shared_ptr<const RunSnapshot>>> result) {
            if (runId != m_selected) {
                return;
            }
            if (!result || !*result) {
                const QString error =
                    QString::fromStdString(!result ? result.error() : result->error());
                m_view->clear(error);
                emit statusMessage(error);
                return;
            }
            m_view->setSnapshot(**result);
            ++m_snapshotsApplied;
        });
}

}  // namespace runplane::gui
