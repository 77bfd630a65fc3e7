#pragma once
// The GUI suite's daemon: a real runplaned (tests/support DaemonProcess) on 127.0.0.1:0 with its
// own scratch state dir, a node id and a sampling rate, spoken in QString. Stopped on
// destruction.

#include <QString>
#include <QStringList>

#include <string>
#include <vector>

#include "tests/support/daemon_process.h"

namespace runplane::gui::test {

class DaemonProcess {
  public:
    /// Starts runplaned with `extraArgs` appended (e.g. --require-tls --tls-cert ...); GPU
    /// telemetry stays on, as the GUI reads it. On failure, error() says why.
    explicit DaemonProcess(const QString& nodeId, double sampleHz = 10,
                           const QStringList& extraArgs = {})
        : m_dir("runplane-gui"), m_daemon(spec(m_dir.file("state"), nodeId, sampleHz, extraArgs)) {}
    bool ok() const { return m_daemon.ok(); }
    QString address() const { return QString::fromStdString(m_daemon.address()); }
    QString error() const { return QString::fromStdString(m_daemon.error()); }

  private:
    static runplane::testing::DaemonSpec spec(const std::string& stateDir, const QString& nodeId,
                                              double sampleHz, const QStringList& extraArgs) {
        std::vector<std::string> args{"--sample-hz", QString::number(sampleHz).toStdString(),
                                      "--node-id", nodeId.toStdString()};
        for (const QString& a : extraArgs) {
            args.push_back(a.toStdString());
        }
        return {stateDir, std::move(args), "127.0.0.1:0", /*gpuTelemetry=*/true, {}, {}};
    }

    runplane::testing::TempDir m_dir;
    runplane::testing::DaemonProcess m_daemon;
};

}  // namespace runplane::gui::test
