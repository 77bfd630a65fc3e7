#include "gui/pages/design_validity.h"

#include <QFileInfo>
#include <QMessageBox>

#include "gui/models/qt_text.h"

namespace runplane::gui {

QString invalidDesignText(const std::vector<plan::Finding>& findings, const QString& consequence) {
    const plan::Finding* first = nullptr;
    int errors = 0;
    for (const plan::Finding& f : findings) {
        if (f.severity == plan::Severity::Error) {
            if (first == nullptr) {
                first = &f;
            }
            ++errors;
        }
    }
    if (first == nullptr) {
        return {};
    }
    const QString count =
        errors == 1 ? QObject::tr("1 error") : QObject::tr("%1 errors").arg(errors);
    QString text =
        QObject::tr("Invalid design: %1").arg(count) + QStringLiteral(" — ") +
        (first->fieldPath.empty() ? QString() : qs(first->fieldPath) + QStringLiteral(": ")) +
        qs(first->message);
    if (errors > 1) {
        text += QObject::tr(" (and %1 more)").arg(errors - 1);
    }
    if (!consequence.isEmpty()) {
        text += QStringLiteral(". ") + consequence;
    }
    return text;
}

bool askCopyInvalidLaunch(QWidget* parent, const QString& reason) {
    QMessageBox box(QMessageBox::Warning, QObject::tr("Copy an invalid launch?"),
                    QObject::tr("The design has errors, so this launch cannot run as written:\n\n%1"
                                "\n\nCopy it anyway?")
                        .arg(reason),
                    QMessageBox::Yes | QMessageBox::No, parent);
    box.setDefaultButton(QMessageBox::No);
    return box.exec() == QMessageBox::Yes;
}

QString withRecipeSuffix(const QString& path) {
    if (path.isEmpty() || !QFileInfo(path).suffix().isEmpty()) {
        return path;
    }
    return path + QStringLiteral(".yaml");
}

std::string recipeNameFromScript(const QString& scriptPath) {
    return QFileInfo(scriptPath).completeBaseName().toStdString();
}

}  // namespace runplane::gui
