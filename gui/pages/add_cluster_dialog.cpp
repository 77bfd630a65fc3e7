#include "gui/pages/add_cluster_dialog.h"

#include <QColor>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMetaObject>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

#include <set>

#include "backend/control/node_client.h"
#include "gui/models/cluster_connection.h"
#include "gui/models/qt_text.h"

namespace runplane::gui {

namespace {

bool validAddress(const QString& address) {
    const qsizetype colon = address.lastIndexOf(QLatin1Char(':'));
    if (colon <= 0 || colon == address.size() - 1) {
        return false;
    }
    bool ok = false;
    const int port = address.mid(colon + 1).toInt(&ok);
    return ok && port > 0 && port < 65536;
}

/// A line edit with a "Browse…" button that picks an existing file.
QLineEdit* fileRow(QFormLayout* form, QWidget* parent, const QString& label,
                   const QString& placeholder) {
    auto* row = new QHBoxLayout;
    auto* edit = new QLineEdit(parent);
    edit->setPlaceholderText(placeholder);
    edit->setClearButtonEnabled(true);
    auto* browse = new QPushButton(QObject::tr("Browse…"), parent);
    row->addWidget(edit, 1);
    row->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, parent, [edit, parent, label] {
        const QString start =
            edit->text().isEmpty() ? QDir::homePath() : QFileInfo(edit->text()).absolutePath();
        const QString file = QFileDialog::getOpenFileName(parent, label, start);
        if (!file.isEmpty()) {
            edit->setText(file);
        }
    });
    form->addRow(label, row);
    return edit;
}

}  // namespace

AddClusterDialog::AddClusterDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Add cluster"));
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    m_name = new QLineEdit(this);
    m_name->setPlaceholderText(
        tr("e.g. lab (saved as %1/lab.yaml)").arg(qs(control::clusterProfileDir())));
    form->addRow(tr("Name:"), m_name);
    m_nodes = new QPlainTextEdit(this);
    m_nodes->setPlaceholderText(
        tr("one daemon per line: HOST:PORT [NAME [ROLE]]\n10.1.2.3:7070 gpu1 head\n"
           "10.1.2.4:7070 gpu2"));
    m_nodes->setTabChangesFocus(true);
    m_nodes->setMinimumHeight(70);
    m_nodes->setMaximumHeight(120);
    form->addRow(tr("Nodes:"), m_nodes);
    m_ca = fileRow(form, this, tr("CA bundle:"),
                   tr("PEM file of the CA that signed the daemons' certificates (TLS)"));
    m_cert = fileRow(form, this, tr("Client certificate:"), tr("PEM, for mutual TLS (optional)"));
    m_key = fileRow(form, this, tr("Client key:"), tr("PEM, with the client certificate"));
    m_tokenFile = fileRow(form, this, tr("Token file:"),
                          tr("file holding the bearer token (the token is never typed in)"));
    m_serverName = new QLineEdit(this);
    m_serverName->setPlaceholderText(
        tr("check the daemons' certificates against this name instead of the host (optional)"));
    form->addRow(tr("TLS server name:"), m_serverName);
    m_hz = new QDoubleSpinBox(this);
    m_hz->setRange(0, 10);
    m_hz->setDecimals(2);
    m_hz->setSingleStep(0.5);
    m_hz->setSuffix(tr(" Hz"));
    m_hz->setSpecialValueText(tr("daemon default"));
    form->addRow(tr("Telemetry rate:"), m_hz);
    layout->addLayout(form);

    m_test = new QPushButton(tr("Test connection"), this);
    auto* testRow = new QHBoxLayout;
    testRow->addWidget(m_test);
    testRow->addStretch(1);
    layout->addLayout(testRow);
    m_results = new QTableWidget(0, 2, this);
    m_results->setHorizontalHeaderLabels({tr("Node"), tr("Result")});
    m_results->horizontalHeader()->setStretchLastSection(true);
    m_results->verticalHeader()->hide();
    m_results->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_results->setWordWrap(true);
    m_results->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_results->setMinimumHeight(140);
    layout->addWidget(m_results, 1);
    m_message = new QLabel(this);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_message);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_save = buttons->addButton(tr("Save"), QDialogButtonBox::AcceptRole);
    layout->addWidget(buttons);
    connect(m_test, &QPushButton::clicked, this, &AddClusterDialog::testConnection);
    connect(m_save, &QPushButton::clicked, this, &AddClusterDialog::onSaveClicked);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    resize(720, 560);
}

AddClusterDialog::~AddClusterDialog() = default;

void AddClusterDialog::showError(const QString& message) {
    m_message->setStyleSheet(QStringLiteral("color: #C62828"));
    m_message->setText(message);
}

QString AddClusterDialog::profilePath() const {
    return QDir(qs(control::clusterProfileDir()))
        .filePath(m_name->text().trimmed() + QStringLiteral(".yaml"));
}

Result<control::ClusterProfile> AddClusterDialog::profile() const {
    auto fail = [](const QString& text) { return Error{text.toStdString()}; };
    static const QRegularExpression nameRe(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]*$"));
    const QString name = m_name->text().trimmed();
    if (!nameRe.match(name).hasMatch()) {
        return fail(tr("Name: '%1' must be letters, digits, '.', '_' or '-' (the file NAME.yaml)")
                        .arg(name));
    }
    control::ClusterProfile p;
    p.path = profilePath().toStdString();
    std::set<QString> seen;
    const QStringList lines = m_nodes->toPlainText().split(QLatin1Char('\n'));
    for (int i = 0; i < lines.size(); ++i) {
        const QString line = lines[i].trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) {
            continue;
        }
        const QStringList words = line.split(QRegularExpression(QStringLiteral("\\s+")));
        const QString where = tr("Nodes, line %1").arg(i + 1);
        if (words.size() > 3) {
            return fail(where + tr(": '%1': expected HOST:PORT [NAME [ROLE]]").arg(line));
        }
        if (!validAddress(words[0])) {
            return fail(where + tr(": '%1' is not HOST:PORT (port 1-65535)").arg(words[0]));
        }
        if (!seen.insert(words[0]).second) {
            return fail(where + tr(": %1 is listed twice").arg(words[0]));
        }
        control::ClusterNode node;
        node.address = words[0].toStdString();
        node.name = words.size() > 1 ? words[1].toStdString() : std::string();
        node.role = words.size() > 2 ? words[2].toStdString() : std::string();
        p.nodes.push_back(node);
    }
    if (p.nodes.empty()) {
        return fail(tr("Nodes: give at least one daemon address HOST:PORT"));
    }
    auto file = [&](QLineEdit* edit, const QString& field, std::string* out) -> Status {
        const QString text = edit->text().trimmed();
        if (text.isEmpty()) {
            return {};
        }
        const QFileInfo info(text.startsWith(QStringLiteral("~/"))
                                 ? QDir::home().absoluteFilePath(text.mid(2))
                                 : QFileInfo(text).absoluteFilePath());
        if (!info.isFile() || !info.isReadable()) {
            return fail(field + tr(": %1 is not a readable file").arg(info.absoluteFilePath()));
        }
        *out = QDir::cleanPath(info.absoluteFilePath()).toStdString();
        return {};
    };
    for (const Status& s :
         {file(m_ca, tr("CA bundle"), &p.tlsCa), file(m_cert, tr("Client certificate"), &p.tlsCert),
          file(m_key, tr("Client key"), &p.tlsKey),
          file(m_tokenFile, tr("Token file"), &p.tokenFile)}) {
        if (!s) {
            return Error{s.error()};
        }
    }
    if (p.tlsCert.empty() != p.tlsKey.empty()) {
        return fail(tr("Client certificate and Client key: give both (mutual TLS) or neither"));
    }
    if (!p.tlsCert.empty() && p.tlsCa.empty()) {
        return fail(tr("Client certificate: mutual TLS needs the CA bundle too"));
    }
    if (p.tlsCa.empty()) {
        for (const auto& n : p.nodes) {
            if (!control::isLoopbackAddress(n.address)) {
                return fail(tr("CA bundle: %1 is not a loopback address, and daemons refuse "
                               "plaintext off loopback; give the CA that signed their certificates")
                                .arg(qs(n.address)));
            }
        }
    }
    if (!p.tokenFile.empty()) {
        auto token = control::readClientTokenFile(p.tokenFile, "Token file:");
        if (!token.ok()) {
            return Error{token.error()};
        }
    }
    p.tlsServerName = m_serverName->text().trimmed().toStdString();
    p.telemetryHz = m_hz->value();
    return p;
}

void AddClusterDialog::testConnection() {
    if (m_testRunning) {
        return;
    }
    auto p = profile();
    if (!p) {
        showError(qs(p.error()));
        return;
    }
    auto options = clientOptionsFor(*p);
    if (!options) {
        showError(qs(options.error()));
        return;
    }
    m_results->setRowCount(static_cast<int>(p->nodes.size()));
    for (int r = 0; r < m_results->rowCount(); ++r) {
        const auto& n = p->nodes[static_cast<size_t>(r)];
        const QString label = n.name.empty() ? qs(n.address)
                                             : qs(n.name) + QStringLiteral(" (") + qs(n.address) +
                                                   QStringLiteral(")");
        m_results->setItem(r, 0, new QTableWidgetItem(label));
        m_results->setItem(r, 1, new QTableWidgetItem(tr("testing …")));
    }
    m_results->resizeColumnToContents(0);
    m_testRunning = true;
    m_test->setEnabled(false);
    m_message->setStyleSheet(QString());
    m_message->setText(tr("testing %1 node(s) …").arg(p->nodes.size()));
    control::NodeClientOptions o = *options;
    o.callTimeout = std::chrono::milliseconds(5000);
    const auto nodes = p->nodes;
    m_worker.post(QStringLiteral("test"), [this, nodes, o] {
        int answered = 0;
        for (size_t i = 0; i < nodes.size(); ++i) {
            const QString security = securityText(o, qs(nodes[i].address));
            QString text;
            bool ok = false;
            auto client = control::NodeClient::create(nodes[i].address, o);
            if (!client) {
                text = qs(client.error());
            } else if (auto node = (*client)->getNode(); !node) {
                text = qs(node.error());
            } else {
                ok = true;
                ++answered;
                text = tr("ok (%1): %2, node id %3, %4 GPU(s), runplaned %5")
                           .arg(security, qs(node->hostname), qs(node->nodeId.value()))
                           .arg(node->gpus.size())
                           .arg(qs(node->daemonVersion));
            }
            const int row = static_cast<int>(i);
            QMetaObject::invokeMethod(
                this,
                [this, row, text, ok] {
                    auto* item = new QTableWidgetItem(text);
                    item->setToolTip(text);
                    item->setForeground(ok ? QColor(0x2E, 0x7D, 0x32) : QColor(0xC6, 0x28, 0x28));
                    m_results->setItem(row, 1, item);
                },
                Qt::QueuedConnection);
        }
        const int total = static_cast<int>(nodes.size());
        QMetaObject::invokeMethod(
            this,
            [this, answered, total] {
                m_testRunning = false;
                m_test->setEnabled(true);
                if (answered == total) {
                    m_message->setStyleSheet(QStringLiteral("color: #2E7D32"));
                    m_message->setText(tr("all %1 node(s) answered").arg(total));
                } else {
                    showError(tr("%1 of %2 node(s) answered; hover a result for its whole text")
                                  .arg(answered)
                                  .arg(total));
                }
                emit testFinished();
            },
            Qt::QueuedConnection);
    });
}

Result<QString> AddClusterDialog::save(bool replace) {
    auto p = profile();
    if (!p) {
        return Error{p.error()};
    }
    const QString path = profilePath();
    if (Status s = writeClusterProfile(path, *p, replace); !s) {
        return Error{s.error()};
    }
    // Read back with the loader `runplanectl --cluster` uses: what was saved is what it sees.
    auto loaded = loadClusterConnection(path);
    if (!loaded) {
        return Error{loaded.error()};
    }
    return path;
}

void AddClusterDialog::onSaveClicked() {
    bool replace = false;
    if (QFileInfo::exists(profilePath())) {
        replace = QMessageBox::question(
                      this, tr("Add cluster"), tr("%1 exists. Replace it?").arg(profilePath()),
                      QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
        if (!replace) {
            return;
        }
    }
    auto path = save(replace);
    if (!path) {
        showError(qs(path.error()));
        return;
    }
    emit saved(*path);
    accept();
}

}  // namespace runplane::gui
