// expirykit/cluster/nodes.hpp: a CLUSTER NODES reply, parsed: each node as the answering node
// sees it (id, address, role, owned slot ranges, config epoch).
//
//   const auto nodes = cluster::parse_cluster_nodes(conn("CLUSTER", "NODES").str());
//   for (const auto& n : nodes) if (n.primary) ...   // sorted by id
//
// Source: valkey.io/commands/cluster-nodes (the line format). Checked on a text of that format in
// checks/cluster/slot_test.cpp, and live through process::Cluster::view_of() in every cluster case.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace expirykit::cluster {

/// One node as a node of the cluster sees it (a line of CLUSTER NODES).
struct ClusterNode {
  std::string id;
  std::string address;  ///< "127.0.0.1:port"
  bool primary = false;  ///< flags name "master"
  bool myself = false;   ///< flags name "myself": the line of the node that answered
  std::string primary_id;  ///< for a replica: its primary's id; else ""
  std::string flags;       ///< as printed, e.g. "myself,master"
  std::vector<std::pair<int, int>> slots;  ///< owned slot ranges, first and last inclusive
  long long config_epoch = 0;
};

/// Parses a CLUSTER NODES reply (valkey.io/commands/cluster-nodes: id, ip:port@cport[,hostname],
/// flags, primary, ping-sent, pong-recv, config-epoch, link-state, slots...). Importing and
/// migrating entries ("[slot->-id]") are skipped.
inline std::vector<ClusterNode> parse_cluster_nodes(const std::string& text) {
  std::vector<ClusterNode> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream f(line);
    std::vector<std::string> t;
    for (std::string w; f >> w;) t.push_back(w);
    if (t.size() < 8) continue;
    ClusterNode n;
    n.id = t[0];
    n.address = t[1].substr(0, t[1].find('@'));
    n.flags = t[2];
    n.primary = ("," + t[2] + ",").find(",master,") != std::string::npos;
    n.myself = ("," + t[2] + ",").find(",myself,") != std::string::npos;
    n.primary_id = t[3] == "-" ? "" : t[3];
    n.config_epoch = std::atoll(t[6].c_str());
    for (std::size_t i = 8; i < t.size(); ++i) {
      if (t[i].empty() || t[i][0] == '[') continue;
      const auto dash = t[i].find('-');
      const int a = std::stoi(t[i].substr(0, dash));
      const int b = dash == std::string::npos ? a : std::stoi(t[i].substr(dash + 1));
      n.slots.emplace_back(a, b);
    }
    std::sort(n.slots.begin(), n.slots.end());
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end(), [](const ClusterNode& a, const ClusterNode& b) { return a.id < b.id; });
  return out;
}

}  // namespace expirykit::cluster
