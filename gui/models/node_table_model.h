#pragma once
// NodeTableModel: the Cluster page's table of daemons, one row per address, in the order they
// were added. Fed with NodeRow values (from ClusterService); never does I/O itself. A row's
// tooltip (every column) carries its full state, connection security and error text: the table
// cell may elide a long error, the tooltip never does.
// GUI thread only. Checked with QAbstractItemModelTester in tests/gui.

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <vector>

namespace runplane::gui {

/// One daemon as the Cluster page shows it.
struct NodeRow {
    QString address;
    QString state;  // "connecting", "streaming", "backoff", "stopped", "failed"
    QString error;  // last error in words; empty when healthy
    /// Transport security: "plaintext (loopback)", "TLS", "mTLS", "... + token" (securityText).
    QString security;
    QString nodeId;
    /// The daemon's spool incarnation (GetNode): with its address, what tells apart two
    /// daemons reporting the same node id (issue 46). 0 = not known yet.
    std::uint64_t incarnation = 0;
    QString hostname;
    QString cpuArch;
    int cpuCores = 0;
    double ramBytes = 0;
    QString kernel;
    int gpuCount = 0;
    QString gpuText;  // "8 × H100 80GB" or why there are none
    QString nccl;     // selected libnccl version (and how many were found)
    QString daemonVersion;
    double usedBytes = -1;  // latest host.mem.used_bytes, -1 before the first sample
    double lastSampleT = 0;
    std::uint64_t recordsStored = 0;
    std::uint64_t reconnects = 0;
};

class NodeTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        AddressColumn,
        StateColumn,
        SecurityColumn,
        HostColumn,
        CpuColumn,
        RamColumn,
        MemUsedColumn,
        GpuColumn,
        NcclColumn,
        DaemonColumn,
        KernelColumn,
        ColumnCount
    };
    enum Role { AddressRole = Qt::UserRole + 1, NodeIdRole, StateRole, SortRole };

    explicit NodeTableModel(QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    /// Inserts or updates the row with row.address. Keeps usedBytes when the update has none.
    void upsert(const NodeRow& row);
    /// Adds a row in state "connecting" for an address the user just entered.
    void addPending(const QString& address, const QString& security = {});
    /// Removes every row (a cluster switch).
    void clear();
    bool remove(const QString& address);
    /// Latest host memory used, as the daemon at this address measured it (rows are daemons:
    /// two daemons reporting the same node id keep their own values, issue 46).
    void setMemoryUsed(const QString& address, double bytes, double t);

    int indexOf(const QString& address) const;
    const NodeRow& row(int i) const { return m_rows[static_cast<size_t>(i)]; }
    QStringList addresses() const;
    /// Node ids known so far (rows whose daemon answered GetNode).
    QStringList nodeIds() const;
    /// "hostname (address)" for a node id, or the id itself.
    QString displayName(const QString& nodeId) const;
    /// "hostname (address)" of the daemon at this address, or the address itself.
    QString displayNameOfAddress(const QString& address) const;

  private:
    std::vector<NodeRow> m_rows;
};

}  // namespace runplane::gui
