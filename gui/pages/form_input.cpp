#include "gui/pages/form_input.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QEvent>
#include <QKeyEvent>
#include <QKeySequence>
#include <QLineEdit>
#include <QLocale>
#include <QRegularExpression>
#include <QWheelEvent>

#include <cmath>

namespace runplane::gui {

namespace {

/// The event filter behind applyFormInputRules (one per application, parented to it).
class FormInputFilter : public QObject {
  public:
    using QObject::QObject;

    bool eventFilter(QObject* watched, QEvent* event) override {
        auto* w = qobject_cast<QWidget*>(watched);
        if (w == nullptr) {
            return false;
        }
        if (event->type() == QEvent::Wheel) {
            // The editor (or the spin box / combo it belongs to) has no focus: the wheel is the
            // form's, not the field's. Ignored and consumed here, it propagates to the parents.
            QWidget* owner = ownerOf(w);
            if (!owner->hasFocus() && !w->hasFocus()) {
                event->ignore();
                return true;
            }
            return false;
        }
        if (event->type() == QEvent::ShortcutOverride) {
            auto* key = static_cast<QKeyEvent*>(event);
            if (key->matches(QKeySequence::Undo) || key->matches(QKeySequence::Redo)) {
                // Not overridden: the shortcut goes to the page's Undo / Redo action.
                event->ignore();
                return true;
            }
        }
        return false;
    }

  private:
    static QWidget* ownerOf(QWidget* w) {
        for (QWidget* p = w; p != nullptr; p = p->parentWidget()) {
            if (qobject_cast<QAbstractSpinBox*>(p) != nullptr ||
                qobject_cast<QComboBox*>(p) != nullptr) {
                return p;
            }
        }
        return w;
    }
};

FormInputFilter* filter() {
    static FormInputFilter* f = [] {
        auto* made = new FormInputFilter(QCoreApplication::instance());
        return made;
    }();
    return f;
}

void applyOne(QWidget* w) {
    if (w->property("runplaneFormInput").toBool()) {
        return;
    }
    w->setProperty("runplaneFormInput", true);
    if (qobject_cast<QAbstractSpinBox*>(w) != nullptr || qobject_cast<QComboBox*>(w) != nullptr) {
        w->setFocusPolicy(Qt::StrongFocus);
    }
    w->installEventFilter(filter());
}

// A number as typed: digits with an optional point and exponent; a partial one is Intermediate.
const QRegularExpression& fullNumber() {
    static const QRegularExpression re(
        QStringLiteral(R"(^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$)"));
    return re;
}

const QRegularExpression& partialNumber() {
    static const QRegularExpression re(
        QStringLiteral(R"(^\s*[+-]?(\d*\.?\d*)([eE][+-]?\d*)?\s*$)"));
    return re;
}

}  // namespace

void applyFormInputRules(QWidget* editor) {
    applyOne(editor);
    for (QWidget* child : editor->findChildren<QWidget*>()) {
        applyOne(child);
    }
}

ScientificSpinBox::ScientificSpinBox(QWidget* parent) : QDoubleSpinBox(parent) {
    // QDoubleSpinBox rounds every value to decimals(): keep all the digits a double has.
    setDecimals(323);
    setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
}

QString ScientificSpinBox::format(double value) {
    if (value == 0) {
        return QStringLiteral("0");
    }
    // Shortest round-trip text, then the exponent without a '+' or leading zeros: 2e-06 -> 2e-6.
    QString text = QString::number(value, 'g', QLocale::FloatingPointShortest);
    static const QRegularExpression exponent(QStringLiteral(R"(e([+-])0*(\d+)$)"));
    const QRegularExpressionMatch m = exponent.match(text);
    if (m.hasMatch()) {
        const QString sign = m.captured(1) == QLatin1String("-") ? QStringLiteral("-") : QString();
        text = text.left(m.capturedStart()) + QLatin1Char('e') + sign + m.captured(2);
    }
    return text;
}

QString ScientificSpinBox::textFromValue(double value) const {
    return format(value);
}

double ScientificSpinBox::valueFromText(const QString& text) const {
    QString t = text;
    if (!prefix().isEmpty() && t.startsWith(prefix())) {
        t = t.mid(prefix().size());
    }
    if (!suffix().isEmpty() && t.endsWith(suffix())) {
        t.chop(suffix().size());
    }
    bool ok = false;
    const double v = t.trimmed().toDouble(&ok);
    return ok && std::isfinite(v) ? v : value();
}

QValidator::State ScientificSpinBox::validate(QString& text, int& pos) const {
    Q_UNUSED(pos);
    QString t = text;
    if (!specialValueText().isEmpty() && t == specialValueText()) {
        return QValidator::Acceptable;
    }
    if (!prefix().isEmpty() && t.startsWith(prefix())) {
        t = t.mid(prefix().size());
    }
    if (!suffix().isEmpty() && t.endsWith(suffix())) {
        t.chop(suffix().size());
    }
    if (fullNumber().match(t).hasMatch()) {
        bool ok = false;
        const double v = t.trimmed().toDouble(&ok);
        if (ok && v >= minimum() && v <= maximum()) {
            return QValidator::Acceptable;
        }
        return QValidator::Intermediate;
    }
    return partialNumber().match(t).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
}

void ScientificSpinBox::fixup(QString& input) const {
    input = textFromValue(value());
}

}  // namespace runplane::gui
