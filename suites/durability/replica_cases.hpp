// The scenario tables of replica.cpp: writes on volatile hash fields whose effect on a replica is
// compared with the primary and the model. Each scenario is a list of valkey-cli lines (no
// quoting) in three parts: `setup` (deadlines minutes away), `expire` ("key field..." entries
// whose fields are made LOGICALLY EXPIRED before the commands: active expiry paused, 1 ms TTL,
// server clock waited past), and `cmds`, the writes under test.
// Absolute times are written relative to the server's TIME at the scenario's start:
// @S+900 / @S-5 (Unix seconds), @M+900000 / @M-5000 (Unix ms).
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <expirykit/resp/client.hpp>

namespace replica_cases {

struct Scenario {
  std::string name;
  std::vector<std::string> setup;
  std::vector<std::string> expire;
  std::vector<std::string> cmds;
};

inline std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// The line as an Argv with @S±n / @M±n replaced by absolute times from `t0_ms`.
inline expirykit::resp::Argv expand(const std::string& line, int64_t t0_ms) {
  expirykit::resp::Argv out;
  for (auto w : words(line)) {
    if (w.size() > 3 && w[0] == '@' && (w[1] == 'S' || w[1] == 'M')) {
      const int64_t off = std::stoll(w.substr(2));
      w = std::to_string(w[1] == 'S' ? t0_ms / 1000 + off : t0_ms + off);
    }
    out.push_back(w);
  }
  return out;
}

inline std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& l : v) out += "  " + l + "\n";
  return out.empty() ? "  (none)\n" : out;
}

// A hash with two volatile fields (a, b: 600 s), one persistent field (c), and a second key.
inline const std::vector<std::string> kBase = {"HSET h a 1 b 2 c 3", "HEXPIRE h 600 FIELDS 2 a b",
                                               "HSETEX g PX 600000 FIELDS 1 x 1"};

inline std::vector<Scenario> hsetex() {
  const auto& B = kBase;
  return {
      {"HSETEX without option: new field and existing volatile field", B, {}, {"HSETEX h FIELDS 2 a 10 n 20"}},
      {"HSETEX EX", B, {}, {"HSETEX h EX 900 FIELDS 3 a 10 c 30 n 40"}},
      {"HSETEX PX", B, {}, {"HSETEX h PX 900000 FIELDS 3 a 10 c 30 n 40"}},
      {"HSETEX EXAT", B, {}, {"HSETEX h EXAT @S+900 FIELDS 3 a 10 c 30 n 40"}},
      {"HSETEX PXAT", B, {}, {"HSETEX h PXAT @M+900000 FIELDS 3 a 10 c 30 n 40"}},
      {"HSETEX KEEPTTL on volatile, persistent and new fields", B, {}, {"HSETEX h KEEPTTL FIELDS 3 a 10 c 30 n 40"}},
      {"HSETEX on a new key", {}, {}, {"HSETEX k EX 900 FIELDS 2 a 1 b 2", "HSETEX k2 FIELDS 1 a 1"}},
      {"HSETEX FNX: all new, then one existing",
       B,
       {},
       {"HSETEX h FNX EX 900 FIELDS 2 n 1 m 2", "HSETEX h FNX PX 900000 FIELDS 2 a 9 o 9", "HSETEX k FNX EX 900 FIELDS 1 a 1"}},
      {"HSETEX FXX: all existing, then one missing",
       B,
       {},
       {"HSETEX h FXX PX 900000 FIELDS 2 a 9 c 9", "HSETEX h FXX EX 900 FIELDS 2 b 9 m 9", "HSETEX k FXX EX 900 FIELDS 1 a 1",
        "HSETEX h FXX KEEPTTL FIELDS 2 a 8 b 8"}},
      {"HSETEX key-level NX and XX",
       B,
       {},
       {"HSETEX h NX EX 900 FIELDS 1 a 9", "HSETEX k NX EX 900 FIELDS 1 a 1", "HSETEX h XX PX 900000 FIELDS 1 b 9",
        "HSETEX k2 XX EX 900 FIELDS 1 a 1"}},
      {"HSETEX past PXAT on new fields", B, {}, {"HSETEX h PXAT @M-5000 FIELDS 2 n 1 m 2"}},
      {"HSETEX past EXAT on existing fields", B, {}, {"HSETEX h EXAT @S-5 FIELDS 2 a 10 c 30"}},
      {"HSETEX past time on every field deletes the key", B, {}, {"HSETEX h PXAT @M-5000 FIELDS 3 a 1 b 2 c 3"}},
      {"HSETEX past time on a new key creates nothing", {}, {}, {"HSETEX k PXAT @M-5000 FIELDS 1 a 1"}},
      {"HSETEX FXX with a past time", B, {}, {"HSETEX h FXX PXAT @M-1 FIELDS 2 a 1 c 3"}},
  };
}

/// Each command x condition x later/earlier deadline, on a persistent field p, a volatile field
/// v (600 s) and a missing field m.
inline std::vector<Scenario> hexpire_family() {
  struct Cmd {
    std::string name, later, earlier;
  };
  const std::vector<Cmd> cmds = {{"HEXPIRE", "900", "300"},
                                 {"HPEXPIRE", "900000", "300000"},
                                 {"HEXPIREAT", "@S+900", "@S+300"},
                                 {"HPEXPIREAT", "@M+900000", "@M+300000"}};
  const std::vector<std::string> setup = {"HSET h p 1 v 2 w 3", "HEXPIRE h 600 FIELDS 2 v w"};
  std::vector<Scenario> out;
  for (const auto& c : cmds)
    for (const std::string cond : {"", "NX", "XX", "GT", "LT"})
      for (const auto& t : {c.later, c.earlier}) {
        const std::string line = c.name + " h " + t + (cond.empty() ? "" : " " + cond) + " FIELDS 3 p v m";
        out.push_back({line, setup, {}, {line, c.name + " g " + t + " FIELDS 1 m"}});
      }
  return out;
}

/// Past deadlines (0 for the relative forms, a few seconds ago for the absolute ones) with each
/// condition: fields are deleted when the condition holds; the key goes with its last field.
inline std::vector<Scenario> hexpire_past() {
  const std::vector<std::pair<std::string, std::string>> cmds = {
      {"HEXPIRE", "0"}, {"HPEXPIRE", "0"}, {"HEXPIREAT", "@S-5"}, {"HPEXPIREAT", "@M-5000"}};
  const std::vector<std::string> setup = {"HSET h p 1 v 2 w 3", "HEXPIRE h 600 FIELDS 1 v"};
  std::vector<Scenario> out;
  for (const auto& [c, t] : cmds) {
    for (const std::string cond : {"", "NX", "XX", "GT", "LT"}) {
      const std::string line = c + " h " + t + (cond.empty() ? "" : " " + cond) + " FIELDS 3 p v m";
      out.push_back({line, setup, {}, {line}});
    }
    const std::string all = c + " h " + t + " FIELDS 3 p v w";
    out.push_back({all + " (every field: the key goes)", setup, {}, {all}});
  }
  return out;
}

inline std::vector<Scenario> other_writes() {
  const auto& B = kBase;
  return {
      {"HPERSIST on volatile, persistent and missing fields", B, {}, {"HPERSIST h FIELDS 3 a c m", "HPERSIST k FIELDS 1 a"}},
      {"HGETEX EX", B, {}, {"HGETEX h EX 900 FIELDS 3 a c m"}},
      {"HGETEX PX", B, {}, {"HGETEX h PX 900000 FIELDS 3 a c m"}},
      {"HGETEX EXAT", B, {}, {"HGETEX h EXAT @S+900 FIELDS 3 a c m"}},
      {"HGETEX PXAT", B, {}, {"HGETEX h PXAT @M+900000 FIELDS 3 a c m"}},
      {"HGETEX PERSIST", B, {}, {"HGETEX h PERSIST FIELDS 3 a c m"}},
      {"HGETEX without option", B, {}, {"HGETEX h FIELDS 2 a c"}},
      {"HGETEX past PXAT deletes the fields", B, {}, {"HGETEX h PXAT @M-5000 FIELDS 2 a c"}},
      {"HGETEX past EXAT on every field deletes the key", B, {}, {"HGETEX h EXAT @S-5 FIELDS 3 a b c"}},
      {"HGETDEL", B, {}, {"HGETDEL h FIELDS 3 a c m"}},
      {"HGETDEL of every field deletes the key", B, {}, {"HGETDEL h FIELDS 3 a b c", "HGETDEL g FIELDS 1 x"}},
      {"HDEL of a volatile field", B, {}, {"HDEL h a m"}},
      {"HINCRBY keeps the field TTL", B, {}, {"HINCRBY h a 5", "HINCRBY h n 2"}},
      {"HINCRBYFLOAT keeps the field TTL", B, {}, {"HINCRBYFLOAT h a 1.5", "HINCRBYFLOAT h b -0.25", "HINCRBYFLOAT h n 2.5"}},
      {"HSET and HSETNX over volatile fields", B, {}, {"HSET h a 10", "HSETNX h b 20", "HSETNX h n 30"}},
      {"HSETEX KEEPTTL on volatile fields", B, {}, {"HSETEX h KEEPTTL FIELDS 2 a 10 b 20"}},
      {"COPY and RENAME of hashes with volatile fields", B, {}, {"COPY h h2", "RENAME g g2"}},
      {"a mixed sequence",
       B,
       {},
       {"HPEXPIRE h 700000 GT FIELDS 2 a c", "HSETEX h FNX PX 800000 FIELDS 1 n 1", "HINCRBY h n 3", "HPERSIST h FIELDS 1 b",
        "HGETEX h PX 500000 FIELDS 1 b", "HEXPIRE h 400 LT FIELDS 3 a b c", "HDEL h c"}},
  };
}

/// The same writes on a LOGICALLY EXPIRED field a (1 ms TTL passed, active expiry paused); b is
/// persistent, c volatile (600 s). Where servers differ (HEXPIRE on an expired field, HDEL,
/// KEEPTTL, lazy deletion on Redis) the model's dialect says what each must do.
inline std::vector<Scenario> on_expired() {
  const std::vector<std::string> S = {"HSET h a 1 b 2 c 3", "HEXPIRE h 600 FIELDS 1 c"};
  const std::vector<std::string> E = {"h a"};
  std::vector<Scenario> out = {
      {"nothing (the expired field stays stored on both)", S, E, {}},
      {"HSET", S, E, {"HSET h a 9"}},
      {"HSETNX", S, E, {"HSETNX h a 9"}},
      {"HSETEX KEEPTTL (valkey-io/valkey#3036)", S, E, {"HSETEX h KEEPTTL FIELDS 1 a 9"}},
      {"HSETEX KEEPTTL with a live field", S, E, {"HSETEX h KEEPTTL FIELDS 2 a 9 c 8"}},
      {"HSETEX without option", S, E, {"HSETEX h FIELDS 1 a 9"}},
      {"HSETEX EX", S, E, {"HSETEX h EX 900 FIELDS 1 a 9"}},
      {"HSETEX PXAT", S, E, {"HSETEX h PXAT @M+900000 FIELDS 1 a 9"}},
      {"HSETEX past PXAT", S, E, {"HSETEX h PXAT @M-5000 FIELDS 1 a 9"}},
      {"HSETEX FNX", S, E, {"HSETEX h FNX EX 900 FIELDS 1 a 9"}},
      {"HSETEX FXX", S, E, {"HSETEX h FXX EX 900 FIELDS 1 a 9"}},
      {"HSETEX key-level XX", S, E, {"HSETEX h XX EX 900 FIELDS 1 a 9"}},
      {"HSETEX key-level NX", S, E, {"HSETEX h NX EX 900 FIELDS 1 a 9"}},
      {"HGETEX PERSIST", S, E, {"HGETEX h PERSIST FIELDS 2 a c"}},
      {"HGETEX EX", S, E, {"HGETEX h EX 900 FIELDS 2 a c"}},
      {"HGETEX past PXAT", S, E, {"HGETEX h PXAT @M-5000 FIELDS 1 a"}},
      {"HGETDEL of the expired field alone", S, E, {"HGETDEL h FIELDS 1 a"}},
      {"HPERSIST of the expired field alone", S, E, {"HPERSIST h FIELDS 1 a"}},
      {"HDEL of the expired field alone", S, E, {"HDEL h a"}},
      {"HINCRBY", S, E, {"HINCRBY h a 5"}},
      {"HINCRBYFLOAT", S, E, {"HINCRBYFLOAT h a 1.5"}},
      {"HGET (Redis deletes lazily and propagates it)", S, E, {"HGET h a", "HEXISTS h a"}},
      {"RENAME", S, E, {"RENAME h h2"}},
  };
  // With conditions that fail on the live field c (NX: c has a TTL; LT: 900 s is later than
  // c's 600 s) or a past time, the expired field a is not revived (the other conditions are in
  // on_expired_valkey_4732()).
  for (const std::string c : {"HEXPIRE h 900", "HPEXPIRE h 900000", "HEXPIREAT h @S+900", "HPEXPIREAT h @M+900000"})
    for (const std::string cond : {" NX", " LT"}) {
      const std::string line = c + cond + " FIELDS 2 a c";
      out.push_back({line, S, E, {line}});
    }
  for (const std::string cond : {"", " NX", " XX", " GT", " LT"}) {
    const std::string line = "HEXPIRE h 0" + cond + " FIELDS 2 a c";
    out.push_back({line, S, E, {line}});
  }
  // Every field expired: the key stays, stored, hidden from reads, on both nodes.
  const std::vector<std::string> S2 = {"HSET h a 1 b 2"};
  const std::vector<std::string> E2 = {"h a b"};
  out.push_back({"all fields expired: nothing", S2, E2, {}});
  out.push_back({"all fields expired: HSETEX KEEPTTL", S2, E2, {"HSETEX h KEEPTTL FIELDS 1 a 9"}});
  out.push_back({"all fields expired: HSET", S2, E2, {"HSET h b 9"}});
  out.push_back({"all fields expired: HDEL", S2, E2, {"HDEL h a b"}});
  out.push_back({"all fields expired: HGETDEL", S2, E2, {"HGETDEL h FIELDS 2 a b"}});
  out.push_back({"all fields expired: HPERSIST", S2, E2, {"HPERSIST h FIELDS 2 a b"}});
  out.push_back({"all fields expired: HEXPIRE 0", S2, E2, {"HEXPIRE h 0 FIELDS 2 a b"}});
  out.push_back({"all fields expired: RENAME", S2, E2, {"RENAME h h2"}});
  // Five expired fields written over at once, and HSETNX / HINCRBY on expired fields
  // (valkey-hfe.md checklist 102, 104, 105: state and the replica's notifications).
  const std::vector<std::string> S5 = {"HSET h f1 1 f2 2 f3 3 f4 4 f5 5 keep 6"};
  const std::vector<std::string> E5 = {"h f1 f2 f3 f4 f5"};
  out.push_back({"five expired fields: HMSET over all of them", S5, E5, {"HMSET h f1 a f2 b f3 c f4 d f5 e"}});
  out.push_back({"five expired fields: HSETNX and HINCRBY on two", S5, E5, {"HSETNX h f1 a", "HINCRBY h f2 7"}});
  return out;
}

/// Writes that name a logically expired field a together with a live field c: the primary
/// treats a as missing, so the replica must not see a revived (HPERSIST, HEXPIRE*) or deleted
/// (HDEL, HGETDEL) either. Valkey 9.1.2 propagates the command with a in it
/// (valkey-io/valkey#4732).
inline std::vector<Scenario> on_expired_valkey_4732() {
  const std::vector<std::string> S = {"HSET h a 1 b 2 c 3", "HEXPIRE h 600 FIELDS 1 c"};
  const std::vector<std::string> E = {"h a"};
  std::vector<Scenario> out = {
      {"HPERSIST of an expired and a live field", S, E, {"HPERSIST h FIELDS 2 a c"}},
      {"HGETDEL of an expired and a live field", S, E, {"HGETDEL h FIELDS 2 a c"}},
      {"HDEL of an expired and a live field", S, E, {"HDEL h a c"}},
  };
  for (const std::string c : {"HEXPIRE h 900", "HPEXPIRE h 900000", "HEXPIREAT h @S+900", "HPEXPIREAT h @M+900000"})
    for (const std::string cond : {"", " XX", " GT"}) {
      const std::string line = c + cond + " FIELDS 2 a c";
      out.push_back({line, S, E, {line}});
    }
  return out;
}

/// COPY of a hash that stores logically expired fields (known_issues/table.hpp
/// "valkey-copy-expired-fields-replica").
inline std::vector<Scenario> copy_expired() {
  return {
      {"COPY of a hash with an expired and live fields", {"HSET h a 1 b 2 c 3", "HEXPIRE h 600 FIELDS 1 c"}, {"h a"}, {"COPY h h2"}},
      {"COPY of a hash whose only field is expired", {"HSET h a 1"}, {"h a"}, {"COPY h h2"}},
      {"COPY REPLACE of an all-expired hash", {"HSET h a 1 b 2", "HSET h2 z 1"}, {"h a b"}, {"COPY h h2 REPLACE"}},
  };
}

/// HSETEX on keys named like its flags (found by the durability property on Valkey 9.1.2: the
/// propagated command loses its key with the stripped flags).
inline std::vector<Scenario> hsetex_flag_named_key() {
  return {
      {"HSETEX KEEPTTL FNX on a key named FNX", {}, {}, {"HSETEX FNX KEEPTTL FNX FIELDS 1 b v"}},
      {"HSETEX PX on a key named nx", {}, {}, {"HSETEX nx PX 100000 FIELDS 1 a 1"}},
      {"HSETEX EX on a key named fxx", {"HSET fxx a 0"}, {}, {"HSETEX fxx FXX EX 1000 FIELDS 1 a 1"}},
  };
}

/// HSETEX over every stored field of a hash whose fields are all logically expired, on a key
/// with a key TTL (found by the durability property on Valkey 9.1.2, seed 4293354902603055910):
/// the lazy deletion is propagated as HDEL first, which deletes the key and its TTL on the
/// replica only. Valkey 9.1.2 does it for KEEPTTL, Redis 8.0.6 for FNX (known_issues/table.hpp
/// "valkey-hsetex-keepttl-replica-drops-key-ttl", "redis-hsetex-fnx-replica-drops-key-ttl"; live).
inline std::vector<Scenario> hsetex_over_expired_key_ttl() {
  const std::vector<std::string> S1 = {"HSET h a 1", "PEXPIREAT h @M+600000"};
  const std::vector<std::string> S2 = {"HSET h a 1 b 2", "PEXPIREAT h @M+600000"};
  const std::vector<std::string> E1 = {"h a"}, E2 = {"h a b"};
  return {
      {"HSETEX KEEPTTL over the only, expired field of a key with a TTL", S1, E1, {"HSETEX h KEEPTTL FIELDS 1 a 9"}},
      {"HSETEX KEEPTTL over both expired fields of a key with a TTL", S2, E2, {"HSETEX h KEEPTTL FIELDS 2 a 9 b 8"}},
      {"HSETEX FNX over the only, expired field of a key with a TTL", S1, E1, {"HSETEX h FNX FIELDS 1 a 9"}},
      {"HSETEX FNX EX over both expired fields of a key with a TTL", S2, E2, {"HSETEX h FNX EX 900 FIELDS 2 a 9 b 8"}},
      {"HSETEX FNX KEEPTTL over both expired fields of a key with a TTL", S2, E2, {"HSETEX h FNX KEEPTTL FIELDS 2 a 9 b 8"}},
  };
}

/// The same state (every stored field expired, a key TTL) under the writes that keep the replica
/// equal to the primary on both servers (live 9.1.2, 8.0.6): the key TTL survives, or goes on
/// both.
inline std::vector<Scenario> writes_over_expired_key_ttl() {
  const std::vector<std::string> S = {"HSET h a 1", "PEXPIREAT h @M+600000"};
  const std::vector<std::string> E = {"h a"};
  return {
      {"HSETEX without option over the expired field, key TTL", S, E, {"HSETEX h FIELDS 1 a 9"}},
      {"HSETEX EX over the expired field, key TTL", S, E, {"HSETEX h EX 900 FIELDS 1 a 9"}},
      {"HSETEX KEEPTTL over one of two expired fields, key TTL", {"HSET h a 1 b 2", "PEXPIREAT h @M+600000"}, {"h a b"},
       {"HSETEX h KEEPTTL FIELDS 1 a 9"}},
      {"HSET over the expired field, key TTL", S, E, {"HSET h a 9"}},
      {"HSET of a new field beside the expired one, key TTL", S, E, {"HSET h b 9"}},
      {"HINCRBY over the expired field, key TTL", S, E, {"HINCRBY h a 5"}},
      {"HGETEX PERSIST over the expired field, key TTL", S, E, {"HGETEX h PERSIST FIELDS 1 a"}},
      {"HGETDEL of the expired field, key TTL", S, E, {"HGETDEL h FIELDS 1 a"}},
  };
}

/// HSETEX with its expiry option repeated (found by the durability property on Valkey 9.1.2).
inline std::vector<Scenario> hsetex_repeated_expiry() {
  return {
      {"HSETEX EX 10 EX 1000", {}, {}, {"HSETEX k1 EX 10 EX 1000 FIELDS 1 b v"}},
      {"HSETEX PX twice on an existing hash", {"HSET k2 a 1"}, {}, {"HSETEX k2 PX 10000 PX 100000 FIELDS 1 b v"}},
  };
}

}  // namespace replica_cases
