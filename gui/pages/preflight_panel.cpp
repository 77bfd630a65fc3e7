#include "gui/pages/preflight_panel.h"

#include <QBrush>
#include <QCheckBox>
#include <QColor>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include <cstdlib>

#include "backend/control/recipe_preflight.h"
#include "gui/models/run_derivations.h"
#include "gui/pages/off_gui_thread.h"

namespace runplane::gui {
namespace {

QString mark(control::CheckState s) {
    switch (s) {
        case control::CheckState::Pass:
            return QStringLiteral("PASS");
        case control::CheckState::Warn:
            return QStringLiteral("WARN");
        case control::CheckState::Fail:
            return QStringLiteral("FAIL");
        case control::CheckState::Skip:
            return QStringLiteral("skip");
        case control::CheckState::Unspecified:
            break;
    }
    return QStringLiteral("-");
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace

void PreflightTableModel::setTable(control::PreflightTable table) {
    beginResetModel();
    m_table = std::move(table);
    m_ids = m_table.checkIds();
    endResetModel();
}

int PreflightTableModel::columnOf(const std::string& checkId) const {
    for (std::size_t i = 0; i < m_ids.size(); ++i) {
        if (m_ids[i] == checkId) {
            return FirstCheckColumn + static_cast<int>(i);
        }
    }
    return -1;
}

QString PreflightTableModel::summary() const {
    const auto failures = m_table.failures();
    QString out = tr("%1 node(s): %2 failed check(s)")
                      .arg(m_table.rows.size())
                      .arg(static_cast<qsizetype>(failures.size()));
    for (const auto& c : m_table.clusterChecks) {
        if (c.status != control::CheckState::Pass) {
            out += QStringLiteral("; %1 %2: %3").arg(q(c.id), mark(c.status), q(c.message));
        }
    }
    return out;
}

int PreflightTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_table.rows.size());
}

int PreflightTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : FirstCheckColumn + static_cast<int>(m_ids.size());
}

QVariant PreflightTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case NodeColumn:
            return tr("Node");
        case HostColumn:
            return tr("Host");
        case GpuColumn:
            return tr("GPUs (UUID)");
        default:
            break;
    }
    const auto i = static_cast<std::size_t>(section - FirstCheckColumn);
    return i < m_ids.size() ? QVariant(q(m_ids[i])) : QVariant();
}

QVariant PreflightTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) {
        return {};
    }
    const control::PreflightRow& row = m_table.rows[static_cast<std::size_t>(index.row())];
    if (index.column() < FirstCheckColumn) {
        if (role != Qt::DisplayRole && role != Qt::ToolTipRole) {
            return {};
        }
        switch (index.column()) {
            case NodeColumn:
                return q(row.address);
            case HostColumn:
                return row.reachable
                           ? q(row.hostname)
                           : (role == Qt::ToolTipRole ? q(row.error) : tr("(daemon lost)"));
            default: {
                QStringList uuids;
                for (const auto& u : row.gpuUuids) {
                    uuids << q(u);
                }
                return row.gpuUuids.empty() ? QVariant(row.reachable ? tr("none") : QString())
                                            : QVariant(QStringLiteral("%1: %2")
                                                           .arg(uuids.size())
                                                           .arg(uuids.join(QStringLiteral(", "))));
            }
        }
    }
    const std::string& id = m_ids[static_cast<std::size_t>(index.column() - FirstCheckColumn)];
    const control::CheckState worst = row.worst(id);
    if (role == Qt::DisplayRole) {
        return mark(worst);
    }
    if (role == Qt::ToolTipRole) {
        QStringList lines;
        for (const auto& c : row.checks) {
            if (c.id == id) {
                lines << QStringLiteral("%1: %2%3")
                             .arg(mark(c.status), q(c.message),
                                  c.detail.empty() ? QString()
                                                   : QStringLiteral(" (%1)").arg(q(c.detail)));
            }
        }
        return lines.join(QLatin1Char('\n'));
    }
    if (role == Qt::BackgroundRole) {
        if (worst == control::CheckState::Fail) {
            return QBrush(QColor(0xf4, 0xc7, 0xc3));
        }
        if (worst == control::CheckState::Warn) {
            return QBrush(QColor(0xfc, 0xe8, 0xb2));
        }
    }
    return {};
}

ClusterPreflightRequest clusterPreflightRequest(
    const std::vector<std::string>& addresses, const plan::Recipe* recipe,
    const plan::ModelCatalog* catalog, const std::map<std::string, std::string>& environment) {
    ClusterPreflightRequest out;
    if (recipe != nullptr) {
        control::RecipePreflightOptions options;
        options.catalog = catalog;
        options.catalogError = catalog == nullptr ? "no model catalog found next to runplane" : "";
        auto built = control::recipePreflight(*recipe, plan::writeRecipe(*recipe), addresses.size(),
                                              options);
        if (!built) {
            out.error = built.error();
            return out;
        }
        out.specs = std::move(built->specs);
        out.notes = std::move(built->notes);
        for (const auto& f : built->hfFindings) {
            out.notes.push_back(plan::formatFinding(f, "checkpoint config.json"));
        }
    } else {
        control::PreflightSpec spec;
        spec.multiNode = addresses.size() > 1;
        out.specs.assign(addresses.size(), spec);
    }
    for (auto& spec : out.specs) {
        spec.env.insert(environment.begin(), environment.end());  // keeps the recipe's
        if (auto it = spec.env.find("MASTER_ADDR");
            spec.masterAddr.empty() && it != spec.env.end()) {
            spec.masterAddr = it->second;
        }
    }
    control::defaultRank0(out.specs, addresses);
    return out;
}

std::map<std::string, std::string> socketEnvironment() {
    std::map<std::string, std::string> out;
    for (const char* name : {"NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR"}) {
        if (const char* value = std::getenv(name); value != nullptr) {
            out[name] = value;
        }
    }
    return out;
}

PreflightPanel::PreflightPanel(QWidget* parent)
    : NodeCheckPanel({tr("Preflight:"), tr("Preflight"),
                      tr("Run every daemon's preflight checks, as `runplanectl dispatch "
                         "preflight --recipe` does (the recipe's NCCL_SOCKET_IFNAME, "
                         "GLOO_SOCKET_IFNAME and MASTER_ADDR, else this environment's)"),
                      true},
                     parent) {
    m_model = new PreflightTableModel(this);
    setModel(m_model);
    m_useRecipe = new QCheckBox(
        tr("No recipe from the Design page: GPUs, model and host memory are not checked"), this);
    m_useRecipe->setEnabled(false);
    // a long recipe name or path must not widen the page past 1280 px (the tooltip has it all)
    m_useRecipe->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    connect(m_useRecipe, &QCheckBox::clicked, this, [this] { m_userChose = true; });
    if (auto* box = qobject_cast<QVBoxLayout*>(layout())) {
        box->insertWidget(1, m_useRecipe);  // under the button bar, over the table
    }
}

void PreflightPanel::setRecipe(const plan::Recipe& recipe, const QString& source, bool preferred) {
    m_recipe = recipe;
    const int nodes = std::max(1, recipe.cluster.nodes);
    m_useRecipe->setText(
        tr("Expect the Design page's recipe %1 (%2): %3 node(s) of %4 %5 GPU(s), its memory plan, "
           "NCCL and MASTER_ADDR")
            .arg(q(recipe.name), source)
            .arg(nodes)
            .arg(recipe.hardware.gpusPerNode)
            .arg(q(recipe.hardware.gpu)));
    m_useRecipe->setToolTip(m_useRecipe->text());
    m_useRecipe->setEnabled(true);
    if (!m_userChose) {
        m_useRecipe->setChecked(preferred);
    }
}

bool PreflightPanel::usingRecipe() const {
    return m_recipe.has_value() && m_useRecipe->isChecked();
}

bool PreflightPanel::refresh(const QStringList& addresses,
                             const control::NodeClientOptions& options) {
    if (!beginAsking(addresses.size())) {
        return false;
    }
    std::optional<plan::Recipe> recipe;
    if (usingRecipe()) {
        recipe = m_recipe;
    }
    // the plan and the blocking gRPC calls off the GUI thread; the answer comes back by value
    runOffGuiThread(
        this,
        [list = addressList(addresses), options, recipe = std::move(recipe),
         environment = socketEnvironment()] {
            auto request =
                clusterPreflightRequest(list, recipe ? &*recipe : nullptr,
                                        recipe ? defaultModelCatalog() : nullptr, environment);
            std::pair<control::PreflightTable, std::vector<std::string>> answer;
            if (!request.error.empty()) {
                answer.second.push_back(request.error);
                return answer;
            }
            answer.first = control::preflightNodes(list, request.specs, options);
            answer.second = std::move(request.notes);
            return answer;
        },
        [](PreflightPanel* panel, auto answer) {
            panel->apply(std::move(answer.first), answer.second);
        });
    return true;
}

void PreflightPanel::apply(control::PreflightTable table, const std::vector<std::string>& notes) {
    m_model->setTable(std::move(table));
    QString summary = m_model->summary();
    for (const auto& note : notes) {
        summary += QStringLiteral("; ") + q(note);
    }
    finishAsking(summary);
}

}  // namespace runplane::gui
