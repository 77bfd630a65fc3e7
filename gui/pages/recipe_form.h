#pragma once
// RecipeForm: a form with one editor per recipe field, section by section (framework, model,
// hardware, cluster, placement, trainer, rollout, batch, algorithm, optimizer, LoRA, memory
// safeguards, NCCL, checkpoints, eval). Each editor is a binding: load from the recipe, store
// into a copy of it, and a rule that disables it (with the reason as tooltip) when it makes no
// sense for the current choice. Every edit emits edited(newRecipe, fieldPath).
// GUI thread only; owns its widgets; holds a copy of the recipe it shows.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

#include "backend/plan/recipe.h"
#include "backend/plan/rules.h"

class QFormLayout;
class QGroupBox;
class QScrollArea;
class QVBoxLayout;
class QComboBox;

namespace runplane::plan {
class ModelCatalog;
}

namespace runplane::gui {

/// A known node type for the hardware-profile picker (recipe_form_more.cpp cites the sources).
struct HardwareProfile {
    const char* gpu;
    const char* label;
    double gpuMemoryGb;
    int gpusPerNode;
    double hostRamGb;
    plan::CpuArch cpuArch;
};
const std::vector<HardwareProfile>& hardwareProfiles();
/// The profile the hardware section matches exactly, or -1 (custom).
int matchingProfile(const plan::Hardware& hardware);

/// analysis.metric_kinds as the Design page edits it: one "PATTERN: KIND [DIRECTION]" per line
/// ("eval/arith/time: time", "eval/judge/*: score lower"). Lines that do not read are left out
/// and described in *errors ("line 2: unknown kind 'scroe'"); blank lines are skipped.
std::vector<metrics::KindOverride> parseMetricKindLines(const QString& text,
                                                        QStringList* errors = nullptr);
QString metricKindLines(const std::vector<metrics::KindOverride>& overrides);

class RecipeForm : public QWidget {
    Q_OBJECT
  public:
    explicit RecipeForm(QWidget* parent = nullptr);
    ~RecipeForm() override;

    /// Shows a recipe (no edited() signal).
    void setRecipe(const plan::Recipe& recipe);
    const plan::Recipe& recipe() const { return m_recipe; }
    /// Model names and variants offered by the model combo.
    void setCatalog(std::shared_ptr<const plan::ModelCatalog> catalog);
    /// Marks the editors that have findings (red: error, orange: warning).
    void setFindings(const std::vector<plan::Finding>& findings);

    /// Scrolls to, focuses and highlights the editor of a field path (or its nearest bound
    /// parent, e.g. "rollout.eplb" -> "rollout.eplb.enabled", else its section). False if none.
    bool focusField(const QString& path);
    /// The editor bound to exactly this path, or nullptr (tests).
    QWidget* editor(const QString& path) const;
    /// Why the editor of path is disabled ("" when enabled).
    QString disabledReason(const QString& path) const;
    QStringList boundPaths() const;
    /// The bound path whose editor changes `path` (a finding's field): itself, a documented
    /// alias (model.shape -> model.name), its first bound child, or its nearest bound parent;
    /// "" when none.
    QString editorPathFor(const QString& path) const;

  signals:
    void edited(const plan::Recipe& recipe, const QString& fieldPath);

  private:
    struct Binding {
        QString path;
        QWidget* editor = nullptr;
        QWidget* label = nullptr;
        QGroupBox* section = nullptr;
        std::function<void(const plan::Recipe&)> load;
        std::function<void(plan::Recipe&)> store;
        std::function<QString(const plan::Recipe&)> disabledWhy;
        QString baseTooltip;
    };
    using Reason = std::function<QString(const plan::Recipe&)>;

    QFormLayout* section(const QString& title, const QString& prefix);
    Binding& bind(QFormLayout* form, const QString& path, const QString& label, QWidget* editor,
                  std::function<void(const plan::Recipe&)> load,
                  std::function<void(plan::Recipe&)> store, Reason why,
                  const QString& tooltip = {});
    void addInt(QFormLayout* f, const QString& path, const QString& label,
                std::function<int&(plan::Recipe&)> ref, int min, int max, Reason why = {},
                const QString& tooltip = {});
    /// An optional int: the special value below `min` reads "default".
    void addOptInt(QFormLayout* f, const QString& path, const QString& label,
                   std::function<std::optional<int>&(plan::Recipe&)> ref, int min, int max,
                   Reason why = {}, const QString& tooltip = {});
    void addDouble(QFormLayout* f, const QString& path, const QString& label,
                   std::function<double&(plan::Recipe&)> ref, double min, double max, int decimals,
                   Reason why = {}, const QString& tooltip = {});
    void addBool(QFormLayout* f, const QString& path, const QString& label,
                 std::function<bool&(plan::Recipe&)> ref, Reason why = {},
                 const QString& tooltip = {});
    void addOptBool(QFormLayout* f, const QString& path, const QString& label,
                    std::function<std::optional<bool>&(plan::Recipe&)> ref, Reason why = {},
                    const QString& tooltip = {});
    void addText(QFormLayout* f, const QString& path, const QString& label,
                 std::function<std::string&(plan::Recipe&)> ref, Reason why = {},
                 const QString& tooltip = {});
    template <typename E>
    void addEnum(QFormLayout* f, const QString& path, const QString& label,
                 std::function<E&(plan::Recipe&)> ref, std::initializer_list<E> values,
                 Reason why = {}, const QString& tooltip = {});
    template <typename E>
    void addOptEnum(QFormLayout* f, const QString& path, const QString& label,
                    std::function<std::optional<E>&(plan::Recipe&)> ref,
                    std::initializer_list<E> values, const QString& defaultText, Reason why = {},
                    const QString& tooltip = {});
    void addModelFields(QFormLayout* f);
    // recipe_form_more.cpp
    QFormLayout* sectionForm(const QString& prefix);
    void addFindingFields();
    void addHardwareProfile(QFormLayout* f);
    void addListText(QFormLayout* f, const QString& path, const QString& label,
                     std::function<std::vector<std::string>&(plan::Recipe&)> ref, Reason why = {},
                     const QString& tooltip = {});
    void addArgv(QFormLayout* f);
    void addEvalDatasets(QFormLayout* f);
    void addAnalysisFields();
    void addRuleFields();
    void addExtraArgs(QFormLayout* f);
    void commit(const Binding& binding);
    void refreshEnabled();
    void refreshVariants();
    const plan::ModelShape* currentModel() const;

    QScrollArea* m_scroll = nullptr;
    QVBoxLayout* m_sections = nullptr;
    std::vector<std::unique_ptr<Binding>> m_bindings;
    std::vector<std::pair<QString, QGroupBox*>> m_sectionBoxes;
    plan::Recipe m_recipe;
    std::shared_ptr<const plan::ModelCatalog> m_catalog;
    QComboBox* m_modelCombo = nullptr;
    QComboBox* m_variantCombo = nullptr;
    bool m_loading = false;
    QWidget* m_highlighted = nullptr;
};

}  // namespace runplane::gui
