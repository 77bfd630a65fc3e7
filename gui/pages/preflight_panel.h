#pragma once
// PreflightPanel (issue 47, "Bring-up that proves who joined"): the Cluster page's per-node
// preflight table, the same node x check table `runplanectl dispatch preflight` prints
// (control::preflightAll): one row per daemon with its hostname, the GPU UUIDs it sees, and one
// column per check (net.ifname says which interfaces NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME
// select, net.master_addr whether MASTER_ADDR is reachable from that host, ray.installed, ...;
// the cell's tooltip is the check's sentence), and a summary line with the cross-node checks
// (ray.same_version, gpu.distinct). With the Design page's recipe (setRecipe, a check box to
// leave it out) each node is asked what `dispatch preflight --recipe` asks: its GPU count and
// model, its host-memory peak from the plan, the NCCL version, the recipe's environment, and
// MASTER_ADDR (the recipe's, else the first node's host) probed at the first node's daemon port
// (recipe_preflight.h). refresh() builds the requests and asks every daemon at once on a
// background thread; the table crosses back to the GUI thread as a value and is applied only if
// the panel still exists.

#include <QAbstractTableModel>
#include <QStringList>
#include <QWidget>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/control/dispatch.h"
#include "backend/plan/catalog.h"
#include "backend/plan/recipe.h"
#include "gui/pages/node_check_panel.h"

class QCheckBox;

namespace runplane::gui {

/// The table as a Qt model: Node, Host, GPUs, then one column per check id (first-seen order).
class PreflightTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column { NodeColumn = 0, HostColumn = 1, GpuColumn = 2, FirstCheckColumn = 3 };
    using QAbstractTableModel::QAbstractTableModel;

    void setTable(control::PreflightTable table);
    const control::PreflightTable& table() const { return m_table; }
    /// The column of a check id, or -1.
    int columnOf(const std::string& checkId) const;
    /// "N node(s): K failed check(s)" then every cluster check that is not PASS.
    QString summary() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

  private:
    control::PreflightTable m_table;
    std::vector<std::string> m_ids;
};

/// What the page asks each node, and what it could not ask.
struct ClusterPreflightRequest {
    std::vector<control::PreflightSpec> specs;  // one per address
    std::vector<std::string> notes;             // e.g. "host-memory check skipped: …"
    std::string error;                          // "" = the specs are usable
};

/// The requests for `addresses` (rank 0 first). With `recipe`: the recipe's expectations
/// (control::recipePreflight, the plan from `catalog`); without: a multi-node run when there is
/// more than one node, and no GPU, model or memory expectation. Variables of `environment` the
/// recipe does not set are added (what a run launched from here would be given). MASTER_ADDR
/// defaults to the first node's host and is probed at its daemon port (control::defaultRank0).
ClusterPreflightRequest clusterPreflightRequest(
    const std::vector<std::string>& addresses, const plan::Recipe* recipe,
    const plan::ModelCatalog* catalog, const std::map<std::string, std::string>& environment);

/// NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME and MASTER_ADDR of this process, where set.
std::map<std::string, std::string> socketEnvironment();

class PreflightPanel : public NodeCheckPanel {
    Q_OBJECT
  public:
    explicit PreflightPanel(QWidget* parent = nullptr);

    /// The recipe whose expectations the next check asks (`source`: its file or "unsaved");
    /// `preferred`: whether to use it when the user has not ticked or cleared the box.
    void setRecipe(const plan::Recipe& recipe, const QString& source, bool preferred);
    /// Whether the next check uses the recipe.
    bool usingRecipe() const;
    QCheckBox* recipeCheck() const { return m_useRecipe; }

    /// Asks the daemons at `addresses` (the recipe's requests when usingRecipe()); a call while
    /// one is in flight is dropped (false).
    bool refresh(const QStringList& addresses, const control::NodeClientOptions& options);
    PreflightTableModel* model() const { return m_model; }

    /// Shows `table` (what refresh() applies when the daemons answered), with `notes` on what was
    /// not asked.
    void apply(control::PreflightTable table, const std::vector<std::string>& notes = {});

  private:
    PreflightTableModel* m_model = nullptr;
    QCheckBox* m_useRecipe = nullptr;
    std::optional<plan::Recipe> m_recipe;
    bool m_userChose = false;  // the user ticked or cleared the box: setRecipe keeps their choice
};

}  // namespace runplane::gui
