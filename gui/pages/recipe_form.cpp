// The Design form's editors come from the recipe field table (backend/plan/recipe_fields.h): one
// loop builds every scalar field's editor; the structured parts are added where they sit.
#include "gui/pages/recipe_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "backend/plan/catalog.h"
#include "gui/models/qt_text.h"
#include "gui/pages/form_input.h"

namespace runplane::gui {

namespace {

// Characters a combo box of the form asks room for (its items may be longer: elided).
constexpr int kComboChars = 14;

using plan::FieldKind;
using plan::FieldValue;
using plan::Recipe;
using plan::RecipeField;

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

const char* kHighlightStyle = "border: 2px solid #1565c0; background: #e3f2fd;";

// The form's sections, in order: the first path component of the fields they hold, and title.
struct SectionTitle {
    const char* prefix;
    const char* title;
};
constexpr SectionTitle kSectionTitles[] = {
    {"name", QT_TRANSLATE_NOOP("RecipeForm", "Run")},
    {"model", QT_TRANSLATE_NOOP("RecipeForm", "Model")},
    {"hardware", QT_TRANSLATE_NOOP("RecipeForm", "Hardware")},
    {"cluster", QT_TRANSLATE_NOOP("RecipeForm", "Cluster and placement")},
    {"trainer", QT_TRANSLATE_NOOP("RecipeForm", "Trainer parallelism")},
    {"rollout", QT_TRANSLATE_NOOP("RecipeForm", "Rollout engines")},
    {"batch", QT_TRANSLATE_NOOP("RecipeForm", "Batch")},
    {"algorithm", QT_TRANSLATE_NOOP("RecipeForm", "Algorithm")},
    {"optimizer", QT_TRANSLATE_NOOP("RecipeForm", "Optimizer")},
    {"lora", QT_TRANSLATE_NOOP("RecipeForm", "LoRA")},
    {"memory", QT_TRANSLATE_NOOP("RecipeForm", "Memory safeguards")},
    {"weight_update", QT_TRANSLATE_NOOP("RecipeForm", "Weight update")},
    {"environment", QT_TRANSLATE_NOOP("RecipeForm", "NCCL")},
    {"checkpoints", QT_TRANSLATE_NOOP("RecipeForm", "Checkpoints")},
    {"eval", QT_TRANSLATE_NOOP("RecipeForm", "Eval")},
    {"launcher", QT_TRANSLATE_NOOP("RecipeForm", "Launcher")},
    {"analysis", QT_TRANSLATE_NOOP("RecipeForm", "Analysis")},
};

/// The form section of a field: its YAML section, the top-level fields under "Run" except
/// placement, which sits with the cluster.
QString sectionOf(const RecipeField& f) {
    if (f.section.empty()) {
        return f.path == "placement" ? QStringLiteral("cluster") : QStringLiteral("name");
    }
    return qs(f.section.substr(0, f.section.find('.')));
}

QString titleOf(const QString& prefix) {
    for (const SectionTitle& t : kSectionTitles) {
        if (prefix == QLatin1String(t.prefix)) {
            return RecipeForm::tr(t.title);
        }
    }
    return prefix;
}

/// The spin box range of a numeric field: its bound, widened to its default (rollout_batch_size
/// is 0 until set) and kept in int range for QSpinBox.
std::pair<double, double> rangeOf(const RecipeField& f) {
    double lo = f.bound->min;
    double hi = f.bound->max;
    const FieldValue def = f.defaultValue();
    if (const int* i = std::get_if<int>(&def)) {
        lo = std::min(lo, double(*i));
    } else if (const double* d = std::get_if<double>(&def)) {
        lo = std::min(lo, *d);
    }
    if (f.kind == FieldKind::Int) {
        lo = std::max(lo, double(INT_MIN + 1));
        hi = std::min(hi, double(INT_MAX));
    }
    return {lo, hi};
}

QString unsetText(const RecipeField& f) {
    return *f.unsetText != '\0' ? RecipeForm::tr(f.unsetText) : RecipeForm::tr("default");
}

QString joinList(const FieldValue& v) {
    QStringList parts;
    if (const auto* ints = std::get_if<std::vector<int>>(&v)) {
        for (int i : *ints) {
            parts << QString::number(i);
        }
    } else if (const auto* words = std::get_if<std::vector<std::string>>(&v)) {
        for (const auto& w : *words) {
            parts << qs(w);
        }
    }
    return parts.join(QStringLiteral(", "));
}

FieldValue splitList(const RecipeField& f, const QString& text) {
    std::vector<int> ints;
    std::vector<std::string> words;
    for (const QString& part : text.split(QLatin1Char(','))) {
        const QString item = part.trimmed();
        if (item.isEmpty()) {
            continue;
        }
        if (f.kind == FieldKind::IntList) {
            bool ok = false;
            const int n = item.toInt(&ok);
            if (ok) {
                ints.push_back(n);  // a word that is not a number is left out until it is one
            }
        } else {
            words.push_back(item.toStdString());
        }
    }
    return f.kind == FieldKind::IntList ? FieldValue{std::move(ints)}
                                        : FieldValue{std::move(words)};
}

// Editors whose field the table has but whose widget is the form's own.
bool ownEditor(std::string_view path) {
    return path == "model.name" || path == "model.variant" || path == "launcher.argv" ||
           path == "launcher.pre_launch" || path == "analysis.memory_alarm_gb";
}

}  // namespace

RecipeForm::RecipeForm(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    m_scroll = new QScrollArea(this);
    m_scroll->setWidgetResizable(true);
    auto* content = new QWidget(m_scroll);
    m_sections = new QVBoxLayout(content);
    m_scroll->setWidget(content);
    outer->addWidget(m_scroll);

    // The catalog's model is the one thing the table cannot know: a dense model has no experts.
    const Reason denseModel = [this](const Recipe&) {
        const plan::ModelShape* model = currentModel();
        return model != nullptr && !model->isMoe()
                   ? tr("%1 is dense: it has no experts to shard").arg(qs(model->name))
                   : QString();
    };
    QString last;
    for (const RecipeField& field : plan::recipeFields()) {
        const QString prefix = sectionOf(field);
        if (!last.isEmpty() && last != prefix && last == QLatin1String("hardware")) {
            addHardwareProfile(sectionForm(last));
        }
        last = prefix;
        QFormLayout* f = sectionForm(prefix);
        if (field.path == "model.name") {
            addModelFields(f);
        } else if (field.path == "launcher.argv" || field.path == "launcher.pre_launch") {
            addLines(f, field);
        } else if (field.path == "analysis.memory_alarm_gb") {
            addMemoryAlarm(f, field);
        } else if (!ownEditor(field.path)) {
            const bool experts = field.path == "trainer.ep" || field.path == "trainer.etp";
            addField(f, field, experts ? denseModel : Reason{});
        }
        // The structured parts, after the field the YAML writes them after.
        if (field.path == "eval.interval") {
            addEvalDatasets(f);
        } else if (field.path == "analysis.primary_metric") {
            addMetricKinds(f);
        }
    }
    addExtraArgs(section(tr("Extra arguments"), QStringLiteral("extra_args")));
    m_sections->addStretch(1);
}

RecipeForm::~RecipeForm() = default;

// The pane's honest minimum (issue 46: the form was wider than its pane, behind a horizontal
// scroll bar): what the content needs, the vertical scroll bar and the frame.
QSize RecipeForm::minimumSizeHint() const {
    const QSize content = m_scroll->widget()->minimumSizeHint();
    return {content.width() + m_scroll->verticalScrollBar()->sizeHint().width() +
                2 * m_scroll->frameWidth(),
            QWidget::minimumSizeHint().height()};
}

QFormLayout* RecipeForm::sectionForm(const QString& prefix) {
    for (const auto& [p, box] : m_sectionBoxes) {
        if (p == prefix) {
            return qobject_cast<QFormLayout*>(box->layout());
        }
    }
    return section(titleOf(prefix), prefix);
}

QFormLayout* RecipeForm::section(const QString& title, const QString& prefix) {
    auto* box = new QGroupBox(title);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A label too long to sit beside its field goes above it: the form fits a narrow pane.
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    m_sections->addWidget(box);
    m_sectionBoxes.emplace_back(prefix, box);
    return form;
}

RecipeForm::Binding& RecipeForm::bind(QFormLayout* form, const QString& path, const QString& label,
                                      QWidget* editor, std::function<void(const Recipe&)> load,
                                      std::function<void(Recipe&)> store, Reason why,
                                      const QString& tooltip) {
    auto b = std::make_unique<Binding>();
    b->path = path;
    b->editor = editor;
    auto* l = new QLabel(label);
    l->setBuddy(editor);
    b->label = l;
    b->section = qobject_cast<QGroupBox*>(form->parentWidget());
    b->load = std::move(load);
    b->store = std::move(store);
    b->disabledWhy = std::move(why);
    b->baseTooltip = tooltip.isEmpty() ? path : path + QStringLiteral(": ") + tooltip;
    editor->setObjectName(path);
    editor->setToolTip(b->baseTooltip);
    if (auto* combo = qobject_cast<QComboBox*>(editor)) {
        // Its longest item (a hardware profile, a model name) does not set the form's width.
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(kComboChars);
    }
    form->addRow(l, editor);
    applyFormInputRules(editor);  // the wheel only when focused, Ctrl+Z undoes the recipe edit
    m_bindings.push_back(std::move(b));
    return *m_bindings.back();
}

void RecipeForm::commit(const Binding& binding) {
    if (m_loading) {
        return;
    }
    Recipe next = m_recipe;
    binding.store(next);
    if (next == m_recipe) {
        return;
    }
    m_recipe = next;
    if (binding.path.startsWith(QLatin1String("model."))) {
        refreshVariants();
    }
    // Every other editor shows the recipe as it is now: a hardware profile sets the hardware
    // fields, and GPUs per node changes the profile the picker names (issue 46).
    m_loading = true;
    for (const auto& b : m_bindings) {
        if (b.get() != &binding && b->path != QLatin1String("model.variant")) {
            b->load(m_recipe);
        }
    }
    m_loading = false;
    refreshEnabled();
    emit edited(m_recipe, binding.path);
}

void RecipeForm::addField(QFormLayout* f, const RecipeField& field, Reason extra) {
    const RecipeField* fp = &field;  // the table lives as long as the program
    Reason why = [fp, extra](const Recipe& r) {
        const char* own = fp->disabledWhy != nullptr ? fp->disabledWhy(r) : nullptr;
        if (own != nullptr) {
            return tr(own);
        }
        return extra ? extra(r) : QString();
    };
    const QString path = qs(field.path);
    const QString label = tr(field.label);
    const QString tooltip = tr(field.tooltip);
    switch (field.kind) {
        case FieldKind::Bool: {
            if (field.optional) {
                auto* combo = new QComboBox;
                combo->addItem(unsetText(field));
                combo->addItem(tr("on"));
                combo->addItem(tr("off"));
                Binding& b = bind(
                    f, path, label, combo,
                    [combo, fp](const Recipe& r) {
                        const FieldValue v = fp->get(r);
                        const bool* on = std::get_if<bool>(&v);
                        combo->setCurrentIndex(on == nullptr ? 0 : (*on ? 1 : 2));
                    },
                    [combo, fp](Recipe& r) {
                        const int i = combo->currentIndex();
                        fp->set(r, i <= 0 ? FieldValue{} : FieldValue{i == 1});
                    },
                    std::move(why), tooltip);
                connect(combo, &QComboBox::currentIndexChanged, this, [this, &b] { commit(b); });
                return;
            }
            auto* check = new QCheckBox;
            Binding& b = bind(
                f, path, label, check,
                [check, fp](const Recipe& r) {
                    const FieldValue v = fp->get(r);
                    check->setChecked(std::get_if<bool>(&v) != nullptr && std::get<bool>(v));
                },
                [check, fp](Recipe& r) { fp->set(r, FieldValue{check->isChecked()}); },
                std::move(why), tooltip);
            connect(check, &QCheckBox::toggled, this, [this, &b] { commit(b); });
            return;
        }
        case FieldKind::Int:
        case FieldKind::Double: {
            // One spin box for both numeric kinds: an optional field's "unset" sits one below
            // the bound's minimum (shown as the unset text).
            const auto [lo, hi] = rangeOf(field);
            auto bindSpin = [&](auto* spin, auto min, auto max) {
                using Value = decltype(min);
                spin->setRange(field.optional ? min - 1 : min, max);
                if (field.optional) {
                    spin->setSpecialValueText(unsetText(field));
                }
                Binding& b = bind(
                    f, path, label, spin,
                    [spin, fp, min](const Recipe& r) {
                        const FieldValue v = fp->get(r);
                        const Value* n = std::get_if<Value>(&v);
                        spin->setValue(n != nullptr ? *n : min - 1);
                    },
                    [spin, fp, min](Recipe& r) {
                        const bool unset = fp->optional && spin->value() < min;
                        fp->set(r, unset ? FieldValue{} : FieldValue{spin->value()});
                    },
                    std::move(why), tooltip);
                using Spin = std::remove_pointer_t<decltype(spin)>;
                connect(spin, &Spin::valueChanged, this, [this, &b] { commit(b); });
            };
            if (field.kind == FieldKind::Int) {
                bindSpin(new QSpinBox, static_cast<int>(lo), static_cast<int>(hi));
                return;
            }
            // A field shown to 6 or more decimals spans orders of magnitude (the learning
            // rate): it reads and shows scientific notation, 2e-6.
            auto* spin = field.decimals >= 6 ? new ScientificSpinBox : new QDoubleSpinBox;
            if (field.decimals < 6) {
                spin->setDecimals(field.decimals);
            }
            spin->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
            bindSpin(spin, lo, hi);
            return;
        }
        case FieldKind::String: {
            auto* edit = new QLineEdit;
            Binding& b = bind(
                f, path, label, edit,
                [edit, fp](const Recipe& r) {
                    const FieldValue v = fp->get(r);
                    const auto* text = std::get_if<std::string>(&v);
                    const QString shown = text != nullptr ? qs(*text) : QString();
                    if (edit->text() != shown) {
                        edit->setText(shown);
                    }
                },
                [edit, fp](Recipe& r) { fp->set(r, FieldValue{edit->text().toStdString()}); },
                std::move(why), tooltip);
            connect(edit, &QLineEdit::textEdited, this, [this, &b] { commit(b); });
            return;
        }
        case FieldKind::Enum: {
            auto* combo = new QComboBox;
            const int first = field.optional ? 1 : 0;
            if (field.optional) {
                combo->addItem(unsetText(field));
            }
            for (std::string_view choice : field.choices) {
                combo->addItem(qs(choice));
            }
            Binding& b = bind(
                f, path, label, combo,
                [combo, fp, first](const Recipe& r) {
                    const FieldValue v = fp->get(r);
                    const auto* name = std::get_if<std::string>(&v);
                    int at = 0;
                    if (name != nullptr) {
                        const auto it = std::find(fp->choices.begin(), fp->choices.end(), *name);
                        at = first + static_cast<int>(it - fp->choices.begin());
                    }
                    combo->setCurrentIndex(at);
                },
                [combo, fp, first](Recipe& r) {
                    const int i = combo->currentIndex() - first;
                    if (i < 0) {
                        fp->set(r, FieldValue{});
                    } else if (static_cast<size_t>(i) < fp->choices.size()) {
                        fp->set(r, FieldValue{std::string(fp->choices[static_cast<size_t>(i)])});
                    }
                },
                std::move(why), tooltip);
            connect(combo, &QComboBox::currentIndexChanged, this, [this, &b] { commit(b); });
            return;
        }
        case FieldKind::IntList:
        case FieldKind::StringList: {
            auto* edit = new QLineEdit;
            edit->setPlaceholderText(tr("comma-separated"));
            Binding& b = bind(
                f, path, label, edit,
                [edit, fp](const Recipe& r) {
                    // Keep what is being typed when it reads as the same list.
                    const FieldValue v = fp->get(r);
                    if (splitList(*fp, edit->text()) != v) {
                        edit->setText(joinList(v));
                    }
                },
                [edit, fp](Recipe& r) { fp->set(r, splitList(*fp, edit->text())); }, std::move(why),
                tooltip);
            connect(edit, &QLineEdit::textEdited, this, [this, &b] { commit(b); });
            return;
        }
    }
}

void RecipeForm::addModelFields(QFormLayout* f) {
    m_modelCombo = new QComboBox;
    m_modelCombo->setEditable(true);
    m_modelCombo->setInsertPolicy(QComboBox::NoInsert);
    Binding& name = bind(
        f, QStringLiteral("model.name"), tr(plan::recipeField("model.name").label), m_modelCombo,
        [this](const Recipe& r) { m_modelCombo->setCurrentText(qs(r.model.name)); },
        [this](Recipe& r) { r.model.name = m_modelCombo->currentText().trimmed().toStdString(); },
        Reason{}, tr(plan::recipeField("model.name").tooltip));
    connect(m_modelCombo, &QComboBox::currentTextChanged, this, [this, &name] { commit(name); });
    m_variantCombo = new QComboBox;
    Binding& variant = bind(
        f, QStringLiteral("model.variant"), tr(plan::recipeField("model.variant").label),
        m_variantCombo,
        [this](const Recipe& r) {
            const int at = m_variantCombo->findData(qs(r.model.variant));
            if (at < 0 && !r.model.variant.empty()) {
                m_variantCombo->addItem(qs(r.model.variant), qs(r.model.variant));
                m_variantCombo->setCurrentIndex(m_variantCombo->count() - 1);
            } else {
                m_variantCombo->setCurrentIndex(std::max(0, at));
            }
        },
        [this](Recipe& r) {
            r.model.variant = m_variantCombo->currentData().toString().toStdString();
        },
        [this](const Recipe&) {
            const plan::ModelShape* m = currentModel();
            return m != nullptr && m->variants.empty() ? tr("%1 has no variants").arg(qs(m->name))
                                                       : QString();
        });
    connect(m_variantCombo, &QComboBox::currentIndexChanged, this,
            [this, &variant] { commit(variant); });
}

void RecipeForm::addEvalDatasets(QFormLayout* f) {
    auto* edit = new QLineEdit;
    edit->setPlaceholderText(tr("name=path, name=path"));
    Binding& b = bind(
        f, QStringLiteral("eval.datasets"), tr("Datasets"), edit,
        [edit](const Recipe& r) {
            QStringList parts;
            for (const auto& d : r.eval.datasets) {
                parts << qs(d.name) + QLatin1Char('=') + qs(d.path);
            }
            const QString v = parts.join(QStringLiteral(", "));
            if (edit->text() != v) {
                edit->setText(v);
            }
        },
        [edit](Recipe& r) {
            r.eval.datasets.clear();
            for (const QString& part : edit->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
                const qsizetype eq = part.indexOf(QLatin1Char('='));
                plan::EvalDataset d;
                d.name = (eq < 0 ? part : part.left(eq)).trimmed().toStdString();
                d.path = eq < 0 ? std::string() : part.mid(eq + 1).trimmed().toStdString();
                r.eval.datasets.push_back(std::move(d));
            }
        },
        Reason{}, tr("eval datasets as name=path pairs"));
    connect(edit, &QLineEdit::textEdited, this, [this, &b] { commit(b); });
}

const plan::ModelShape* RecipeForm::currentModel() const {
    if (!m_catalog) {
        return nullptr;
    }
    return m_catalog->find(m_recipe.model.name);
}

void RecipeForm::refreshVariants() {
    const bool wasLoading = m_loading;
    m_loading = true;
    m_variantCombo->clear();
    const plan::ModelShape* m = currentModel();
    QString def;
    if (m != nullptr) {
        def = qs(m->defaultVariant);
    }
    m_variantCombo->addItem(def.isEmpty() ? tr("default") : tr("default (%1)").arg(def), QString());
    if (m != nullptr) {
        for (const plan::ModelVariant& v : m->variants) {
            m_variantCombo->addItem(qs(v.name), qs(v.name));
        }
    }
    for (const auto& b : m_bindings) {
        if (b->path == QLatin1String("model.variant")) {
            b->load(m_recipe);
        }
    }
    m_loading = wasLoading;
}

void RecipeForm::setCatalog(std::shared_ptr<const plan::ModelCatalog> catalog) {
    m_catalog = std::move(catalog);
    const bool wasLoading = m_loading;
    m_loading = true;
    const QString current = qs(m_recipe.model.name);
    m_modelCombo->clear();
    if (m_catalog) {
        for (const plan::ModelShape& m : m_catalog->models()) {
            m_modelCombo->addItem(qs(m.name));
        }
    }
    m_modelCombo->setCurrentText(current);
    m_loading = wasLoading;
    refreshVariants();
    refreshEnabled();
}

void RecipeForm::setRecipe(const Recipe& recipe) {
    m_recipe = recipe;
    m_loading = true;
    for (const auto& b : m_bindings) {
        if (b->path != QLatin1String("model.variant")) {
            b->load(m_recipe);
        }
    }
    m_loading = false;
    refreshVariants();
    refreshEnabled();
}

void RecipeForm::refreshEnabled() {
    for (const auto& b : m_bindings) {
        const QString why = b->disabledWhy ? b->disabledWhy(m_recipe) : QString();
        b->editor->setEnabled(why.isEmpty());
        b->label->setEnabled(why.isEmpty());
        b->editor->setToolTip(why.isEmpty() ? b->baseTooltip : tr("disabled: %1").arg(why));
        b->label->setToolTip(b->editor->toolTip());
    }
}

void RecipeForm::setFindings(const std::vector<plan::Finding>& findings) {
    for (const auto& b : m_bindings) {
        if (b->editor != m_highlighted) {
            b->editor->setStyleSheet(QString());
        }
    }
    for (const plan::Finding& f : findings) {
        if (f.severity == plan::Severity::Info) {
            continue;
        }
        for (const auto& b : m_bindings) {
            if (b->path == qs(f.fieldPath) && b->editor != m_highlighted) {
                const bool error = f.severity == plan::Severity::Error;
                if (error || b->editor->styleSheet().isEmpty()) {
                    b->editor->setStyleSheet(error ? QStringLiteral("background: #ffebee;")
                                                   : QStringLiteral("background: #fff3e0;"));
                }
            }
        }
    }
}

QWidget* RecipeForm::editor(const QString& path) const {
    for (const auto& b : m_bindings) {
        if (b->path == path) {
            return b->editor;
        }
    }
    return nullptr;
}

QString RecipeForm::disabledReason(const QString& path) const {
    for (const auto& b : m_bindings) {
        if (b->path == path) {
            return b->disabledWhy ? b->disabledWhy(m_recipe) : QString();
        }
    }
    return {};
}

QStringList RecipeForm::boundPaths() const {
    QStringList out;
    for (const auto& b : m_bindings) {
        out << b->path;
    }
    return out;
}

bool RecipeForm::focusField(const QString& path) {
    const QString bound = editorPathFor(path);
    QWidget* target = bound.isEmpty() ? nullptr : editor(bound);
    if (target == nullptr) {
        const QString head = path.section(QLatin1Char('.'), 0, 0);
        for (const auto& [prefix, box] : m_sectionBoxes) {
            if (prefix == head || prefix.section(QLatin1Char('.'), 0, 0) == head) {
                m_scroll->ensureWidgetVisible(box);
                box->setFocus();
                return true;
            }
        }
        return false;
    }
    if (m_highlighted != nullptr && m_highlighted != target) {
        m_highlighted->setStyleSheet(QString());
    }
    m_highlighted = target;
    target->setStyleSheet(QString::fromLatin1(kHighlightStyle));
    m_scroll->ensureWidgetVisible(target, 40, 80);
    target->setFocus(Qt::OtherFocusReason);
    return true;
}

}  // namespace runplane::gui
