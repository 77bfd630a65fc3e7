#include "gui/pages/node_check_panel.h"

#include <QAbstractItemModel>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace runplane::gui {

NodeCheckPanel::NodeCheckPanel(const Texts& texts, QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(texts.title, this));
    m_summary = new QLabel(tr("not checked"), this);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(texts.wrapSummary);
    bar->addWidget(m_summary, 1);
    m_check = new QPushButton(texts.button, this);
    m_check->setToolTip(texts.tooltip);
    bar->addWidget(m_check);
    layout->addLayout(bar);
    m_table = new QTableView(this);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);
    connect(m_check, &QPushButton::clicked, this, &NodeCheckPanel::checkRequested);
}

void NodeCheckPanel::setModel(QAbstractItemModel* model) {
    m_table->setModel(model);
}

bool NodeCheckPanel::beginAsking(qsizetype count) {
    if (m_busy) {
        return false;
    }
    m_busy = true;
    m_check->setEnabled(false);
    m_summary->setText(tr("asking %1 daemon(s)…").arg(count));
    return true;
}

void NodeCheckPanel::finishAsking(const QString& summary) {
    m_summary->setText(summary);
    m_table->resizeColumnsToContents();
    m_busy = false;
    m_check->setEnabled(true);
    emit updated();
}

std::vector<std::string> NodeCheckPanel::addressList(const QStringList& addresses) {
    std::vector<std::string> list;
    for (const auto& a : addresses) {
        list.push_back(a.toStdString());
    }
    return list;
}

}  // namespace runplane::gui
