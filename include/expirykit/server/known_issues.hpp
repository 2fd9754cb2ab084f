// expirykit/server/known_issues.hpp: server defects the kit knows about, as one table.
//
// The model is the specification: what the documentation and the fixed behaviour say. When a
// released server does something else, that is a known server issue, recorded here with the
// upstream report (or "unreported" and a replay script), the affected versions, and one
// sentence; never a Dialect fact. A check that meets such behaviour asks the table
// (catch2/known_issue.hpp) and reports KNOWN ISSUE instead of failing, and the day a release in
// the recorded range no longer shows it, reports FIXED: narrow the range (`until`) here.
//
//   if (auto* k = server::find_known_issue("valkey-expired-fields-propagated"); k && k->covers(id)) ...
//
// Add a row when a suite finds a divergence on a released server: an id the test names, the
// first affected version, `until` empty while no fixed release is known, the report, and a
// replay script of valkey-cli / redis-cli lines that shows it on a fresh server.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/server/identity.hpp>

namespace expirykit::server {

struct KnownIssue {
  std::string id;                 ///< short name the checks use, e.g. "valkey-expired-fields-propagated"
  Flavor flavor = Flavor::valkey;
  Version from;                   ///< first affected version known
  std::optional<Version> until;   ///< first fixed release; nullopt: none known yet
  std::string report;             ///< "valkey-io/valkey#2618", or "unreported"
  std::string what;               ///< one sentence: what the server does instead of the specification
  std::string replay;             ///< valkey-cli / redis-cli lines reproducing it (newline-separated)

  bool covers(const Identity& id) const {
    return id.flavor == flavor && id.version >= from && (!until || id.version < *until);
  }
};

inline const std::vector<KnownIssue>& known_issues() {
  static const std::vector<KnownIssue> table = {
      {"valkey-copy-expired-fields-replica", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "COPY of a hash that stores logically expired (unreclaimed) fields leaves them out of the primary's copy (an "
       "all-expired source gives an empty hash, HLEN 0) but the replica, which executes the propagated COPY, copies "
       "them (HLEN 1)",
       "# primary with one replica attached\n"
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "COPY h h2\n"
       "HLEN h2            # primary: 0\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "HLEN h2            # replica: 1 (the expired field a)"},
      {"valkey-expired-fields-propagated", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "valkey-io/valkey#4732",
       "HPERSIST, HEXPIRE*, HDEL and HGETDEL naming a logically expired (unreclaimed) field next to a live one are "
       "propagated with the expired field in them, so the replica revives it (HPERSIST, HEXPIRE*) or deletes it "
       "(HDEL, HGETDEL) while the primary still stores it as expired",
       "# primary with one replica attached\n"
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1 c 3\n"
       "HEXPIRE h 600 FIELDS 1 c\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "HPERSIST h FIELDS 2 a c   # primary: [-2, 1]\n"
       "HGETALL h                 # primary: c 3 (HLEN 2)\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "HGETALL h                 # replica: a 1 c 3 (a revived, no TTL)"},
      {"valkey-hsetex-flag-named-key", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "HSETEX on a key named like one of its flags (NX, XX, FNX, FXX, any case) with an expiry option is propagated "
       "with the key removed along with the flags, so the replica and the AOF write another key (the next argument, "
       "e.g. KEEPTTL) or reject the command, while the primary wrote the named key; with no expiry option (`HSETEX nx "
       "NX FIELDS 1 b v`) the AOF gets `HSETEX FIELDS 1 b v` and can no longer be loaded (DEBUG LOADAOF refused, "
       "log: \"wrong number of arguments for 'hsetex'\"), so a restart fails; its keyspace notifications name the "
       "same wrong key",
       "# primary with one replica attached\n"
       "HSETEX FNX KEEPTTL FNX FIELDS 1 b v   # primary: 1, writes key FNX\n"
       "HSETEX nx PX 100000 FIELDS 1 a 1      # primary: 1, writes key nx\n"
       "KEYS *                                # primary: FNX nx\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "KEYS *                                # replica: KEEPTTL (b=v); no FNX, no nx\n"
       "# on a primary with appendonly yes:\n"
       "HSETEX nx NX FIELDS 1 b v             # primary: 1\n"
       "DEBUG LOADAOF                         # ERR Error trying to load the AOF files\n"
       "# with notify-keyspace-events KEA and a subscriber on __keyevent@0__:*:\n"
       "HSETEX FNX EXAT 2000000000 FIELDS 1 b v   # events hset and hexpire for key PXAT, not FNX"},
      {"valkey-hsetex-repeated-expiry", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "HSETEX with its expiry option repeated (EX 10 EX 1000, PX twice; the primary accepts it, the last one wins) is "
       "propagated with only one of them rewritten to PXAT, so the replica rejects it (syntax error) and never writes "
       "the fields",
       "# primary with one replica attached\n"
       "HSETEX k1 EX 10 EX 1000 FIELDS 1 b v   # primary: 1\n"
       "EXISTS k1                              # primary: 1\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "EXISTS k1                              # replica: 0; its log: \"This replica is sending an error to its "
       "primary: '-ERR syntax error' after processing the command 'hsetex'\""},
      {"valkey-script-string-not-int-encoded", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "a string holding an integer written by a script (SET from EVAL) reports OBJECT ENCODING embstr, where the same "
       "SET from a client, and Redis 8.0.6 either way, gives int (MEMORY USAGE is the same)",
       "EVAL \"return redis.call('SET', KEYS[1], ARGV[1])\" 1 k 123\n"
       "OBJECT ENCODING k      # embstr (a client's SET k 123: int)"},
      {"valkey-empty-hash-fork-crash", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "an empty hash (left by COPY of a hash whose fields are all logically expired, see "
       "valkey-copy-expired-fields-replica) makes every fork child that saves the dataset (BGSAVE, BGREWRITEAOF, a "
       "replica's full sync) fail the assertion object.c:751 'hashtableSize(ht) != 0' in dismissHashObject and hang, "
       "so the save never finishes and no later one can start",
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "COPY h h2            # 1; HLEN h2 is 0: an empty hash\n"
       "BGSAVE               # Background saving started\n"
       "INFO persistence     # rdb_bgsave_in_progress:1, for good; the log shows the child's ASSERTION FAILED"},
  };
  return table;
}

/// The row with `id`, or nullptr.
inline const KnownIssue* find_known_issue(std::string_view id) {
  for (const auto& k : known_issues())
    if (k.id == id) return &k;
  return nullptr;
}

}  // namespace expirykit::server
