#pragma once
// One name per host in a verdict (issue #44, docs/diagnosis.md "One name per host"): NCCL's RAS
// names a rank's host by its address (`192.0.2.2`), the daemons by their hostname (`vm`). A RAS
// host that is a node of the diagnosis is named as that node, with RAS's address after it where
// it differs (`vm, 192.0.2.2`); the stack groups name the node's processes the same way, so a
// rank reads the same in the headline and every finding.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "backend/diagnosis/diagnosis.h"

namespace runplane::diagnosis {

class HostNames {
  public:
    /// Which node each RAS host is, by the first rule that gives exactly one node:
    /// 1. the node's hostname is the RAS host;
    /// 2. the host part of the node's daemon address is the RAS host;
    /// 3. the RAS ranks on that host have pids that are processes of the node (its process list
    ///    and stacks): the node with the most such pids, when no other node has as many.
    HostNames(const std::vector<NodeDiagnosis>& nodes, const std::vector<RasCommunicator>& comms);

    /// The name of a RAS host: its node's (`vm, 192.0.2.2`), else the host as RAS gave it.
    std::string ofRasHost(const std::string& host) const;
    /// The name of node `index`: its hostname (else its daemon address), then `, ADDRESS` when
    /// RAS names it by another; RAS's address alone when the node has no name.
    std::string ofNode(std::size_t index) const;

  private:
    std::vector<std::string> m_nodeNames;  // hostname, else address ("" none)
    std::vector<std::string> m_rasHosts;   // per node: the RAS host mapped to it ("" none)
    std::map<std::string, std::size_t> m_nodeOfRasHost;
};

/// "gpu-a" from "gpu-a:7070", "::1" from "[::1]:7070"; the text as it is without a port.
std::string hostOfAddress(const std::string& address);

}  // namespace runplane::diagnosis
