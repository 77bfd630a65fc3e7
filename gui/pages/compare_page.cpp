#include "gui/pages/compare_page.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "db/history/history.h"
#include "gui/models/compare_baseline.h"
#include "gui/models/compare_model.h"
#include "gui/models/history_queries.h"
#include "gui/models/history_reader.h"
#include "gui/models/run_models.h"
#include "gui/pages/column_fitter.h"
#include "gui/pages/compare_delta_series.h"
#include "gui/pages/compare_fork_marks.h"
#include "gui/pages/compare_grid.h"
#include "gui/pages/compare_groups.h"
#include "gui/pages/fit_columns.h"
#include "gui/pages/metric_panels.h"
#include "gui/pages/run_annotations_bar.h"
#include "gui/pages/run_drop_import.h"
#include "gui/widgets/cached_text_delegate.h"
#include "gui/widgets/palette.h"
#include "gui/widgets/time_series_plot.h"

namespace runplane::gui {

namespace {
constexpr int kListRefreshMs = 5000;
constexpr int kMinNameWidth = 110;   // px: the run name never shrinks below this (as on Runs)
constexpr int kMinPlotsWidth = 640;  // px the plots and the diff keep when the list widens

// The export buttons (PNG, SVG, CSV) are enabled only while a comparison is drawn: with nothing
// selected they wrote a picture of the empty-state text (issue 46).
const QString kExportName = QStringLiteral("compareExport");

void setExportsEnabled(const QWidget* page, bool on) {
    for (QPushButton* b : page->findChildren<QPushButton*>(kExportName)) {
        b->setEnabled(on);
    }
}

bool exportsEnabled(const QWidget* page) {
    const QPushButton* b = page->findChild<QPushButton*>(kExportName);
    return b != nullptr && b->isEnabled();
}
}  // namespace

ComparePage::ComparePage(const QString& historyPath, QWidget* parent)
    : Page(parent), m_reader(std::make_unique<HistoryReader>(historyPath)) {
    m_runs = new RunListModel(this);
    m_proxy = new RunFilterProxy(this);
    m_proxy->setSourceModel(m_runs);
    m_compare = new CompareModel(this);

    auto* layout = new QHBoxLayout(this);
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    layout->addWidget(splitter);

    auto* left = new QWidget(splitter);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    m_filter = new QLineEdit(left);
    m_filter->setPlaceholderText(tr("filter runs"));
    m_filter->setClearButtonEnabled(true);
    leftLayout->addWidget(m_filter);
    m_table = new QTableView(left);
    m_table->setObjectName(QStringLiteral("compareRunsTable"));
    m_table->setModel(m_proxy);
    m_table->setItemDelegate(new CachedTextDelegate(m_table));
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunListModel::StartColumn, Qt::DescendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::MultiSelection);
    m_table->verticalHeader()->hide();
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    for (int c : {RunListModel::RecipeColumn, RunListModel::NodesColumn,
                  RunListModel::DurationColumn, RunListModel::EvalColumn}) {
        m_table->hideColumn(c);
    }
    // issue 46: the list scrolled sideways at 1280×720. Its columns are fitted to its width as
    // the Runs page's are (column_fitter.h): the cause and the diagnosis (free text) give way
    // first, down to their headers, then the run name down to kMinNameWidth, then the widest
    // others down to their headers; elided cells keep the whole text in their tooltip. Until
    // the user drags a column's edge: then the widths are theirs.
    m_fitter = new ColumnFitter(
        m_table,
        [this] {
            return std::vector<std::pair<int, int>>{
                {RunListModel::CauseColumn, headerTitleWidth(m_table, RunListModel::CauseColumn)},
                {RunListModel::DiagnosisColumn,
                 headerTitleWidth(m_table, RunListModel::DiagnosisColumn)},
                {RunListModel::NameColumn, kMinNameWidth}};
        },
        kMinNameWidth, this);
    leftLayout->addWidget(m_table, 1);
    m_selectionLabel = new QLabel(left);
    m_selectionLabel->setWordWrap(true);
    leftLayout->addWidget(m_selectionLabel);
    m_annotations = new RunAnnotationsBar(m_reader.get(), left);
    leftLayout->addWidget(m_annotations);
    m_dropImport = new RunDropImport(this, m_reader.get());
    leftLayout->addWidget(m_dropImport->reportLabel());

    auto* right = new QWidget(splitter);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Metric:"), right));
    m_metricCombo = new QComboBox(right);
    m_metricCombo->setMinimumContentsLength(18);
    bar->addWidget(m_metricCombo, 1);
    bar->addWidget(new QLabel(tr("x:"), right));
    m_axisCombo = new QComboBox(right);
    m_axisCombo->addItem(tr("rollout (aligned)"), static_cast<int>(CompareAxis::Rollout));
    m_axisCombo->addItem(tr("step"), static_cast<int>(CompareAxis::Step));
    m_axisCombo->addItem(tr("relative step"), static_cast<int>(CompareAxis::RelativeStep));
    m_axisCombo->addItem(tr("wall time"), static_cast<int>(CompareAxis::WallTime));
    bar->addWidget(m_axisCombo);
    bar->addWidget(new QLabel(tr("EMA:"), right));
    m_smoothing = new QDoubleSpinBox(right);
    m_smoothing->setRange(0, 0.99);
    m_smoothing->setSingleStep(0.1);
    m_smoothing->setDecimals(2);
    m_smoothing->setValue(0.6);
    m_smoothing->setToolTip(
        tr("TensorBoard's debiased EMA, spacing-aware: a_n = w_n·a_(n−1) + (1−w_n)·y_n, "
           "s_n = a_n / (1 − Πw_k), w_n = w^(Δx_n / median Δx); 0 shows raw points only"));
    bar->addWidget(m_smoothing);
    auto* png = new QPushButton(tr("PNG…"), right);
    auto* svg = new QPushButton(tr("SVG…"), right);
    auto* csv = new QPushButton(tr("CSV…"), right);
    for (QPushButton* b : {png, svg, csv}) {
        b->setObjectName(kExportName);
        b->setEnabled(false);
        b->setToolTip(tr("select 2 to 10 runs with a metric to export their comparison"));
        bar->addWidget(b);
    }
    rightLayout->addLayout(bar);
    // Baseline (issue 49): deltas of every other run in the table, optional difference curves.
    auto* baseBar = new QHBoxLayout;
    baseBar->addWidget(new QLabel(tr("Baseline:"), right));
    m_baselineCombo = new QComboBox(right);
    m_baselineCombo->setObjectName(QStringLiteral("compareBaseline"));
    m_baselineCombo->setMinimumContentsLength(18);
    m_baselineCombo->setToolTip(
        tr("Every other run shows its deltas against this run (also: right-click a run)"));
    baseBar->addWidget(m_baselineCombo, 1);
    baseBar->addWidget(new QLabel(tr("Δ at step:"), right));
    m_deltaStep = new QSpinBox(right);
    m_deltaStep->setRange(-1, 1000000000);
    m_deltaStep->setValue(-1);
    m_deltaStep->setSpecialValueText(tr("off"));
    m_deltaStep->setToolTip(
        tr("Adds a row with each run's value at this step minus the "
           "baseline's (the metric's own step)"));
    baseBar->addWidget(m_deltaStep);
    m_diffCurves = new QCheckBox(tr("Difference curves"), right);
    m_diffCurves->setToolTip(tr("Plot run − baseline (the baseline interpolated linearly)"));
    baseBar->addWidget(m_diffCurves);
    baseBar->addWidget(new QLabel(tr("Group by:"), right));
    m_groupCombo = new QComboBox(right);
    m_groupCombo->setObjectName(QStringLiteral("compareGroupBy"));
    m_groupCombo->setMinimumContentsLength(12);
    m_groupCombo->setToolTip(
        tr("One curve per group: the mean of its runs with their min–max band (by tags or by a "
           "recipe field that differs between the runs)"));
    m_groupCombo->addItem(tr("(none)"), QString());
    baseBar->addWidget(m_groupCombo);
    rightLayout->addLayout(baseBar);
    auto* vsplit = new QSplitter(Qt::Vertical, right);
    m_views = new QTabWidget(vsplit);
    m_plot = new TimeSeriesPlot(m_views);
    m_views->addTab(m_plot, tr("Overlay"));
    auto* gridTab = new QWidget(m_views);
    auto* gridLayout = new QVBoxLayout(gridTab);
    gridLayout->setContentsMargins(0, 0, 0, 0);
    m_gridExtra = new QLineEdit(gridTab);
    m_gridExtra->setPlaceholderText(
        tr("every eval metric; also (comma-separated): e.g. train/loss, perf/step_time"));
    gridLayout->addWidget(m_gridExtra);
    m_grid = new CompareGridView(gridTab);
    gridLayout->addWidget(m_grid, 1);
    m_views->addTab(gridTab, tr("All metrics"));
    m_plot->setTitle(tr("Eval curves"));
    m_plot->setFollowWindow(0);
    m_plot->setShowToolbar(true);
    m_diffView = new QTableView(vsplit);
    m_diffView->setModel(m_compare);
    m_diffView->setItemDelegate(new CachedTextDelegate(m_diffView));
    m_diffView->verticalHeader()->hide();
    m_diffView->horizontalHeader()->setStretchLastSection(true);
    m_diffView->setWordWrap(false);
    vsplit->addWidget(m_views);
    vsplit->addWidget(m_diffView);
    vsplit->setStretchFactor(0, 3);
    vsplit->setStretchFactor(1, 2);
    rightLayout->addWidget(vsplit, 1);
    splitter->addWidget(left);
    splitter->addWidget(right);
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 3);
    splitter->setSizes({420, 1280});
    // The run list widens into the plots' side (down to kMinPlotsWidth) when its key columns
    // need it (issue 46: 295 px at 1280×720 could not hold them).
    m_fitter->growInto(splitter, 0, kMinPlotsWidth);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &RunFilterProxy::setText);
    connect(m_annotations, &RunAnnotationsBar::written, this, [this](const QString& message) {
        emit statusMessage(message);
        refreshRuns();
    });
    connect(m_annotations, &RunAnnotationsBar::failed, this, &ComparePage::statusMessage);
    connect(m_dropImport, &RunDropImport::imported, this, [this](const QStringList& lines, bool) {
        emit statusMessage(lines.isEmpty() ? QString() : lines.back());
        refreshRuns();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ComparePage::onSelectionChanged);
    connect(m_metricCombo, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    connect(m_axisCombo, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
    connect(m_smoothing, &QDoubleSpinBox::valueChanged, this, [this] { redraw(); });
    connect(m_baselineCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_baselineId = m_baselineCombo->currentData().toString();
        redraw();
    });
    connect(m_groupCombo, &QComboBox::currentIndexChanged, this, [this] {
        m_groupBy = m_groupCombo->currentData().toString();
        redraw();
    });
    connect(m_deltaStep, &QSpinBox::valueChanged, this, [this] { redraw(); });
    connect(m_diffCurves, &QCheckBox::toggled, this, [this] { redraw(); });
    connect(m_gridExtra, &QLineEdit::editingFinished, this, [this] { redraw(); });
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QWidget::customContextMenuRequested, this, &ComparePage::showRunsMenu);
    connect(png, &QPushButton::clicked, this, [this] {
        const QString path = exportDialog(tr("PNG image (*.png)"), QStringLiteral(".png"));
        if (!path.isEmpty()) {
            exportPng(path);
        }
    });
    connect(svg, &QPushButton::clicked, this, [this] {
        const QString path = exportDialog(tr("SVG image (*.svg)"), QStringLiteral(".svg"));
        if (!path.isEmpty()) {
            exportSvg(path);
        }
    });
    connect(csv, &QPushButton::clicked, this, [this] {
        const QString path = exportDialog(tr("CSV (*.csv)"), QStringLiteral(".csv"));
        if (!path.isEmpty()) {
            exportCsv(path);
        }
    });

    m_find = new QAction(tr("Find runs"), this);
    connect(m_find, &QAction::triggered, this, [this] {
        m_filter->setFocus(Qt::ShortcutFocusReason);
        m_filter->selectAll();
    });

    m_listTimer = new QTimer(this);
    m_listTimer->setInterval(kListRefreshMs);
    connect(m_listTimer, &QTimer::timeout, this, &ComparePage::refreshRuns);
    m_listTimer->start();
    m_plot->setPlaceholder(tr("Select 2 to 10 runs to compare"));
    refreshRuns();
}

ComparePage::~ComparePage() = default;

void ComparePage::refreshRuns() {
    m_reader->run(
        QStringLiteral("runs"), this, [](db::History& h) { return loadRunList(h); },
        [this](Result<Result<std::vector<RunRow>>> result) {
            if (!result || !*result) {
                emit statusMessage(
                    QString::fromStdString(!result ? result.error() : result->error()));
                return;
            }
            const QStringList keep = m_selectedIds;
            {
                const QSignalBlocker block(m_table->selectionModel());
                m_runs->setRuns(std::move(**result));
            }
            m_fitter->fit();
            ++m_listsApplied;
            updateAnnotations();
            if (!m_pendingSelection.isEmpty()) {
                const QStringList pending = m_pendingSelection;
                m_pendingSelection.clear();
                selectRuns(pending);  // not blocked: loads the comparison
            } else if (!keep.isEmpty()) {
                const QSignalBlocker block(m_table->selectionModel());
                selectRuns(keep);
            }
        });
}

bool ComparePage::selectRuns(const QStringList& runIds) {
    QItemSelection selection;
    for (const QString& id : runIds) {
        const int row = m_runs->indexOf(id);
        if (row < 0) {
            return false;
        }
        const QModelIndex index = m_proxy->mapFromSource(m_runs->index(row, 0));
        if (!index.isValid()) {
            return false;
        }
        selection.select(index, index);
    }
    m_table->selectionModel()->select(
        selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    return true;
}

void ComparePage::onSelectionChanged() {
    QStringList ids;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
        ids << index.data(RunListModel::RunIdRole).toString();
    }
    // Keep the order of the list (newest first) stable for colours: sort by the model's order.
    std::sort(ids.begin(), ids.end(), [this](const QString& a, const QString& b) {
        return m_runs->indexOf(a) < m_runs->indexOf(b);
    });
    m_selectedIds = ids;
    updateAnnotations();
    if (ids.size() < kMinCompareRuns || ids.size() > kMaxCompareRuns) {
        m_selectionLabel->setText(tr("%1 run(s) selected: pick %2 to %3 to compare")
                                      .arg(ids.size())
                                      .arg(kMinCompareRuns)
                                      .arg(kMaxCompareRuns));
        if (ids.size() > kMaxCompareRuns) {
            emit statusMessage(tr("at most %1 runs can be compared").arg(kMaxCompareRuns));
        }
        // No comparison any more: none is drawn, and there is nothing to export.
        m_data = CompareData{};
        m_plot->setPlaceholder(tr("Select 2 to 10 runs to compare"));
        setExportsEnabled(this, false);
        return;
    }
    m_selectionLabel->setText(tr("%1 runs selected").arg(ids.size()));
    m_reader->run(
        QStringLiteral("compare"), this, [ids](db::History& h) { return loadCompare(h, ids); },
        [this](Result<Result<CompareData>> result) {
            if (!result || !*result) {
                emit statusMessage(
                    QString::fromStdString(!result ? result.error() : result->error()));
                return;
            }
            m_data = std::move(**result);
            QString chosen = m_metricCombo->currentText();
            if (!m_pendingMetric.isEmpty()) {
                chosen = m_pendingMetric;
                m_pendingMetric.clear();
            }
            {
                const QSignalBlocker block(m_metricCombo);
                m_metricCombo->clear();
                m_metricCombo->addItems(m_data.metricNames);
                const int at = m_metricCombo->findText(chosen);
                m_metricCombo->setCurrentIndex(at >= 0 ? at : 0);
            }
            fillBaselineCombo();
            fillGroupCombo();
            ++m_applied;
            redraw();
        });
}

QString ComparePage::metric() const {
    return m_metricCombo->currentText();
}

void ComparePage::setMetric(const QString& metric) {
    const int at = m_metricCombo->findText(metric);
    if (at >= 0) {
        m_metricCombo->setCurrentIndex(at);
    }
}

CompareAxis ComparePage::axis() const {
    return static_cast<CompareAxis>(m_axisCombo->currentData().toInt());
}

double ComparePage::smoothing() const {
    return m_smoothing->value();
}

QAction* ComparePage::standardAction(Action action) const {
    return action == Action::Find ? m_find : nullptr;
}

void ComparePage::saveWorkspace(QSettings& settings) const {
    Page::saveWorkspace(settings);
    settings.setValue(QStringLiteral("selectedRuns"),
                      m_pendingSelection.isEmpty() ? m_selectedIds : m_pendingSelection);
    settings.setValue(QStringLiteral("metric"),
                      m_pendingMetric.isEmpty() ? metric() : m_pendingMetric);
    settings.setValue(QStringLiteral("axis"), static_cast<int>(axis()));
    settings.setValue(QStringLiteral("ema"), m_smoothing->value());
    settings.setValue(QStringLiteral("filter"), m_filter->text());
    settings.setValue(QStringLiteral("baseline"), m_baselineId);
    settings.setValue(QStringLiteral("groupBy"), m_groupBy);
    settings.setValue(QStringLiteral("deltaStep"), m_deltaStep->value());
    settings.setValue(QStringLiteral("differenceCurves"), m_diffCurves->isChecked());
    settings.setValue(QStringLiteral("gridExtra"), m_gridExtra->text());
    settings.setValue(QStringLiteral("gridShown"), m_views->currentIndex() == 1);
    settings.setValue(QStringLiteral("columnsByUser"), m_fitter->userSized());
    QVariantMap panelEma;  // each grid panel's own EMA weight by metric (issue 49)
    for (const auto& [metric, weight] : m_grid->panelWeights()) {
        panelEma.insert(metric, weight);
    }
    settings.setValue(QStringLiteral("gridPanelEma"), panelEma);
}

void ComparePage::restoreWorkspace(QSettings& settings) {
    Page::restoreWorkspace(settings);
    // Restored widths the user had dragged stay theirs; fitted ones are fitted again.
    m_fitter->setUserSized(headerRestored(m_table->objectName()) &&
                           settings.value(QStringLiteral("columnsByUser"), false).toBool());
    m_fitter->fit();
    m_filter->setText(settings.value(QStringLiteral("filter")).toString());
    m_baselineId = settings.value(QStringLiteral("baseline")).toString();
    m_groupBy = settings.value(QStringLiteral("groupBy")).toString();
    m_deltaStep->setValue(settings.value(QStringLiteral("deltaStep"), -1).toInt());
    m_diffCurves->setChecked(settings.value(QStringLiteral("differenceCurves")).toBool());
    m_gridExtra->setText(settings.value(QStringLiteral("gridExtra")).toString());
    showGrid(settings.value(QStringLiteral("gridShown")).toBool());
    std::map<QString, double> panelEma;
    const QVariantMap savedEma = settings.value(QStringLiteral("gridPanelEma")).toMap();
    for (auto it = savedEma.cbegin(); it != savedEma.cend(); ++it) {
        bool ok = false;
        const double w = it.value().toDouble(&ok);
        if (ok) {
            panelEma[it.key()] = w;  // setPanelWeights drops what is out of range
        }
    }
    m_grid->setPanelWeights(panelEma);
    const QVariant ax = settings.value(QStringLiteral("axis"));
    if (ax.isValid() && m_axisCombo->findData(ax.toInt()) >= 0) {
        setAxis(static_cast<CompareAxis>(ax.toInt()));
    }
    const QVariant ema = settings.value(QStringLiteral("ema"));
    if (ema.isValid()) {
        setSmoothing(ema.toDouble());
    }
    const QString metric = settings.value(QStringLiteral("metric")).toString();
    if (!metric.isEmpty() && m_metricCombo->findText(metric) >= 0) {
        setMetric(metric);
    } else {
        m_pendingMetric = metric;
    }
    const QStringList runs = settings.value(QStringLiteral("selectedRuns")).toStringList();
    if (!runs.isEmpty() && !selectRuns(runs)) {
        m_pendingSelection = runs;
    }
}

void ComparePage::setAxis(CompareAxis axis) {
    m_axisCombo->setCurrentIndex(m_axisCombo->findData(static_cast<int>(axis)));
}

void ComparePage::setSmoothing(double weight) {
    m_smoothing->setValue(weight);
}

void ComparePage::setBaselineRun(const QString& runId) {
    m_baselineId = runId;
    const int at = m_baselineCombo->findData(runId);
    if (at >= 0) {
        m_baselineCombo->setCurrentIndex(at);  // redraws
    } else {
        redraw();
    }
}

void ComparePage::setDeltaStep(std::optional<double> step) {
    m_deltaStep->setValue(step ? static_cast<int>(*step) : -1);
}

void ComparePage::setDifferenceCurves(bool on) {
    m_diffCurves->setChecked(on);
}

void ComparePage::setGridExtraMetrics(const QStringList& metrics) {
    m_gridExtra->setText(metrics.join(QStringLiteral(", ")));
    redraw();
}

void ComparePage::showGrid(bool grid) {
    m_views->setCurrentIndex(grid ? 1 : 0);
}

void ComparePage::updateAnnotations() {
    std::vector<const RunRow*> rows;
    for (const QString& id : m_selectedIds) {
        if (const RunRow* r = m_runs->run(id)) {
            rows.push_back(r);
        }
    }
    m_annotations->setRuns(rows);
}

void ComparePage::fillBaselineCombo() {
    const QSignalBlocker block(m_baselineCombo);
    m_baselineCombo->clear();
    m_baselineCombo->addItem(tr("(none)"), QString());
    for (const CompareRun& r : m_data.runs) {
        m_baselineCombo->addItem(r.run.name.isEmpty() ? r.run.id : r.run.name, r.run.id);
    }
    const int at = m_baselineCombo->findData(m_baselineId);
    m_baselineCombo->setCurrentIndex(at >= 0 ? at : 0);
}

void ComparePage::setGroupBy(const QString& key) {
    m_groupBy = key;
    const int at = m_groupCombo->findData(key);
    if (at >= 0) {
        m_groupCombo->setCurrentIndex(at);  // redraws
    }
    redraw();
}

QStringList ComparePage::groupByKeys() const {
    QStringList keys;
    for (int i = 1; i < m_groupCombo->count(); ++i) {
        keys << m_groupCombo->itemData(i).toString();
    }
    return keys;
}

void ComparePage::fillGroupCombo() {
    const QSignalBlocker block(m_groupCombo);
    m_groupCombo->clear();
    m_groupCombo->addItem(tr("(none)"), QString());
    for (const QString& key : gui::groupByKeys(m_data)) {
        m_groupCombo->addItem(key, key);
    }
    if (!m_groupBy.isEmpty() && m_groupCombo->findData(m_groupBy) < 0) {
        m_groupCombo->addItem(m_groupBy, m_groupBy);  // kept: the same value in every run
    }
    m_groupCombo->setCurrentIndex(std::max(0, m_groupCombo->findData(m_groupBy)));
}

void ComparePage::showRunsMenu(const QPoint& pos) {
    const QModelIndex index = m_table->indexAt(pos);
    if (!index.isValid()) {
        return;
    }
    const QString id = index.data(RunListModel::RunIdRole).toString();
    QMenu menu(this);
    QAction* use = menu.addAction(tr("Use as baseline"));
    QAction* clear = menu.addAction(tr("Clear baseline"));
    clear->setEnabled(!m_baselineId.isEmpty());
    QAction* chosen = menu.exec(m_table->viewport()->mapToGlobal(pos));
    if (chosen == use) {
        setBaselineRun(id);
        emit statusMessage(tr("baseline: %1").arg(id));
    } else if (chosen == clear) {
        setBaselineRun(QString());
    }
}

void ComparePage::redraw() {
    if (m_data.runs.empty()) {
        setExportsEnabled(this, false);
        return;
    }
    const QString metric = this->metric();
    const auto axis = static_cast<CompareAxis>(m_axisCombo->currentData().toInt());
    const double weight = m_smoothing->value();
    const int baseline = m_baselineId.isEmpty() ? -1 : runIndex(m_data, m_baselineId);
    const bool differences = m_diffCurves->isChecked() && baseline >= 0;
    std::vector<QColor> colors;
    const bool grouped = !differences && !m_groupBy.isEmpty();
    std::vector<PlotSeries> series =
        differences ? differenceSeries(m_data, metric, axis, baseline, weight, &colors)
                    : compareSeries(m_data, metric, axis, weight, &colors);
    if (grouped) {
        series = groupSeries(m_data, m_groupBy, metric, axis, weight);
    }
    m_plot->setTitle(metric.isEmpty() ? tr("No metric recorded for these runs")
                     : differences    ? tr("%1 − baseline").arg(metric)
                     : grouped        ? tr("%1 by %2 (mean, min–max)").arg(metric, m_groupBy)
                                      : metric);
    m_plot->setXAxisKind(axis == CompareAxis::WallTime ? XAxisKind::ElapsedSeconds
                                                       : XAxisKind::Number);
    m_plot->setYIncludesZero(false);
    m_plot->setAxisLabels(compareXLabel(m_data, metric, axis), metric);
    setExportsEnabled(this, !series.empty());
    m_plot->setSeries(std::move(series));
    m_plot->setEvents(forkMarkers(m_data, metric, axis));  // where a forked run leaves its parent
    m_plot->setFollowing(true);
    QStringList extra;
    for (const QString& m : m_gridExtra->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        extra << m.trimmed();
    }
    m_grid->setGroupBy(grouped ? m_groupBy : QString());
    m_grid->setData(m_data, extra, axis, weight);
    m_compare->setBaseline(baseline, m_deltaStep->value() >= 0
                                         ? std::optional<double>(m_deltaStep->value())
                                         : std::nullopt);
    m_compare->setData(m_data, metric, colors);
    m_diffView->resizeColumnsToContents();
    // A long value (launcher.argv) must not push the other runs' columns out of view: each run's
    // column gets at most an equal share of the width (the cell elides; its tooltip is whole).
    const int columns = m_compare->columnCount();
    if (columns > 1) {
        const int share = std::max(
            120, (m_diffView->viewport()->width() - m_diffView->columnWidth(0)) / (columns - 1));
        for (int c = 1; c < columns; ++c) {
            m_diffView->setColumnWidth(c, std::min(m_diffView->columnWidth(c), share));
        }
    }
}

QString ComparePage::exportDialog(const QString& filter, const QString& suffix) {
    QString path = QFileDialog::getSaveFileName(this, tr("Export"), QString(), filter);
    if (!path.isEmpty() && !path.endsWith(suffix)) {
        path += suffix;
    }
    return path;
}

bool ComparePage::exportPng(const QString& path) {
    if (!exportsEnabled(this)) {
        emit statusMessage(tr("nothing to export: select 2 to 10 runs with a metric"));
        return false;
    }
    const bool ok = m_plot->savePng(path, 1400, 700);
    emit statusMessage(ok ? tr("wrote %1").arg(path) : m_plot->lastError());
    return ok;
}

bool ComparePage::exportSvg(const QString& path) {
    if (!exportsEnabled(this)) {
        emit statusMessage(tr("nothing to export: select 2 to 10 runs with a metric"));
        return false;
    }
    const bool ok = m_plot->saveSvg(path, 1400, 700);
    emit statusMessage(ok ? tr("wrote %1").arg(path) : m_plot->lastError());
    return ok;
}

bool ComparePage::exportCsv(const QString& path) {
    if (!exportsEnabled(this)) {
        emit statusMessage(tr("nothing to export: select 2 to 10 runs with a metric"));
        return false;
    }
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
        emit statusMessage(tr("%1: cannot write: %2").arg(path, f.errorString()));
        return false;
    }
    const QString csv =
        compareCsv(m_data, metric(), static_cast<CompareAxis>(m_axisCombo->currentData().toInt()),
                   m_smoothing->value());
    f.write(csv.toUtf8());
    emit statusMessage(tr("wrote %1").arg(path));
    return true;
}

}  // namespace runplane::gui
