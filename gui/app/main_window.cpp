#include "gui/app/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>

#include "gui/app/app_settings.h"
#include "gui/pages/page.h"

namespace runplane::gui {

MainWindow::MainWindow(const QString& historyPath, QWidget* parent) : QMainWindow(parent) {
    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    setCentralWidget(m_tabs);
    m_historyLabel = new QLabel(tr("history: %1").arg(historyPath), this);
    statusBar()->addPermanentWidget(m_historyLabel);

    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Runplane"), this, [this] {
        QMessageBox::about(this, tr("About Runplane"),
                           tr("Runplane %1: design, monitor and compare RL post-training runs.")
                               .arg(QApplication::applicationVersion()));
    });

    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { updateTitle(); });
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
        QObject::disconnect(m_tabs->widget(i), nullptr, this, nullptr);
    }
    QObject::disconnect(m_tabs, nullptr, this, nullptr);
}

void MainWindow::addPage(Page* page, const QString& title) {
    m_tabs->addTab(page, title);
    connect(page, &Page::statusMessage, this,
            [this](const QString& message) { statusBar()->showMessage(message, 10000); });
    connect(page, &Page::titleHintChanged, this, [this] { updateTitle(); });
    updateTitle();
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

void MainWindow::closeEvent(QCloseEvent* event) {
    for (int i = 0; i < m_tabs->count(); ++i) {
        auto* page = qobject_cast<Page*>(m_tabs->widget(i));
        if (page != nullptr && !page->confirmClose()) {
            event->ignore();
            return;
        }
    }
    AppSettings().setWindowGeometry(saveGeometry());
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
