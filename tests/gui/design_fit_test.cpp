// issue 46: "the form is wider than its pane". The real main window at 1280x720 on the Design
// page, every recipe in recipes/ opened in turn: the recipe form has no horizontal scroll bar
// (its content's minimum width fits the scroll area's viewport), the pane's minimum width is
// honest (no narrower than the content plus the vertical scroll bar), and the window fits the
// screen. Saves design-form-1280x720.png.
#include <gtest/gtest.h>

#include <QScrollArea>
#include <QScrollBar>
#include <QTemporaryDir>

#include "gui/pages/design_page.h"
#include "gui/pages/recipe_form.h"
#include "tests/gui/afternoon_checks.h"
#include "tests/gui/gui_test_util.h"

using namespace runplane;
using namespace runplane::gui;
using namespace runplane::gui::afternoon;
using runplane::gui::test::waitUntil;

TEST(DesignFit, TheRecipeFormFitsItsPaneAt1280x720ForEveryRecipe) {
    QTemporaryDir dir;
    std::unique_ptr<MainWindow> window = openWindow(dir, kScreens[1], QStringLiteral("Design"));
    DesignPage* d = page<DesignPage>(*window);
    ASSERT_NE(d, nullptr);
    ASSERT_TRUE(waitUntil([&] { return d->catalogReady(); }, 20000));
    auto* scroll = d->form()->findChild<QScrollArea*>();
    ASSERT_NE(scroll, nullptr);
    ASSERT_NE(scroll->widget(), nullptr);

    const QStringList recipes = recipeFiles();
    ASSERT_GE(recipes.size(), 5);
    for (const QString& r : recipes) {
        ASSERT_TRUE(openRecipe(*d, r));
        expectFits(window.get(), kScreens[1], QStringLiteral("Design: ") + r);
        const int content = scroll->widget()->minimumSizeHint().width();
        EXPECT_FALSE(scroll->horizontalScrollBar()->isVisible())
            << r.toStdString() << ": content needs " << content << " px, viewport "
            << scroll->viewport()->width() << " px";
        EXPECT_LE(content, scroll->viewport()->width()) << r.toStdString();
        // Honest minimum: the pane never gets narrower than what its content needs.
        const int needed =
            content + scroll->verticalScrollBar()->sizeHint().width() + 2 * scroll->frameWidth();
        EXPECT_GE(d->form()->minimumSizeHint().width(), needed) << r.toStdString();
        EXPECT_GE(d->form()->width(), needed) << r.toStdString();
    }
    EXPECT_TRUE(
        window->grab().save(test::screenshotPath(QStringLiteral("design-form-1280x720.png"))));
    AppSettings::setFileOverride(QString());
}
