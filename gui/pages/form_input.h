#pragma once
// How the Design form's editors take input (issue 46): the wheel edits a field only while it has
// the focus (scrolling the form over a spin box or a combo scrolls the form), Ctrl+Z / Ctrl+Shift+Z
// in a focused field undo / redo the recipe edit (not the field's own text history), and a number
// field that spans orders of magnitude (the learning rate) reads and shows scientific notation.
// GUI thread only.

#include <QDoubleSpinBox>
#include <QObject>

namespace runplane::gui {

/// Installs the form's input rules on an editor and its child widgets: spin boxes and combos
/// take the focus by click or tab only (Qt::StrongFocus, not the wheel) and ignore a wheel event
/// while unfocused, so that it goes on to the scroll area; the undo / redo key sequences are left
/// to the page's actions (the recipe's undo stack). Idempotent.
void applyFormInputRules(QWidget* editor);

/// A double spin box that reads `2e-6`, `0.000002` and `2E-06` alike and shows the value in its
/// shortest round-trip form with a short exponent (`2e-6`, `0.7`, `1e-5`). No rounding to a fixed
/// number of decimals: the value is what was typed.
class ScientificSpinBox : public QDoubleSpinBox {
    Q_OBJECT
  public:
    explicit ScientificSpinBox(QWidget* parent = nullptr);

    /// The text of a value ("2e-6"); also what the box shows.
    static QString format(double value);

    QString textFromValue(double value) const override;
    double valueFromText(const QString& text) const override;
    QValidator::State validate(QString& text, int& pos) const override;
    void fixup(QString& input) const override;
};

}  // namespace runplane::gui
