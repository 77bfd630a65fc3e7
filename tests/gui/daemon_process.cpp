#include "tests/gui/daemon_process.h"

#include <QFileInfo>

#include "tests/gui/gui_test_util.h"
#include "tests/support/process.h"

namespace runplane::gui::test {

DaemonProcess::DaemonProcess(const QString& nodeId, double sampleHz, const QStringList& extraArgs) {
    const QString binary =
        envPath("RUNPLANE_BINARY_DIR") + QStringLiteral("/backend/daemon/runplaned");
    if (!QFileInfo::exists(binary)) {
        m_error = binary + QStringLiteral(" does not exist (build the runplaned target)");
        return;
    }
    // tests/support starts it (port 0, address from its first line, killed by pid).
    m_daemon = std::make_unique<runplane::testing::Daemon>(m_state.path().toStdString(),
                                                           nodeId.toStdString(), sampleHz);
    std::vector<std::string> args;
    for (const QString& a : extraArgs) {
        args.push_back(a.toStdString());
    }
    m_daemon->setBinary(binary.toStdString());
    m_daemon->setExtraArgs(std::move(args));
    m_address = QString::fromStdString(m_daemon->start());
    if (m_address.isEmpty()) {
        m_error = QString::fromStdString(m_daemon->error());
    }
}

DaemonProcess::~DaemonProcess() {
    if (m_daemon) {
        m_daemon->stop();
    }
}

}  // namespace runplane::gui::test
