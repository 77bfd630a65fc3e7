#pragma once
// A real runplaned child process on 127.0.0.1 with port 0, for GUI tests. Reads the chosen
// address from its first line ("runplaned listening on 127.0.0.1:NNNNN"); kills it on
// destruction.

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace runplane::gui::test {

class DaemonProcess {
  public:
    /// Starts $RUNPLANE_BINARY_DIR/backend/daemon/runplaned with `extraArgs` appended (e.g.
    /// --require-tls --tls-cert ...). On failure, error() says why.
    explicit DaemonProcess(const QString& nodeId, double sampleHz = 10,
                           const QStringList& extraArgs = {});
    ~DaemonProcess();
    bool ok() const { return !m_address.isEmpty(); }
    const QString& address() const { return m_address; }
    const QString& error() const { return m_error; }

  private:
    QTemporaryDir m_state;
    std::unique_ptr<QProcess> m_process;
    QString m_address;
    QString m_error;
};

}  // namespace runplane::gui::test
