#pragma once
// RecipeForm: a form with one editor per recipe field, section by section in the recipe's order.
// The editors of the scalar fields are built from the recipe field table (plan::recipeFields():
// label, tooltip, range, when the field applies), so every field has one; the structured parts
// (model picker, hardware profile, eval datasets, metric kinds, extra_args) have editors of
// their own. Each editor is a binding: load from the recipe, store into a copy of it, and a rule
// that disables it (with the reason as tooltip) when it makes no sense for the current choice.
// Every edit emits edited(newRecipe, fieldPath).
// GUI thread only; owns its widgets; holds a copy of the recipe it shows.

#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

#include "backend/plan/recipe.h"
#include "backend/plan/recipe_fields.h"
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
    /// Wide enough for the content (no horizontal scroll bar) and its vertical scroll bar.
    QSize minimumSizeHint() const override;

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
    /// The editor of one field of the table (plan::recipeFields()): its kind picks the widget,
    /// the table gives the label, tooltip, range and when it applies; `extra` adds a reason the
    /// GUI alone knows (the catalog's model).
    void addField(QFormLayout* f, const plan::RecipeField& field, Reason extra = {});
    void addModelFields(QFormLayout* f);
    void addEvalDatasets(QFormLayout* f);
    /// The section of a first path component, made (titled, in order of arrival) if new.
    QFormLayout* sectionForm(const QString& prefix);
    // recipe_form_more.cpp
    void addHardwareProfile(QFormLayout* f);
    /// A list field edited one item per line (launcher.argv, launcher.pre_launch).
    void addLines(QFormLayout* f, const plan::RecipeField& field);
    void addMetricKinds(QFormLayout* f);
    void addMemoryAlarm(QFormLayout* f, const plan::RecipeField& field);
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
