// issue 46, the window's edges: the first-start "Create the directory?" question has Yes as its
// default (Enter creates the directory), and About names the version, the git commit and links
// the user guide. Real dialogs on the offscreen platform, answered from a timer as a user would.
#include <gtest/gtest.h>

#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "common/build_info.h"
#include "gui/app/application.h"
#include "gui/app/first_start.h"

using namespace runplane;
using namespace runplane::gui;

namespace {

/// Runs `answer` on the first modal message box that opens (polling from the event loop).
void whenABoxOpens(const std::function<void(QMessageBox*)>& answer) {
    auto* timer = new QTimer(qApp);
    timer->setInterval(10);
    QObject::connect(timer, &QTimer::timeout, timer, [timer, answer] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (box == nullptr) {
            return;
        }
        timer->stop();
        timer->deleteLater();
        answer(box);
    });
    timer->start();
}

}  // namespace

TEST(FirstStart, CreateTheDirectoryDefaultsToYes) {
    QTemporaryDir tmp;
    const QString history = tmp.filePath(QStringLiteral("new/dir/history.sqlite"));
    QString asked;
    QString defaultText;
    whenABoxOpens([&](QMessageBox* box) {
        asked = box->text();
        defaultText = box->defaultButton() != nullptr ? box->defaultButton()->text() : QString();
        QTest::keyClick(box, Qt::Key_Return);  // the user just presses Enter
    });
    const Status made = prepareHistoryLocation(
        history, [](const QString& question) { return askCreateDirectory(nullptr, question); });
    ASSERT_TRUE(made) << made.error();
    EXPECT_TRUE(asked.contains(QStringLiteral("Create the directory"))) << asked.toStdString();
    EXPECT_TRUE(defaultText.contains(QStringLiteral("Yes"))) << defaultText.toStdString();
    EXPECT_TRUE(QDir(tmp.filePath(QStringLiteral("new/dir"))).exists());

    // No still declines, and nothing is created.
    const QString other = tmp.filePath(QStringLiteral("other/history.sqlite"));
    whenABoxOpens([](QMessageBox* box) { box->button(QMessageBox::No)->click(); });
    const Status declined = prepareHistoryLocation(
        other, [](const QString& question) { return askCreateDirectory(nullptr, question); });
    EXPECT_FALSE(declined);
    EXPECT_FALSE(QDir(tmp.filePath(QStringLiteral("other"))).exists());
}

TEST(About, NamesVersionCommitAndLinksTheGuide) {
    const BuildInfo& info = buildInfo();
    const QString text = aboutText();
    EXPECT_TRUE(text.contains(QString::fromLatin1(info.version))) << text.toStdString();
    EXPECT_TRUE(text.contains(QString::fromLatin1(info.commit))) << text.toStdString();
    EXPECT_NE(QString::fromLatin1(info.commit), QStringLiteral("unknown"));
    // The test runs from the build tree inside the checkout: the guide is found as a file.
    const QString guide = userGuideUrl();
    EXPECT_TRUE(guide.startsWith(QStringLiteral("file:"))) << guide.toStdString();
    EXPECT_TRUE(guide.endsWith(QStringLiteral("docs/user-guide.md")));
    EXPECT_TRUE(text.contains(QStringLiteral("<a href=\"") + guide)) << text.toStdString();

    QString shown;
    whenABoxOpens([&](QMessageBox* box) {
        shown = box->text();
        box->accept();
    });
    showAbout(nullptr);
    EXPECT_EQ(shown, text);
}
