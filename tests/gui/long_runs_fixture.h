#pragma once
// A history of many runs with long names, every third failed with a long CUDA OOM cause, and the
// checks on a run list's columns (issue 46: no horizontal scroll at 1280×720). Used by
// runs_columns_test.cpp (the Runs page) and compare_fit_test.cpp (the Compare page).

#include <gtest/gtest.h>

#include <QFontMetrics>
#include <QHeaderView>
#include <QScrollBar>
#include <QStyle>
#include <QTableView>

#include <initializer_list>
#include <string>

#include "db/history/history.h"
#include "gui/models/run_models.h"
#include "tests/gui/synthetic_history.h"

namespace runplane::gui::test {

inline constexpr int kLongRuns = 40;

inline QString longRunName(int i) {
    return QStringLiteral(
               "qwen3-30b-a3b grpo lora r%1 on gsm8k+math, rollout 64x8, kl 0.001, "
               "colocated, second attempt after the weight-sync fix")
        .arg(i);
}

/// kLongRuns runs with long names, every third failed with a long CUDA OOM cause.
inline void writeLongRunsHistory(const QString& path) {
    auto h = db::History::open(path.toStdString());
    ASSERT_TRUE(h) << h.error();
    for (int i = 0; i < kLongRuns; ++i) {
        SyntheticRunSpec spec;
        spec.runId = "run-" + std::to_string(i);
        spec.name = longRunName(i).toStdString();
        spec.seconds = 90;
        spec.nodes = {"node-" + std::to_string(i)};
        spec.gpusPerNode = 1;
        spec.evalSteps = 3;
        spec.plantSpike = false;
        spec.startNs += static_cast<std::int64_t>(i) * 3600 * 1'000'000'000LL;
        auto written = writeSyntheticRun(**h, spec);
        ASSERT_TRUE(written) << written.error();
        if (i % 3 == 0) {
            db::IngestBatch batch;
            batch.nodeId = db::NodeId{spec.nodes.front()};
            db::IngestEvent oom;
            oom.tNs = spec.startNs + 80 * 1'000'000'000LL;
            oom.runId = db::RunId{spec.runId};
            oom.kind = "cuda_oom";
            oom.message =
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 "
                "has a total capacity of 79.10 GiB of which 1.20 GiB is free. Of the allocated "
                "memory 74.31 GiB is allocated by PyTorch";
            batch.events.push_back(oom);
            ASSERT_TRUE((*h)->ingest(batch));
            db::RunRecord run;
            run.id = db::RunId{spec.runId};
            run.name = spec.name;
            run.state = db::RunState::Failed;
            run.startedNs = spec.startNs;
            run.endedNs = spec.startNs + spec.seconds * 1'000'000'000LL;
            run.nodes = spec.nodes;
            run.message = "exit 1";
            ASSERT_TRUE((*h)->upsertRun(run));
        }
    }
}

/// The width a cell needs to show `text` whole (the delegate's margins).
inline int neededWidth(const QTableView& view, const QString& text) {
    const int margin = view.style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, &view) + 1;
    return QFontMetrics(view.font()).horizontalAdvance(text) + 2 * margin;
}

/// What is wrong with a run list's columns now ("" when none): a horizontal scroll bar, a
/// visible column narrower than its header's title, the columns wider than the viewport.
inline std::string runColumnProblems(QTableView* table) {
    std::string problems;
    if (table->horizontalScrollBar()->isVisible() || table->horizontalScrollBar()->maximum() > 0) {
        problems += "horizontal scroll bar (maximum " +
                    std::to_string(table->horizontalScrollBar()->maximum()) + "); ";
    }
    const QFontMetrics metrics(table->horizontalHeader()->font());
    int total = 0;
    for (int c = 0; c < RunListModel::ColumnCount; ++c) {
        if (table->isColumnHidden(c)) {
            continue;
        }
        total += table->columnWidth(c);
        const QString title = table->model()->headerData(c, Qt::Horizontal).toString();
        if (table->columnWidth(c) < metrics.horizontalAdvance(title)) {
            problems += "'" + title.toStdString() + "' " + std::to_string(table->columnWidth(c)) +
                        " px < its header's " + std::to_string(metrics.horizontalAdvance(title)) +
                        " px; ";
        }
    }
    if (total > table->viewport()->width()) {
        problems += "columns " + std::to_string(total) + " px in a " +
                    std::to_string(table->viewport()->width()) + " px list; ";
    }
    return problems;
}

/// The default columns' promise at a small size, as gtest failures: each of `whole` shows every
/// row's text whole (a date cut to "2026-0…" is not readable), the run name keeps at least
/// 110 px, and a long name elides (narrower than its text, which the model keeps whole).
inline void expectWholeColumnsAndAnElidedName(QTableView* table, std::initializer_list<int> whole) {
    for (int c : whole) {
        for (int r = 0; r < table->model()->rowCount(); ++r) {
            const QString text = table->model()->index(r, c).data().toString();
            EXPECT_GE(table->columnWidth(c), neededWidth(*table, text))
                << "'" << text.toStdString() << "' is cut";
        }
    }
    EXPECT_GE(table->columnWidth(RunListModel::NameColumn), 110);
    const QModelIndex first = table->model()->index(0, RunListModel::NameColumn);
    EXPECT_LT(table->columnWidth(RunListModel::NameColumn),
              table->fontMetrics().horizontalAdvance(first.data().toString()));
    EXPECT_TRUE(first.data().toString().startsWith(QStringLiteral("qwen3-30b-a3b grpo lora")));
}

}  // namespace runplane::gui::test
