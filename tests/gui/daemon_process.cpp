#include "tests/gui/daemon_process.h"

#include <QDeadlineTimer>
#include <QFileInfo>
#include <QRegularExpression>

#include "tests/gui/gui_test_util.h"

namespace runplane::gui::test {

DaemonProcess::DaemonProcess(const QString& nodeId, double sampleHz, const QStringList& extraArgs) {
    const QString binary =
        envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/backend/daemon/runplaned");
    if (!QFileInfo::exists(binary)) {
        m_error = binary + QStringLiteral(" does not exist (build the runplaned target)");
        return;
    }
    m_process = std::make_unique<QProcess>();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->start(binary, QStringList{QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                                         QStringLiteral("--state-dir"), m_state.path(),
                                         QStringLiteral("--sample-hz"), QString::number(sampleHz),
                                         QStringLiteral("--node-id"), nodeId} +
                                 extraArgs);
    if (!m_process->waitForStarted(10000)) {
        m_error = binary + QStringLiteral(": ") + m_process->errorString();
        return;
    }
    static const QRegularExpression listening(
        QStringLiteral("listening on (127\\.0\\.0\\.1:\\d+)"));
    QByteArray output;
    QDeadlineTimer deadline(15000);
    while (!deadline.hasExpired()) {
        m_process->waitForReadyRead(100);
        output += m_process->readAll();
        const auto m = listening.match(QString::fromUtf8(output));
        if (m.hasMatch()) {
            m_address = m.captured(1);
            return;
        }
        if (m_process->state() == QProcess::NotRunning) {
            break;
        }
    }
    m_error = QStringLiteral("runplaned did not report its address; output: ") +
              QString::fromUtf8(output);
}

DaemonProcess::~DaemonProcess() {
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->terminate();
        if (!m_process->waitForFinished(5000)) {
            m_process->kill();
            m_process->waitForFinished(2000);
        }
    }
}

}  // namespace runplane::gui::test
