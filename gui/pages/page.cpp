#include "gui/pages/page.h"

#include <QHeaderView>
#include <QSettings>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>

namespace runplane::gui {

void Page::saveWorkspace(QSettings& settings) const {
    const QList<QSplitter*> splitters = findChildren<QSplitter*>();
    for (qsizetype i = 0; i < splitters.size(); ++i) {
        settings.setValue(QStringLiteral("splitter/%1").arg(i), splitters[i]->saveState());
    }
    const QList<QTabWidget*> tabs = findChildren<QTabWidget*>();
    for (qsizetype i = 0; i < tabs.size(); ++i) {
        settings.setValue(QStringLiteral("tabs/%1").arg(i), tabs[i]->currentIndex());
    }
    for (QTableView* view : findChildren<QTableView*>()) {
        if (!view->objectName().isEmpty()) {
            settings.setValue(QStringLiteral("header/") + view->objectName(),
                              view->horizontalHeader()->saveState());
        }
    }
}

void Page::restoreWorkspace(QSettings& settings) {
    const QList<QSplitter*> splitters = findChildren<QSplitter*>();
    for (qsizetype i = 0; i < splitters.size(); ++i) {
        const QVariant v = settings.value(QStringLiteral("splitter/%1").arg(i));
        if (v.isValid()) {
            splitters[i]->restoreState(v.toByteArray());
        }
    }
    const QList<QTabWidget*> tabs = findChildren<QTabWidget*>();
    for (qsizetype i = 0; i < tabs.size(); ++i) {
        const QVariant v = settings.value(QStringLiteral("tabs/%1").arg(i));
        if (v.isValid() && v.toInt() >= 0 && v.toInt() < tabs[i]->count()) {
            tabs[i]->setCurrentIndex(v.toInt());
        }
    }
    m_restoredHeaders.clear();
    for (QTableView* view : findChildren<QTableView*>()) {
        if (view->objectName().isEmpty()) {
            continue;
        }
        const QVariant v = settings.value(QStringLiteral("header/") + view->objectName());
        if (v.isValid() && view->horizontalHeader()->restoreState(v.toByteArray())) {
            m_restoredHeaders << view->objectName();
        }
    }
}

}  // namespace runplane::gui
