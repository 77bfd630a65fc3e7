#include "gui/app/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include "gui/app/app_settings.h"
#include "gui/app/first_start.h"

namespace runplane::gui {

namespace {
QString pageKey(const QString& title) {
    QString key = title;
    key.remove(QLatin1Char('&'));
    return QStringLiteral("workspace/") + key;
}
}  // namespace

MainWindow::MainWindow(const QString& historyPath, QWidget* parent) : QMainWindow(parent) {
    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);
    m_historyLabel = new QLabel(tr("history: %1").arg(historyPath), this);
    statusBar()->addPermanentWidget(m_historyLabel);

    // Each entry forwards to the page that provides it (switching to that page first), so one
    // key has one owner and is never ambiguous between a page and the window.
    // A standard key the platform theme leaves unbound (Save As on some) gets the usual one.
    auto entry = [this](QMenu* menu, Page::Action action, const QString& text,
                        QKeySequence::StandardKey key, const char* fallback) {
        QAction* a = menu->addAction(text);
        QList<QKeySequence> keys = QKeySequence::keyBindings(key);
        if (keys.isEmpty()) {
            keys << QKeySequence(QString::fromLatin1(fallback));
        }
        a->setShortcuts(keys);
        a->setShortcutContext(Qt::WindowShortcut);
        a->setEnabled(false);
        connect(a, &QAction::triggered, this, [this, action] {
            Page* page = provider(action);
            if (page == nullptr) {
                return;
            }
            m_tabs->setCurrentWidget(page);
            if (QAction* own = page->standardAction(action); own != nullptr && own->isEnabled()) {
                own->trigger();
            }
        });
        m_actions[action] = a;
    };
    QMenu* file = menuBar()->addMenu(tr("&File"));
    entry(file, Page::Action::Open, tr("&Open recipe…"), QKeySequence::Open, "Ctrl+O");
    entry(file, Page::Action::Save, tr("&Save recipe"), QKeySequence::Save, "Ctrl+S");
    entry(file, Page::Action::SaveAs, tr("Save recipe &as…"), QKeySequence::SaveAs, "Ctrl+Shift+S");
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    entry(edit, Page::Action::Undo, tr("&Undo"), QKeySequence::Undo, "Ctrl+Z");
    entry(edit, Page::Action::Redo, tr("&Redo"), QKeySequence::Redo, "Ctrl+Shift+Z");
    edit->addSeparator();
    entry(edit, Page::Action::Find, tr("&Find runs"), QKeySequence::Find, "Ctrl+F");
    m_viewMenu = menuBar()->addMenu(tr("&View"));
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Runplane"), this, [this] { showAbout(this); });

    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        updateTitle();
        syncActions();
    });
    const QByteArray geometry = AppSettings().windowGeometry();
    if (!geometry.isEmpty()) {
        restoreGeometry(geometry);
    } else {
        resize(1400, 900);
    }
    updateTitle();
}

MainWindow::~MainWindow() {
    // Pages are deleted with the tab widget; a signal one sends on the way out must not call
    // back into a half-destroyed window.
    for (int i = 0; i < m_tabs->count(); ++i) {
        QWidget* page = m_tabs->widget(i);
        QObject::disconnect(page, nullptr, this, nullptr);
        for (QAction* a : page->findChildren<QAction*>()) {
            QObject::disconnect(a, nullptr, this, nullptr);
        }
    }
    QObject::disconnect(m_tabs, nullptr, this, nullptr);
}

void MainWindow::addPage(Page* page, const QString& title) {
    m_tabs->addTab(page, title);
    connect(page, &Page::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, 10000); });
    connect(page, &Page::titleHintChanged, this, [this] { updateTitle(); });
    for (const auto& [action, entry] : m_actions) {
        if (QAction* own = page->standardAction(action)) {
            own->setShortcut(QKeySequence());  // the menu entry owns the key
            connect(own, &QAction::changed, this, [this] { syncActions(); });
        }
    }
    const int n = m_tabs->count();
    QAction* show = m_viewMenu->addAction(title);
    if (n <= 9) {
        show->setShortcut(QKeySequence(QStringLiteral("Ctrl+%1").arg(n)));
    }
    show->setShortcutContext(Qt::WindowShortcut);
    connect(show, &QAction::triggered, this, [this, page] { m_tabs->setCurrentWidget(page); });
    m_pageActions.push_back(show);
    updateTitle();
    syncActions();
}

Page* MainWindow::provider(Page::Action action) const {
    if (Page* current = currentPage(); current != nullptr && current->standardAction(action)) {
        return current;
    }
    for (int i = 0; i < m_tabs->count(); ++i) {
        auto* page = qobject_cast<Page*>(m_tabs->widget(i));
        if (page != nullptr && page->standardAction(action) != nullptr) {
            return page;
        }
    }
    return nullptr;
}

void MainWindow::syncActions() {
    for (const auto& [action, entry] : m_actions) {
        Page* page = provider(action);
        QAction* own = page != nullptr ? page->standardAction(action) : nullptr;
        entry->setEnabled(own != nullptr && own->isEnabled());
        if (own != nullptr && (action == Page::Action::Undo || action == Page::Action::Redo)) {
            entry->setText(own->text());  // "Undo set batch.max_tokens_per_gpu"
        }
    }
}

void MainWindow::setCurrentPage(const QString& title) {
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (m_tabs->tabText(i) == title) {
            m_tabs->setCurrentIndex(i);
        }
    }
}

Page* MainWindow::currentPage() const {
    return qobject_cast<Page*>(m_tabs->currentWidget());
}

void MainWindow::saveWorkspace() const {
    AppSettings().setWindowGeometry(saveGeometry());
    const auto settings = AppSettings::open();
    settings->setValue(QStringLiteral("workspace/page"), m_tabs->tabText(m_tabs->currentIndex()));
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (auto* page = qobject_cast<Page*>(m_tabs->widget(i))) {
            settings->beginGroup(pageKey(m_tabs->tabText(i)));
            page->saveWorkspace(*settings);
            settings->endGroup();
        }
    }
}

void MainWindow::restoreWorkspace() {
    const auto settings = AppSettings::open();
    for (int i = 0; i < m_tabs->count(); ++i) {
        if (auto* page = qobject_cast<Page*>(m_tabs->widget(i))) {
            settings->beginGroup(pageKey(m_tabs->tabText(i)));
            page->restoreWorkspace(*settings);
            settings->endGroup();
        }
    }
    const QString current = settings->value(QStringLiteral("workspace/page")).toString();
    if (!current.isEmpty()) {
        setCurrentPage(current);
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    for (int i = 0; i < m_tabs->count(); ++i) {
        auto* page = qobject_cast<Page*>(m_tabs->widget(i));
        if (page != nullptr && !page->confirmClose()) {
            event->ignore();
            return;
        }
    }
    saveWorkspace();
    event->accept();
}

void MainWindow::updateTitle() {
    QString title = QStringLiteral("Runplane");
    if (Page* page = currentPage()) {
        const QString hint = page->titleHint();
        if (!hint.isEmpty()) {
            title += QStringLiteral(" — ") + hint;
        }
    }
    setWindowTitle(title);
}

}  // namespace runplane::gui
