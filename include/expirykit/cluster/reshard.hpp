// expirykit/cluster/reshard.hpp: moving hash slots between primaries, the two ways a cluster
// offers, driven through a cluster::Client (works on a kit-spawned or an external cluster).
//
//   cluster::move_slot_legacy(c, slot, "127.0.0.1:7001");       // SETSLOT + MIGRATE, both servers
//   cluster::move_slots_atomic(c, first, last, "127.0.0.1:7001"); // CLUSTER MIGRATESLOTS, Valkey 9
//
// Legacy (valkey.io/topics/cluster-spec, "Live resharding"): CLUSTER SETSLOT <slot> IMPORTING
// <source id> on the target, SETSLOT MIGRATING <target id> on the source, then CLUSTER
// GETKEYSINSLOT and MIGRATE <host> <port> "" 0 <timeout> KEYS ... in batches until the slot is
// empty on the source, then SETSLOT NODE <target id> on the target, the source and every other
// primary. LegacyMove::while_importing runs after the keys moved and before the slot is handed
// over (the target holds them while the slot is still IMPORTING). Before it starts, and again
// before the target's SETSLOT NODE, the move waits until the target knows every node's config
// epoch (detail::await_epoch_known: without it, legacy moves back to back on Redis 8.0.6 left
// the nodes naming two owners of a slot for good). A source that refuses MIGRATING leaves the
// target's IMPORTING state cleared (SETSLOT STABLE) before the error is thrown; a later failure
// (MIGRATE, while_importing, SETSLOT NODE) leaves the slot IMPORTING / MIGRATING as it stood. The
// errors of SETSLOT and of the final wait list every node's view of the slot (owner, epochs).
// Atomic (valkey.io/commands/cluster-migrateslots, Valkey 9.0+): CLUSTER MIGRATESLOTS SLOTSRANGE
// <first> <last> NODE <target id> on the source, then CLUSTER GETSLOTMIGRATIONS on the source
// until the job it started (one not listed before) has "state" "success" (live states on 9.1.2: waiting-to-snapshot,
// reading-establish-response, failover-granted, success; "failed" and "cancelled" end it too).
// The atomic move waits for the target to know every config epoch first too (the target raises
// its epoch without consensus when the job ends). Both re-read the client's slot map at the end
// until it names the target and so does every node's CLUSTER NODES, replicas included, at the
// target's config epoch (detail::await_owner);
// process::Cluster::wait_agreed() waits for the whole map.
// Throws std::runtime_error naming the command and reply that failed, the job's last state after
// `timeout`, or a wait that ran out (the epochs, the nodes' views); resp::ConnectionError as the
// client does.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/cluster/client.hpp>
#include <expirykit/cluster/nodes.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::cluster {

/// What a move did.
struct MoveReport {
  std::string source, target;  ///< "host:port" of both primaries
  long keys = 0;               ///< keys moved (legacy: MIGRATEd; atomic: the slots' keys on the source before)
  double seconds = 0;          ///< wall-clock time of the move
};

struct LegacyMove {
  /// Keys per MIGRATE command.
  int batch = 100;
  /// MIGRATE's timeout (ms).
  int migrate_timeout_ms = 5000;
  /// Runs when every key is on the target and the slot is still IMPORTING there and MIGRATING
  /// on the source. Empty: nothing.
  std::function<void()> while_importing;
  /// Longest wait for each of: the target to know every node's config epoch (before the move
  /// and again before SETSLOT NODE) and every node to name the target (after it).
  std::chrono::milliseconds timeout{30000};
};

namespace detail {
inline std::string node_id(Client& c, const std::string& address) {
  const Reply r = c.connection(address)("CLUSTER", "MYID");
  if (!r.is_string()) throw std::runtime_error(address + ": CLUSTER MYID answered " + r.to_string());
  return r.str();
}
/// How the node that answered the CLUSTER NODES reply `text` sees `slot`: the owner it names
/// ("host:port" as CLUSTER NODES prints it, and its id; both "" for none) and that owner's
/// config epoch as it knows it (-1 for none).
struct SlotView {
  std::string owner, owner_id;
  long long owner_epoch = -1;
};
inline SlotView slot_view(const std::string& text, int slot) {
  SlotView v;
  for (const auto& n : parse_cluster_nodes(text))
    for (const auto& [a, b] : n.slots)
      if (slot >= a && slot <= b) v = {n.address, n.id, n.config_epoch};
  return v;
}
/// How every node of the cluster sees `slot`, for an error message: per node ("host:port"), the
/// owner its CLUSTER NODES names and that owner's config epoch, and the node's own epoch (a
/// replica prints its primary's). A node or a map that cannot be read is said in the text, not thrown.
inline std::string slot_views(Client& c, int slot) {
  std::string out;
  try {
    for (const auto& node : c.all_nodes()) {
      out += "\n  " + node + ": ";
      try {
        const Reply r = c.connection(node)("CLUSTER", "NODES");
        if (!r.is_string()) {
          out += "CLUSTER NODES answered " + r.to_string();
          continue;
        }
        const SlotView v = slot_view(r.str(), slot);
        const std::string owner =
            v.owner_id.empty() ? "no owner" : v.owner + " (epoch " + std::to_string(v.owner_epoch) + ")";
        std::string self;
        for (const auto& n : parse_cluster_nodes(r.str()))
          if (n.myself) self = std::to_string(n.config_epoch);
        out += "slot " + std::to_string(slot) + " -> " + owner + (self.empty() ? "" : "; own epoch " + self);
      } catch (const resp::ConnectionError& e) {
        out += e.what();
      }
    }
  } catch (const std::exception& e) {  // while an error is being built: never hide it
    out += "\n  (no more views: " + std::string(e.what()) + ")";
  }
  return out;
}
/// Throws std::runtime_error naming `what`, the reply and every node's view of `slot` unless `r` is OK.
inline void expect_ok(Client& c, int slot, const Reply& r, const std::string& what) {
  if (r != Reply::ok()) throw std::runtime_error(what + " answered " + r.to_string() + "; the nodes' views:" + slot_views(c, slot));
}
inline void expect_ok(const Reply& r, const std::string& what) {
  if (r != Reply::ok()) throw std::runtime_error(what + " answered " + r.to_string());
}
/// Waits until the node at `target` knows a current epoch at least as high as every node's own
/// config epoch (CLUSTER INFO: cluster_current_epoch of the target, cluster_my_epoch of each
/// node), the source's (`source`, "host:port") read among them. The target's SETSLOT NODE (and
/// Valkey's atomic migration at its end) raises its config epoch without consensus to one above
/// the highest it knows, or not at all when it holds that one already (valkey.io/topics/
/// cluster-spec, "Configuration epoch collisions"; clusterBumpConfigEpochWithoutConsensus in
/// src/cluster_legacy.c of both servers); a target that has not yet heard by gossip of the
/// source's last raise (the source imported a slot itself a moment before) takes an epoch below
/// the source's, and every node still naming the source keeps it against the target's claim
/// while the source, told directly, names the target: the slot's owner then differs between
/// nodes for good. Found live on Redis 8.0.6 (legacy moves back to back: the target at epoch 155
/// below the source's 156); suites/cluster/reshard.cpp checks it. A node that cannot be reached
/// is left out (a failover took it away); an error reply (LOADING) counts as not yet. Throws
/// std::runtime_error after `timeout`, naming both epochs and the node that holds the highest.
inline void await_epoch_known(Client& c, const std::string& source, const std::string& target,
                              std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  const auto epoch_of = [&c](const std::string& node, const char* field) -> long long {
    const Reply r = c.connection(node)("CLUSTER", "INFO");
    return r.is_string() ? server::Info::find_int(r.str(), field, -1) : -1;
  };
  for (;;) {
    long long highest = -1, known = -1;
    std::string holder;
    bool read_all = true, source_read = false;
    for (const auto& node : c.all_nodes()) {
      try {
        const long long e = epoch_of(node, "cluster_my_epoch");
        read_all = read_all && e >= 0;
        source_read = source_read || (node == source && e >= 0);
        if (e > highest) highest = e, holder = node;
      } catch (const resp::ConnectionError&) {  // a node that went away (a failover) is no voter
      }
    }
    try {
      known = epoch_of(target, "cluster_current_epoch");
    } catch (const resp::ConnectionError&) {
    }
    if (read_all && source_read && known >= highest) return;
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error(target + " knows epoch " + std::to_string(known) + ", below the config epoch " +
                               std::to_string(highest) + " of " + holder + (source_read ? "" : " (the source's epoch was not read)") +
                               (read_all ? "" : " (a node answered CLUSTER INFO with an error)") + ", after " +
                               std::to_string(timeout.count()) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
/// Re-reads the client's slot map until it names `target` for `slot` and every node's CLUSTER
/// NODES names `target` as the owner at the config epoch `target` holds now (read from its own
/// CLUSTER NODES each round). Owner alone is not enough: a node rebinds a slot to any sender that
/// claims it at a config epoch above the one it knows for the current owner (the
/// `slots[j]->configEpoch < senderConfigEpoch` test of clusterUpdateSlotsConfigWith, src/
/// cluster_legacy.c of both servers), so a node told the owner by SETSLOT NODE but not yet its
/// raised epoch took the slot back for the previous owner when a ping sent before the move
/// reached it late (Redis 8.6.3, legacy moves back to back: the node named the source at epoch
/// 211 while the target held 212, and the next move's refresh read the old owner from it). Once
/// every node knows the target's epoch, no earlier claim can win. Nodes are matched by id (an
/// announced address or hostname may differ between CLUSTER SLOTS and CLUSTER NODES). A node
/// that cannot be reached is left out (a failover took it away); the target unreached, the wait
/// goes on.
inline void await_owner(Client& c, int slot, const std::string& target, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  const auto nodes_of = [&c](const std::string& node) {
    const Reply r = c.connection(node)("CLUSTER", "NODES");
    return r.is_string() ? r.str() : std::string{};
  };
  long long epoch = -1;
  for (;;) {
    c.refresh();
    bool agreed = c.address_of(slot) == target;
    // Every node's CLUSTER NODES, read once a round; the target's own line gives its id and epoch.
    std::map<std::string, std::string> views;
    if (agreed) {
      auto nodes = c.all_nodes();
      if (std::find(nodes.begin(), nodes.end(), target) == nodes.end()) nodes.push_back(target);
      for (const auto& node : nodes) {
        try {
          views[node] = nodes_of(node);
        } catch (const resp::ConnectionError&) {  // a node that went away (a failover) is no voter
        }
      }
    }
    std::string target_id;
    epoch = -1;
    if (const auto t = views.find(target); t != views.end())
      for (const auto& n : parse_cluster_nodes(t->second))
        if (n.myself) target_id = n.id, epoch = n.config_epoch;
    agreed = agreed && epoch >= 0;  // the target unreached: read again next round
    for (const auto& [node, text] : views) {
      if (!agreed) break;
      const SlotView v = slot_view(text, slot);
      agreed = v.owner_id == target_id && v.owner_epoch >= epoch;
    }
    if (agreed) return;
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error("slot " + std::to_string(slot) + ": after " + std::to_string(timeout.count()) +
                               " ms the client's map names " + c.address_of(slot) + ", or a node does not name " +
                               target + " at its config epoch " + std::to_string(epoch) + "; the nodes' views:" +
                               slot_views(c, slot));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
}  // namespace detail

/// Moves `slot` from its primary to the primary at `target` ("host:port") the legacy way (see
/// the file comment). A slot already served by `target` is left alone (keys 0).
inline MoveReport move_slot_legacy(Client& c, int slot, const std::string& target, LegacyMove o = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  c.refresh();
  MoveReport rep{c.address_of(slot), target, 0, 0};
  if (rep.source == target) return rep;
  const std::string src_id = detail::node_id(c, rep.source), dst_id = detail::node_id(c, target);
  auto& src = c.connection(rep.source);
  auto& dst = c.connection(target);
  const std::string at = " (slot " + std::to_string(slot) + ", " + rep.source + " -> " + target + ")";
  detail::await_epoch_known(c, rep.source, target, o.timeout);  // before anything changes: a timeout leaves the slot as it was
  detail::expect_ok(c, slot, dst("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id), target + ": CLUSTER SETSLOT IMPORTING" + at);
  if (const Reply r = src("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id); r != Reply::ok()) {
    try {
      (void)dst("CLUSTER", "SETSLOT", slot, "STABLE");  // no key moved: the target's IMPORTING state goes too
    } catch (const resp::ConnectionError&) {  // the MIGRATING refusal is the error to report
    }
    detail::expect_ok(c, slot, r, rep.source + ": CLUSTER SETSLOT MIGRATING" + at);
  }
  const auto colon = target.rfind(':');
  for (;;) {
    const Reply keys = src("CLUSTER", "GETKEYSINSLOT", slot, o.batch);
    if (!keys.is_array()) throw std::runtime_error(rep.source + ": CLUSTER GETKEYSINSLOT answered " + keys.to_string() + at);
    if (keys.size() == 0) break;
    Argv m{"MIGRATE", target.substr(0, colon), target.substr(colon + 1), "", "0", std::to_string(o.migrate_timeout_ms), "KEYS"};
    for (const auto& k : keys.elements()) m.push_back(k.str());
    const Reply r = src.call(m);
    if (r != Reply::ok()) throw std::runtime_error(rep.source + ": " + resp::cli_line(m) + " answered " + r.to_string() + at);
    rep.keys += static_cast<long>(keys.size());
  }
  if (o.while_importing) o.while_importing();
  detail::await_epoch_known(c, rep.source, target, o.timeout);  // again, right before the target's epoch raise
  detail::expect_ok(c, slot, dst("CLUSTER", "SETSLOT", slot, "NODE", dst_id), target + ": CLUSTER SETSLOT NODE" + at);
  detail::expect_ok(c, slot, src("CLUSTER", "SETSLOT", slot, "NODE", dst_id), rep.source + ": CLUSTER SETSLOT NODE" + at);
  for (const auto& p : c.primaries())
    if (p != rep.source && p != target)
      detail::expect_ok(c, slot, c.connection(p)("CLUSTER", "SETSLOT", slot, "NODE", dst_id), p + ": CLUSTER SETSLOT NODE" + at);
  detail::await_owner(c, slot, target, o.timeout);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

/// Moves slots `first`..`last` (all served by one primary) to the primary at `target` with
/// atomic slot migration (see the file comment); waits up to `timeout` for the job. Throws
/// std::runtime_error on a server without CLUSTER MIGRATESLOTS (the reply names it), a job that
/// fails, or one still running after `timeout`.
inline MoveReport move_slots_atomic(Client& c, int first, int last, const std::string& target,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto t0 = std::chrono::steady_clock::now();
  c.refresh();
  MoveReport rep{c.address_of(first), target, 0, 0};
  if (rep.source == target) return rep;
  const std::string dst_id = detail::node_id(c, target);
  auto& src = c.connection(rep.source);
  const std::string range = std::to_string(first) + "-" + std::to_string(last);
  const std::string at = " (slots " + range + ", " + rep.source + " -> " + target + ")";
  long before = 0;
  for (int s = first; s <= last; ++s) before += src("CLUSTER", "COUNTKEYSINSLOT", s).as_integer();
  // The jobs listed before ours (an earlier move of the same range stays listed as "success").
  struct Job {
    std::string name, ranges, state;
  };
  const auto list_jobs = [&] {
    std::vector<Job> out;
    const Reply jobs = src("CLUSTER", "GETSLOTMIGRATIONS");
    if (jobs.is_array())
      for (const auto& job : jobs.elements()) {
        if (!job.is_array()) continue;
        Job j;
        std::string msg;
        for (std::size_t i = 0; i + 1 < job.size(); i += 2) {
          if (!job[i].is_string() || !job[i + 1].is_string()) continue;
          if (job[i].str() == "name") j.name = job[i + 1].str();
          if (job[i].str() == "slot_ranges") j.ranges = job[i + 1].str();
          if (job[i].str() == "state") j.state = job[i + 1].str();
          if (job[i].str() == "message") msg = job[i + 1].str();
        }
        if (!msg.empty()) j.state += " (" + msg + ")";
        out.push_back(std::move(j));
      }
    return out;
  };
  std::vector<std::string> old_names;
  for (const auto& j : list_jobs()) old_names.push_back(j.name);
  // The target raises its epoch without consensus when the job ends (performSlotImportJobFailover
  // in Valkey's src/cluster_migrateslots.c): the same wait as a legacy move's, for the same
  // reason (a legacy move before it told the other primaries the owner directly).
  detail::await_epoch_known(c, rep.source, target, timeout);
  detail::expect_ok(src("CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", first, last, "NODE", dst_id),
                    rep.source + ": CLUSTER MIGRATESLOTS" + at);
  std::string state = "(not listed)";
  for (;;) {
    state = "(not listed)";
    for (const auto& j : list_jobs())
      if (std::find(old_names.begin(), old_names.end(), j.name) == old_names.end()) state = j.state;
    if (state.rfind("success", 0) == 0) break;
    if (state.rfind("failed", 0) == 0 || state.rfind("cancelled", 0) == 0)
      throw std::runtime_error(rep.source + ": the atomic slot migration " + state + at);
    if (std::chrono::steady_clock::now() - t0 > timeout)
      throw std::runtime_error(rep.source + ": the atomic slot migration is still " + state + " after " +
                               std::to_string(timeout.count()) + " ms" + at);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  detail::await_owner(c, first, target, timeout);
  rep.keys = before;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace expirykit::cluster
