#include "gui/app/first_start.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QUrl>

#include "common/build_info.h"

namespace runplane::gui {

bool askCreateDirectory(QWidget* parent, const QString& question) {
    QMessageBox box(QMessageBox::Question, QObject::tr("Runplane"), question,
                    QMessageBox::Yes | QMessageBox::No, parent);
    box.setDefaultButton(QMessageBox::Yes);
    return box.exec() == QMessageBox::Yes;
}

QString userGuideUrl() {
    QDir dir(QCoreApplication::applicationDirPath());
    for (int up = 0; up < 5; ++up) {
        const QString guide = dir.filePath(QStringLiteral("docs/user-guide.md"));
        if (QFileInfo(guide).isFile()) {
            return QUrl::fromLocalFile(QFileInfo(guide).absoluteFilePath()).toString();
        }
        if (!dir.cdUp()) {
            break;
        }
    }
    return QStringLiteral("docs/user-guide.md");
}

QString aboutText() {
    const BuildInfo& info = buildInfo();
    const QString guide = userGuideUrl();
    return QObject::tr(
               "<p><b>Runplane %1</b>: design, monitor and compare RL post-training "
               "runs.</p><p>Commit <code>%2</code>, built %3.</p>"
               "<p>User guide: <a href=\"%4\">%5</a></p>")
        .arg(QString::fromLatin1(info.version), QString::fromLatin1(info.commit),
             QString::fromLatin1(info.date), guide.toHtmlEscaped(),
             guide.startsWith(QLatin1String("file:")) ? QUrl(guide).toLocalFile().toHtmlEscaped()
                                                      : guide.toHtmlEscaped());
}

void showAbout(QWidget* parent) {
    QMessageBox box(QMessageBox::Information, QObject::tr("About Runplane"), aboutText(),
                    QMessageBox::Ok, parent);
    box.setObjectName(QStringLiteral("aboutRunplane"));
    box.setTextFormat(Qt::RichText);
    box.setTextInteractionFlags(Qt::TextBrowserInteraction);
    box.exec();
}

}  // namespace runplane::gui
