// RecipeForm, second part: the editors of the structured parts (hardware-profile picker, list
// fields edited one item per line, eval datasets, metric kinds, the memory alarm line,
// extra_args) and the finding-path -> editor resolution the findings list uses. The scalar
// fields' editors come from the field table in recipe_form.cpp.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QVBoxLayout>
#include <algorithm>

#include "gui/models/qt_text.h"
#include "gui/pages/recipe_form.h"

namespace runplane::gui {

namespace {

using plan::Recipe;

QStringList toList(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) {
        out << qs(s);
    }
    return out;
}

std::vector<std::string> fromList(const QStringList& list) {
    std::vector<std::string> out;
    for (const QString& s : list) {
        if (!s.trimmed().isEmpty()) {
            out.push_back(s.trimmed().toStdString());
        }
    }
    return out;
}

// Where a finding's path has no editor of its own, the editor that changes it.
struct Alias {
    const char* path;
    const char* editor;
};
constexpr Alias kAliases[] = {
    // An inline shape lives in the YAML only; the model picker replaces it with a catalog model.
    {"model.shape", "model.name"},
    // Whole-recipe findings (recipe.limits without a field) go to the first field.
    {"recipe", "name"},
};

QString extraArgLine(const plan::ExtraArg& arg) {
    QString line = qs(arg.flag);
    for (const std::string& v : arg.values) {
        line += QLatin1Char(' ') + qs(v);
    }
    return line;
}

std::vector<plan::ExtraArg> parseExtraArgLines(const QString& text,
                                               const std::vector<plan::ExtraArg>& previous) {
    std::vector<plan::ExtraArg> out;
    for (const QString& raw : text.split(QLatin1Char('\n'))) {
        const QString line = raw.trimmed();
        if (line.isEmpty()) {
            continue;
        }
        // An unchanged line keeps its argument as it was (its source, values with blanks).
        const auto same = std::find_if(previous.begin(), previous.end(),
                                       [&](const auto& a) { return extraArgLine(a) == line; });
        if (same != previous.end()) {
            out.push_back(*same);
            continue;
        }
        const QStringList words = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (!words.front().startsWith(QLatin1String("--"))) {
            continue;  // not a flag (yet): the recipe format needs "--flag"
        }
        plan::ExtraArg arg;
        arg.flag = words.front().toStdString();
        for (qsizetype i = 1; i < words.size(); ++i) {
            arg.values.push_back(words[i].toStdString());
        }
        out.push_back(std::move(arg));
    }
    return out;
}

}  // namespace

const std::vector<HardwareProfile>& hardwareProfiles() {
    // Per node. Sources: NVIDIA DGX H100 / DGX H200 / DGX B200 datasheets (8 GPUs, 80 / 141 /
    // 180 GB HBM per GPU, 2 TB system memory); GB200 NVL72 and GB300 NVL72 compute trays (2 Grace
    // + 4 GPUs, 2 x 480 GB LPDDR5X; 13.4 TB / 72 = 186 GB and 288 GB HBM3e per GPU). GB300's
    // 956 GB is the RAM the OS reports on those trays (shared/docs/domain.md seed 001,
    // docs/memory-model.md), below the 960 GB nominal.
    static const std::vector<HardwareProfile> profiles = {
        {"H100", "H100 SXM (DGX H100): 8 x 80 GB, 2 TB RAM", 80, 8, 2048, plan::CpuArch::X86_64},
        {"H200", "H200 SXM (DGX H200): 8 x 141 GB, 2 TB RAM", 141, 8, 2048, plan::CpuArch::X86_64},
        {"B200", "B200 (DGX B200): 8 x 180 GB, 2 TB RAM", 180, 8, 2048, plan::CpuArch::X86_64},
        {"GB200", "GB200 NVL72 tray: 4 x 186 GB, 960 GB RAM (aarch64)", 186, 4, 960,
         plan::CpuArch::Aarch64},
        {"GB300", "GB300 NVL72 tray: 4 x 288 GB, 956 GB RAM (aarch64)", 288, 4, 956,
         plan::CpuArch::Aarch64},
    };
    return profiles;
}

int matchingProfile(const plan::Hardware& h) {
    const auto& p = hardwareProfiles();
    for (size_t i = 0; i < p.size(); ++i) {
        if (h.gpu == p[i].gpu && h.gpuMemoryGb == p[i].gpuMemoryGb &&
            h.gpusPerNode == p[i].gpusPerNode && h.hostRamGb == p[i].hostRamGb &&
            h.cpuArch == p[i].cpuArch) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

std::vector<metrics::KindOverride> parseMetricKindLines(const QString& text, QStringList* errors) {
    std::vector<metrics::KindOverride> out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString line = lines[i].trimmed();
        if (line.isEmpty()) {
            continue;
        }
        auto fail = [&](const QString& why) {
            if (errors != nullptr) {
                *errors << QObject::tr("line %1: %2").arg(i + 1).arg(why);
            }
        };
        // The pattern may hold ':' itself; the kind follows the last ": ".
        const qsizetype colon = line.lastIndexOf(QLatin1Char(':'));
        if (colon <= 0) {
            fail(QObject::tr("expected 'PATTERN: KIND [DIRECTION]'"));
            continue;
        }
        metrics::KindOverride o;
        o.pattern = line.left(colon).trimmed().toStdString();
        const QStringList words = line.mid(colon + 1).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (o.pattern.empty() || o.pattern == "*") {
            fail(QObject::tr("name a series or a prefix ending in '*'"));
            continue;
        }
        if (words.isEmpty() || words.size() > 2) {
            fail(QObject::tr("expected a kind and at most a direction after ':'"));
            continue;
        }
        if (!metrics::kindFromName(words[0].toStdString(), o.kind)) {
            fail(QObject::tr("unknown kind '%1' (score, loss, count, time, tokens, bytes, rate, "
                             "ratio, other)")
                     .arg(words[0]));
            continue;
        }
        if (words.size() == 2) {
            metrics::Direction d{};
            if (!metrics::directionFromName(words[1].toStdString(), d)) {
                fail(QObject::tr("unknown direction '%1' (higher, lower, none)").arg(words[1]));
                continue;
            }
            o.direction = d;
        }
        out.push_back(std::move(o));
    }
    return out;
}

QString metricKindLines(const std::vector<metrics::KindOverride>& overrides) {
    QStringList lines;
    for (const metrics::KindOverride& o : overrides) {
        QString line =
            qs(o.pattern) + QStringLiteral(": ") + qs(std::string(metrics::kindName(o.kind)));
        if (o.direction.has_value()) {
            line += QLatin1Char(' ') + qs(std::string(metrics::directionName(*o.direction)));
        }
        lines << line;
    }
    return lines.join(QLatin1Char('\n'));
}

void RecipeForm::addHardwareProfile(QFormLayout* f) {
    auto* combo = new QComboBox;
    combo->addItem(tr("custom (the fields below)"));
    for (const HardwareProfile& p : hardwareProfiles()) {
        combo->addItem(tr(p.label));
    }
    Binding& b = bind(
        f, QStringLiteral("hardware"), tr("Profile"), combo,
        [combo](const Recipe& r) { combo->setCurrentIndex(matchingProfile(r.hardware) + 1); },
        [combo](Recipe& r) {
            const int i = combo->currentIndex() - 1;
            if (i < 0 || i >= static_cast<int>(hardwareProfiles().size())) {
                return;  // custom: the fields stay as they are
            }
            const HardwareProfile& p = hardwareProfiles()[static_cast<size_t>(i)];
            r.hardware.gpu = p.gpu;
            r.hardware.gpuMemoryGb = p.gpuMemoryGb;
            r.hardware.gpusPerNode = p.gpusPerNode;
            r.hardware.hostRamGb = p.hostRamGb;
            r.hardware.cpuArch = p.cpuArch;
            r.hardware.nvlink = true;
        },
        Reason{}, tr("sets GPU, HBM per GPU, GPUs per node, host RAM and CPU from a known node"));
    connect(combo, &QComboBox::activated, this, [this, &b] { commit(b); });
}

void RecipeForm::addLines(QFormLayout* f, const plan::RecipeField& field) {
    const plan::RecipeField* fp = &field;
    auto* edit = new QPlainTextEdit;
    edit->setPlaceholderText(tr("one per line"));
    edit->setMaximumHeight(110);
    Binding& b = bind(
        f, QString::fromUtf8(field.path.data(), static_cast<qsizetype>(field.path.size())),
        tr(field.label), edit,
        [edit, fp](const Recipe& r) {
            const plan::FieldValue v = fp->get(r);
            const auto* items = std::get_if<std::vector<std::string>>(&v);
            const QString shown =
                items != nullptr ? toList(*items).join(QLatin1Char('\n')) : QString();
            if (edit->toPlainText() != shown) {
                edit->setPlainText(shown);
            }
        },
        [edit, fp](Recipe& r) {
            fp->set(r, plan::FieldValue{fromList(edit->toPlainText().split(QLatin1Char('\n')))});
        },
        [fp](const Recipe& r) {
            const char* why = fp->disabledWhy != nullptr ? fp->disabledWhy(r) : nullptr;
            return why != nullptr ? tr(why) : QString();
        },
        tr(field.tooltip));
    connect(edit, &QPlainTextEdit::textChanged, this, [this, &b] { commit(b); });
}

void RecipeForm::addExtraArgs(QFormLayout* f) {
    auto* edit = new QPlainTextEdit;
    edit->setPlaceholderText(
        tr("one flag and its values per line, e.g. --rollout-max-concurrency 8"));
    edit->setMaximumHeight(110);
    Binding& b = bind(
        f, QStringLiteral("extra_args"), tr("Flags the recipe does not model"), edit,
        [edit](const Recipe& r) {
            if (parseExtraArgLines(edit->toPlainText(), r.extraArgs) != r.extraArgs) {
                QStringList lines;
                for (const plan::ExtraArg& a : r.extraArgs) {
                    lines << extraArgLine(a);
                }
                edit->setPlainText(lines.join(QLatin1Char('\n')));
            }
        },
        [edit](Recipe& r) { r.extraArgs = parseExtraArgLines(edit->toPlainText(), r.extraArgs); },
        Reason{}, tr("appended verbatim to the launch command (--flag value ...)"));
    connect(edit, &QPlainTextEdit::textChanged, this, [this, &b] { commit(b); });
}

// analysis.metric_kinds (docs/recipe.md "analysis"): series kinds the Runs table, the plots and
// the memory panel read from the run's recipe.
void RecipeForm::addMetricKinds(QFormLayout* f) {
    auto* kinds = new QPlainTextEdit;
    kinds->setPlaceholderText(tr("eval/arith/time: time\neval/judge/*: score lower"));
    kinds->setMaximumHeight(90);
    const QString kindsTip =
        tr("one 'PATTERN: KIND [DIRECTION]' per line; a pattern ending in "
           "'*' is a prefix; overrides the naming table (docs/gui.md)");
    Binding& kb = bind(
        f, QStringLiteral("analysis.metric_kinds"), tr("Metric kinds"), kinds,
        [kinds](const Recipe& r) {
            // Keep what is being typed when it reads as the same overrides.
            if (parseMetricKindLines(kinds->toPlainText()) != r.analysis.metricKinds) {
                kinds->setPlainText(metricKindLines(r.analysis.metricKinds));
            }
        },
        [kinds, kindsTip](Recipe& r) {
            QStringList errors;
            r.analysis.metricKinds = parseMetricKindLines(kinds->toPlainText(), &errors);
            kinds->setToolTip(errors.isEmpty() ? kindsTip
                                               : kindsTip + QStringLiteral("\n\n") +
                                                     errors.join(QLatin1Char('\n')));
        },
        Reason{}, kindsTip);
    connect(kinds, &QPlainTextEdit::textChanged, this, [this, &kb] { commit(kb); });
}

// analysis.memory_alarm_gb: 0 reads "default" (the plan's alarm line), a GB suffix.
void RecipeForm::addMemoryAlarm(QFormLayout* f, const plan::RecipeField& field) {
    auto* alarm = new QDoubleSpinBox;
    alarm->setRange(0, field.bound->max);
    alarm->setDecimals(2);
    alarm->setSuffix(tr(" GB"));
    alarm->setSpecialValueText(tr(field.unsetText));
    alarm->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    Binding& ab = bind(
        f, QStringLiteral("analysis.memory_alarm_gb"), tr(field.label), alarm,
        [alarm](const Recipe& r) { alarm->setValue(r.analysis.memoryAlarmGb.value_or(0)); },
        [alarm](Recipe& r) {
            r.analysis.memoryAlarmGb =
                alarm->value() > 0 ? std::optional<double>(alarm->value()) : std::nullopt;
        },
        Reason{}, tr(field.tooltip));
    connect(alarm, &QDoubleSpinBox::valueChanged, this, [this, &ab] { commit(ab); });
}

QString RecipeForm::editorPathFor(const QString& path) const {
    if (editor(path) != nullptr) {
        return path;
    }
    for (const Alias& a : kAliases) {
        if (path == QLatin1String(a.path) && editor(QLatin1String(a.editor)) != nullptr) {
            return QLatin1String(a.editor);
        }
    }
    // A parent path ("rollout.eplb", "trainer") -> its first bound child.
    for (const auto& b : m_bindings) {
        if (b->path.startsWith(path + QLatin1Char('.'))) {
            return b->path;
        }
    }
    // A child of a bound field ("eval.datasets[1].path") -> the nearest bound parent.
    QString p = path;
    while (!p.isEmpty()) {
        const qsizetype cut =
            std::max(p.lastIndexOf(QLatin1Char('.')), p.lastIndexOf(QLatin1Char('[')));
        p = cut > 0 ? p.left(cut) : QString();
        if (!p.isEmpty() && editor(p) != nullptr) {
            return p;
        }
    }
    return {};
}

}  // namespace runplane::gui
