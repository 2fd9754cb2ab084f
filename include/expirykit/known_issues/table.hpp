// expirykit/known_issues/table.hpp: server defects the kit knows about, as one table.
//
// The known-issue mechanism lives in this folder (namespace expirykit::known_issues): the row type
// (known_issue.hpp), this table and its lookups, the verdict every check reports for a row
// (verdict.hpp), and the predicates crash and matcher rows are made of (detail/predicates.hpp).
// A new row touches this folder only (and, as every row should have, an example check in
// suites/semantics/known_issue_examples.hpp or the suite that found it).
//
// The model is the specification: what the documentation, the design and the fixed behaviour
// say (model/dialect.hpp holds only dialect facts). When a released server does something else,
// that is a known server issue, recorded here with the upstream report (or "unreported" and a
// replay script of valkey-cli / redis-cli lines), the affected versions and one sentence. Every
// check that meets one reports it through judge() with one verdict word (known_issues/verdict.hpp:
// KNOWN ISSUE while a server in the row's range shows it, FIXED when one no longer does, a
// failure when the defect shows outside the range).
//
// Who asks the table:
//   - state::Twin, per step (state/known_divergence.hpp): a row with `reproduce` names a defect
//     the model can replay (model::Defects); a row with `matches` recognises a divergence the
//     model cannot replay. The step is excused and names the row (Step::known_issue).
//   - Catch2 examples (catch2/known_issue.hpp): suites/semantics, suites/durability.
//   - the memory guard (memory/guard.hpp): small hashes that are not compact.
//
//   if (auto* k = known_issues::find("valkey-expired-fields-propagated"); k && k->covers(id)) ...
//
// Add a row when a suite finds a divergence on a released server: an id the checks name, the
// first affected version known, `until` empty while no fixed release is known, the report, and a
// replay script that shows it on a fresh server started with --enable-debug-command yes.
//
// This header holds the table and its lookups (table(), find(), recognisable_issues()) and
// includes its parts: the row type (known_issue.hpp), judge() (verdict.hpp) and the predicates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/model/dialect.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/known_issues/detail/predicates.hpp>
#include <expirykit/known_issues/verdict.hpp>
#include <expirykit/known_issues/known_issue.hpp>

namespace expirykit::known_issues {

namespace detail {
/// The row of `flavor` from `from` on: active expiry that resumes after a hash's key TTL and
/// field deadlines passed reclaims them in the order its cycle reaches them, not in deadline
/// order (Valkey 9.1.2 and Redis 8.0.6 / 8.6.3 alike, live 2026-12-06: suites/semantics/effects.cpp).
inline KnownIssue key_ttl_order(server::Flavor flavor, server::Version from) {
  const std::string prefix = flavor == server::Flavor::valkey ? "valkey" : "redis";
  return {prefix + "-active-expiry-key-ttl-order", flavor, from, std::nullopt, "unreported",
          "active expiry that resumes after a hash's key TTL and field deadlines have passed reclaims them in the "
          "order its cycle reaches them, not in deadline order (Valkey 9.1.2: every due field first in some runs, "
          "the key first in others; Redis 8.0.6 and 8.6.3: every due field first in every run seen): fields due at "
          "or after the key's TTL are notified (hexpired) and counted, or fields due "
          "before it are not and a hash whose every field fell due before its key TTL counts as an expired key "
          "(specified: fields due before the key TTL expire as fields, the key's TTL takes the rest, `expired` "
          "alone)",
          "CONFIG SET notify-keyspace-events KEA   # another connection: PSUBSCRIBE __keyevent@0__:*\n"
          "DEBUG SET-ACTIVE-EXPIRE 0\n"
          "HSET k a 1 b 2\n"
          "PEXPIRE k 100\n"
          "HPEXPIRE k 200 FIELDS 1 a           # a is due 100 ms after the key\n"
          "HSET g a 1 b 2\n"
          "HPEXPIRE g 100 FIELDS 2 a b\n"
          "PEXPIRE g 200                       # every field of g is due 100 ms before its key\n"
          "# wait 300 ms\n"
          "DEBUG SET-ACTIVE-EXPIRE 1\n"
          "# wait 300 ms; the subscriber heard either hexpired k, expired k, hexpired g, del g (every due field first)\n"
          "# or expired k, expired g (the keys first); specified: expired k, hexpired g, del g\n"
          "INFO stats                          # expired_fields (expired_subkeys) 3 or 0 (specified: 2), expired_keys 1 or 2 (specified: 1)",
          {},
          {},
          {},
          {}};
}
}  // namespace detail

inline const std::vector<KnownIssue>& table() {
  using server::Flavor;
  using server::Version;
  static const std::vector<KnownIssue> rows = {
      {"valkey-copy-expired-fields-replica", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "COPY of a hash that stores logically expired (unreclaimed) fields leaves them out of the primary's copy (an "
       "all-expired source gives an empty hash, HLEN 0) but the replica, which executes the propagated COPY, copies "
       "them (HLEN 1): the replica side of valkey-copy-skips-expired-fields",
       "# primary with one replica attached\n"
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "COPY h h2\n"
       "HLEN h2            # primary: 0\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "HLEN h2            # replica: 1 (the expired field a)",
       {},
       {},
       {},
       {}},
      {"valkey-copy-skips-expired-fields", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "COPY leaves the logically expired (unreclaimed) fields of a hash out of the copy, and copies a hash whose fields "
       "are all expired as an EMPTY hash that EXISTS with HLEN 0 and that active expiry never removes; the "
       "specification copies every stored field with its deadline, as RENAME, DUMP/RESTORE, Redis 8.0.6 and the "
       "replica executing the same COPY do (src/t_hash.c hashTypeDup copies each entry with its expiry, but its "
       "iterator skips expired entries)",
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1 b 2\n"
       "HSET g a 1\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "HPEXPIRE g 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "COPY h h2          # 1\n"
       "HLEN h2            # 1 (specified: 2, as HLEN h)\n"
       "COPY g g2          # 1\n"
       "HLEN g2            # 0: an empty hash (specified: 1)\n"
       "DEBUG SET-ACTIVE-EXPIRE 1\n"
       "# wait 1 s\n"
       "EXISTS g g2        # 1: g is reclaimed, the empty g2 stays (specified: 0)",
       {"COPY"},
       model::Defects{.copy_skips_expired_fields = true},
       {},
       {}},
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
       "HGETALL h                 # replica: a 1 c 3 (a revived, no TTL)",
       {},
       {},
       {},
       {}},
      {"valkey-fields-keyword-scan-includes-key", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "HSETEX and HGETEX look for their FIELDS keyword from the key on (src/t_hash.c: the scan starts at argv[0]), so "
       "on a key named \"fields\" (any case) the key is taken for the keyword: the documented form fails and a form "
       "without FIELDS writes; the specification (the documented syntax, and Redis 8.0.6) looks after the key only. "
       "An AOF rewrite without the RDB preamble writes a hash with field TTLs as HSETEX <key> PXAT <ms> FIELDS ..., "
       "so a key named fields is refused while the AOF loads and lost (live, found by the durability property)",
       "HSETEX fields FIELDS 1 a 1   # ERR value is not an integer or out of range (specified: 1)\n"
       "HSETEX fields 2 a 1 b 2      # 1, sets a and b (specified: the numfields error)\n"
       "HGETEX fields FIELDS 1 a     # ERR value is not an integer or out of range (specified: [\"1\"])\n"
       "# on a server with appendonly yes and aof-use-rdb-preamble no:\n"
       "HSET fields a v\n"
       "HEXPIRE fields 1000 FIELDS 1 a\n"
       "BGREWRITEAOF                 # the base file holds HSETEX fields PXAT <ms> FIELDS 1 a v\n"
       "DEBUG LOADAOF                # the log: CRITICAL ... 'value is not an integer or out of range' ... 'hsetex'\n"
       "EXISTS fields                # 0 (specified: 1)",
       {"HSETEX", "HGETEX"},
       model::Defects{.fields_keyword_scan_includes_key = true},
       {},
       {}},
      {"valkey-fields-token-unchecked", Flavor::valkey, Version{9, 0, 0}, Version{9, 1, 2}, "valkey-io/valkey#4045",
       "HGETDEL, HPERSIST and HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME accept any token where their FIELDS keyword "
       "belongs instead of answering a syntax error (fixed by valkey-io/valkey#4049 and #4300; Valkey 9.1.2 checks it, "
       "live; 9.0.x and 9.1.0 do not, per the reports)",
       "HSET key field value\n"
       "HPERSIST key a 1 field        # [-1] (specified: ERR syntax error)\n"
       "HGETDEL key persist 1 field   # [\"value\"] (9.1.0; specified: ERR syntax error)",
       {"HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST", "HGETDEL"},
       model::Defects{.fields_token_unchecked = true},
       {},
       {}},
      {"valkey-hsetex-flag-named-key", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "HSETEX on a key named like one of its flags (NX, XX, FNX, FXX, any case) with an expiry option is propagated "
       "with the key removed along with the flags, so the replica and the AOF write another key (the next argument, "
       "e.g. KEEPTTL) or reject the command, while the primary wrote the named key; with no expiry option (`HSETEX nx "
       "NX FIELDS 1 b v`) the AOF gets `HSETEX FIELDS 1 b v` and can no longer be loaded (DEBUG LOADAOF refused, "
       "log: \"wrong number of arguments for 'hsetex'\"), so a restart fails; its keyspace notifications and its "
       "tracking invalidations name the same wrong key",
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
       "HSETEX FNX EXAT 2000000000 FIELDS 1 b v   # events hset and hexpire for key PXAT, not FNX\n"
       "# on a connection with CLIENT TRACKING ON that read FNX and PXAT (HLEN FNX, HLEN PXAT):\n"
       "HSETEX FNX EXAT 2000000000 FIELDS 1 b v   # invalidates PXAT, not FNX",
       {"HSETEX"},
       {},
       // The twin sees the notifications and the tracking invalidations, both for the wrong key
       // (live 9.1.2): the replies agree, the events or the invalidations differ.
       [](const Divergence& d) {
         if ((d.events_diff.empty() && d.tracking_diff.empty()) || !(d.model == d.server)) return false;
         for (const auto& a : d.commands())
           if (detail::is_flag_named_hsetex(a)) return true;
         return false;
       },
       {}},
      {"valkey-hsetex-repeated-expiry", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "HSETEX with its expiry option repeated (EX 10 EX 1000, PX twice; the primary accepts it, the last one wins) is "
       "propagated with only one of them rewritten to PXAT, so the replica rejects it (syntax error) and never writes "
       "the fields",
       "# primary with one replica attached\n"
       "HSETEX k1 EX 10 EX 1000 FIELDS 1 b v   # primary: 1\n"
       "EXISTS k1                              # primary: 1\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "EXISTS k1                              # replica: 0; its log: \"This replica is sending an error to its "
       "primary: '-ERR syntax error' after processing the command 'hsetex'\"",
       {},
       {},
       {},
       {}},
      {"valkey-hsetex-keepttl-replica-drops-key-ttl", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "HSETEX KEEPTTL naming every stored field of a hash whose fields are all logically expired (unreclaimed) is "
       "propagated as MULTI, HDEL of those fields, HSETEX, EXEC: the HDEL empties the hash on the replica, which deletes "
       "the key with its key TTL and lets HSETEX create a new key without one, while the primary writes into the key "
       "it kept, TTL included; the replica's copy then never expires (and a failover promotes it)",
       "# primary with one replica attached\n"
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1\n"
       "PEXPIREAT h 4102444800000\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "HSETEX h KEEPTTL FIELDS 1 a 9   # 1\n"
       "PEXPIRETIME h                   # primary: 4102444800000\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "PEXPIRETIME h                   # replica: -1 (MONITOR shows MULTI, HDEL h a, HSETEX h KEEPTTL ..., EXEC)",
       {},
       {},
       {},
       {}},
      {"valkey-script-string-not-int-encoded", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "a string holding an integer written by a script (SET from EVAL) reports OBJECT ENCODING embstr, where the same "
       "SET from a client, and Redis 8.0.6 either way, gives int (MEMORY USAGE is the same)",
       "EVAL \"return redis.call('SET', KEYS[1], ARGV[1])\" 1 k 123\n"
       "OBJECT ENCODING k      # embstr (a client's SET k 123: int)",
       {},
       {},
       {},
       {}},
      {"valkey-empty-hash-fork-crash", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "an empty hash (left by COPY of a hash whose fields are all logically expired, see "
       "valkey-copy-skips-expired-fields) makes every fork child that saves the dataset (BGSAVE, BGREWRITEAOF, a "
       "replica's full sync) fail the assertion object.c:751 'hashtableSize(ht) != 0' in dismissHashObject and hang, "
       "so the save never finishes and no later one can start",
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "COPY h h2            # 1; HLEN h2 is 0: an empty hash\n"
       "BGSAVE               # Background saving started\n"
       "INFO persistence     # rdb_bgsave_in_progress:1, for good; the log shows the child's ASSERTION FAILED",
       {},
       {},
       {},
       {}},
      // state::Twin never sends these forms to a key its model holds as an empty hash
      // (KnownIssue::crashes, Twin::crashing): the step names this row and is not run.
      {"valkey-empty-hash-hrandfield-crash", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "unreported",
       "HRANDFIELD on an empty hash (left by COPY of a hash whose fields are all logically expired, see "
       "valkey-copy-skips-expired-fields) without a count, with count 1 or with a negative count kills the server "
       "with SIGSEGV in entryGetExpiry (hrandfieldCommand; also from a script); counts 0 and 2 or more answer an "
       "empty array, and the other commands tried on it answer (HSCAN, HGETALL, HLEN, HGET, HMGET, HEXPIRE, HTTL, "
       "HPERSIST, HGETEX, HGETDEL, HSET, HSETEX, HINCRBY, DUMP, RENAME, COPY, MOVE, OBJECT ENCODING)",
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "COPY h h2            # 1; HLEN h2 is 0: an empty hash\n"
       "HRANDFIELD h2 2      # (empty array)\n"
       "HRANDFIELD h2        # the server dies (log: crashed by signal: 11, entryGetExpiry); likewise "
       "HRANDFIELD h2 1, HRANDFIELD h2 -1 WITHVALUES",
       {},
       {},
       {},
       // Without a count, with count 1 or a negative one, on a key the model holds as an empty
       // hash (live 9.1.2; counts 0 and >= 2 answer).
       [](const model::Keyspace& ks, const resp::Argv& a, int64_t) {
         if (a.size() < 2 || a.size() > 4 || !detail::iequal(a[0], "HRANDFIELD")) return false;
         const model::Entry* e = ks.raw(a[1]);
         if (!e || !e->is_hash() || !e->hash().fields.empty()) return false;
         long long n = -1;
         if (a.size() > 2 && (!detail::whole_number(a[2], n) || n == 0 || n > 1)) return false;
         return a.size() < 4 || detail::iequal(a[3], "WITHVALUES");
       }},
      // The specification is the documented reply (valkey.io/commands/hrandfield: count distinct
      // fields, or all of them when there are fewer; a logically expired field is not one,
      // valkey-hfe.md §10), which valkey-io/valkey#3558 (open) restores; upstream's tests assert only
      // "at most count" since valkey-io/valkey#4331 (fixing #4208), and #4047 bounded the loop.
      {"valkey-hrandfield-short", Flavor::valkey, Version{9, 1, 2}, std::nullopt, "valkey-io/valkey#3558",
       "HRANDFIELD on a hash whose logically expired (unreclaimed) fields far outnumber its live ones answers nil "
       "without a count, and fewer fields than specified with one (min(count, live) distinct fields for a positive "
       "count, -count fields for a negative one), at random: its sampler gives up after 100 draws of expired "
       "entries (hashTypeRandomElement) and a positive count's loop after a bounded number of tries (maintainers in "
       "#3558: a known limitation of the field TTL work)",
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "EVAL \"for i = 1, 200 do redis.call('HSET', KEYS[1], 'f' .. i, 'v') end\" 1 h\n"
       "EVAL \"for i = 1, 199 do redis.call('HPEXPIRE', KEYS[1], 1, 'FIELDS', 1, 'f' .. i) end\" 1 h\n"
       "DEBUG SLEEP 0.01\n"
       "HRANDFIELD h 2      # live 9.1.2: an empty array in about 1 try of 2 (specified: f200, the live field)\n"
       "HRANDFIELD h -5     # fewer than 5 fields in about 24 tries of 25 (specified: f200 five times)\n"
       "HRANDFIELD h        # nil in about 3 tries of 5 (specified: f200)",
       {"HRANDFIELD"},
       {},
       detail::hrandfield_short_reply,
       {}},
      {"valkey-ttl-hash-not-compact", Flavor::valkey, Version{9, 0, 0}, std::nullopt, "valkey-io/valkey#2618",
       "a field TTL converts a small listpack hash to a hashtable (no compact encoding with field TTLs) and it stays "
       "one after the TTLs are gone, so a one-field hash with a TTL costs about 2.4 times SET EX; closed upstream by "
       "valkey-io/valkey#3212 (listpack encoding for hash field expiration) after 9.1, in no release known here; Redis "
       "keeps such hashes compact as listpackex",
       "HSET h a 1\n"
       "OBJECT ENCODING h          # listpack\n"
       "HEXPIRE h 900 FIELDS 1 a\n"
       "OBJECT ENCODING h          # hashtable (specified: a compact encoding; Redis 8.0.6: listpackex)\n"
       "HPERSIST h FIELDS 1 a\n"
       "OBJECT ENCODING h          # hashtable: it stays one",
       {},
       {},
       {},
       {}},
      {"redis-hsetex-duplicate-field-hashtable-crash", Flavor::redis, Version{8, 6, 3}, std::nullopt, "unreported",
       "HSETEX with EX, PX, EXAT or PXAT (a future time) naming one field twice, on a hashtable-encoded hash that never "
       "had a field TTL (or a new one that will be a hashtable), fails the assertion t_hash.c:3463 "
       "'dictExpireMeta->expireMeta.trash == 0' and the server dies; listpack hashes, hashes with a field TTL, KEEPTTL "
       "and no option answer (live 8.6.3; Redis 8.0.6 answers 1; upstream redis/redis#14956 changes this code path "
       "after 8.6.3, not in a release known here)",
       "CONFIG SET hash-max-listpack-entries 0\n"
       "HSET h a 1 b 2\n"
       "HSETEX h EX 100 FIELDS 2 a 1 a 2   # the server dies (log: ASSERTION FAILED t_hash.c:3463); Redis 8.0.6: 1",
       {},
       {},
       {},
       detail::hsetex_timed_names_a_field_twice},
      {"redis-hexpire-numfields-overflow-crash", Flavor::redis, Version{8, 6, 3}, Version{8, 6, 4}, "redis/redis#15021",
       "HEXPIRE, HPEXPIRE, HEXPIREAT and HPEXPIREAT with a numfields from 2147483643 to 2147483647 (INT_MAX) kill the "
       "server with SIGSEGV (an integer overflow in the argument count; 2147483642 answers the arity error, Redis "
       "8.0.6 the numfields error); fixed in 8.6.4 per the 8.6 release notes (redis/redis#15021)",
       "HSET k f v\n"
       "HEXPIRE k 100 FIELDS 2147483647 f   # the server dies (log: crashed by signal: 11); Redis 8.0.6: ERR The "
       "`numfields` parameter must match the number of arguments",
       {},
       {},
       {},
       detail::hexpire_numfields_near_int_max},
      {"redis-hexpire-revives-expired-field", Flavor::redis, Version{8, 0, 6}, std::nullopt, "unreported",
       "HEXPIRE, HPEXPIRE, HEXPIREAT and HPEXPIREAT see a logically expired (not yet deleted) field with its past "
       "deadline: NX/XX/GT/LT compare with it, a new deadline brings its old value back (reply 1) and a past one "
       "deletes it (reply 2), where HTTL and HPERSIST answer -2 for the same field; the specification is -2 and no "
       "change, since an expired field is gone (the Redis HEXPIRE page: \"After the TTL has expired, the field(s) "
       "will automatically be deleted\")",
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1 b 2\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "HTTL h FIELDS 1 a          # [-2]\n"
       "HPERSIST h FIELDS 1 a      # [-2]\n"
       "HEXPIRE h 100 FIELDS 1 a   # [1] (specified: [-2])\n"
       "HGET h a                   # \"1\": the expired value is back (specified: nil)",
       {"HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"},
       model::Defects{.hexpire_sees_expired = true},
       {},
       {}},
      {"redis-hmget-deletes-hash-silently", Flavor::redis, Version{8, 0, 6}, std::nullopt, "unreported",
       "HMGET whose first logically expired (not yet deleted) field is the hash's last stored field deletes the key "
       "without the `hexpired` and `del` keyspace notifications (expired_subkeys still + 1), where HGET in the same "
       "state, and HMGET reaching it after another expired field, send both (src/t_hash.c hmgetCommand notifies only "
       "when a field expired without emptying the hash); the specification notifies the lazy deletion as HGET does",
       "CONFIG SET notify-keyspace-events KEA\n"
       "# a subscriber: PSUBSCRIBE __keyevent@0__:*\n"
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h1 a 1\n"
       "HSET h2 a 1\n"
       "HPEXPIRE h1 1 FIELDS 1 a\n"
       "HPEXPIRE h2 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "HMGET h1 a      # [nil]; EXISTS h1 is 0, no event (specified: hexpired, del)\n"
       "HGET h2 a       # nil; events hexpired, del",
       {"HMGET"},
       model::Defects{.hmget_deletes_hash_silently = true},
       {},
       {}},
      {"redis-hsetex-fnx-replica-drops-key-ttl", Flavor::redis, Version{8, 0, 6}, std::nullopt, "unreported",
       "HSETEX FNX naming every stored field of a hash whose fields are all logically expired (not yet deleted) is "
       "propagated as MULTI, HDEL of those fields, HSETEX, EXEC: the HDEL empties the hash on the replica, which deletes "
       "the key with its key TTL and lets HSETEX create a new key without one, while the primary writes into the key "
       "it kept, TTL included; the replica's copy then never expires (and a failover promotes it)",
       "# primary with one replica attached\n"
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1\n"
       "PEXPIREAT h 4102444800000\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "HSETEX h FNX FIELDS 1 a 9       # 1\n"
       "PEXPIRETIME h                   # primary: 4102444800000\n"
       "# on the replica, after WAIT 1 0 on the primary:\n"
       "PEXPIRETIME h                   # replica: -1 (MONITOR shows MULTI, HDEL h a, HSETEX h FNX ..., EXEC)",
       {},
       {},
       {},
       {}},
      {"redis-hsetex-keepttl-expired-deadline", Flavor::redis, Version{8, 0, 6}, std::nullopt, "unreported",
       "HSETEX KEEPTTL over a logically expired (not yet deleted) field keeps its past deadline, so the value it "
       "replies 1 for is never readable (HGET nil, then deleted as expired); the specification writes the expired, "
       "hence absent, field as a new one without TTL, as HSET and HSETEX without option do and as Valkey 9.1.2 does",
       "DEBUG SET-ACTIVE-EXPIRE 0\n"
       "HSET h a 1 b 2\n"
       "HPEXPIRE h 1 FIELDS 1 a\n"
       "# wait > 1 ms\n"
       "HSETEX h KEEPTTL FIELDS 1 a 9   # 1\n"
       "HPEXPIRETIME h FIELDS 1 a       # [-2] (specified: [-1])\n"
       "HGET h a                        # nil (specified: \"9\")",
       {"HSETEX"},
       model::Defects{.hsetex_keepttl_keeps_expired_deadline = true},
       {},
       {}},
      detail::key_ttl_order(Flavor::valkey, Version{9, 1, 2}),
      detail::key_ttl_order(Flavor::redis, Version{8, 0, 6}),
      {"redis-pause-hmget-notifies-hexpired", Flavor::redis, Version{8, 0, 6}, std::nullopt, "unreported",
       "HMGET naming a logically expired field while writes are paused (CLIENT PAUSE WRITE) notifies hexpired "
       "although nothing is deleted (the field stays stored, HLEN and expired_subkeys unchanged); after the pause "
       "active expiry deletes it and notifies hexpired again (HGET notifies nothing during the pause)",
       "CONFIG SET notify-keyspace-events KEA   # another connection: PSUBSCRIBE __keyevent@0__:*\n"
       "HSET r q 1 w 2\n"
       "HPEXPIRE r 100 FIELDS 1 q\n"
       "CLIENT PAUSE 60000 WRITE\n"
       "# wait 200 ms\n"
       "HMGET r q w                         # nil, \"2\"; the subscriber hears hexpired r (specified: nothing)\n"
       "HLEN r                              # 2: q was not deleted\n"
       "CLIENT UNPAUSE                      # active expiry deletes q: hexpired r, a second time",
       {},
       {},
       {},
       {}},
  };
  return rows;
}

/// The row with `id`, or nullptr.
inline const KnownIssue* find(std::string_view id) {
  for (const auto& k : table())
    if (k.id == id) return &k;
  return nullptr;
}

/// The rows covering `server` whose description or replay script involves a replica ("replica"
/// in `what` or `replay`), in table order: what a primary-replica difference on that server may
/// be (catch2::ReplicaFixture::check_replica_agrees names them on a failure).
inline std::vector<const KnownIssue*> replica_issues(const server::Identity& server) {
  std::vector<const KnownIssue*> out;
  const auto mentions = [](const std::string& s) { return s.find("replica") != std::string::npos; };
  for (const auto& k : table())
    if (k.covers(server) && (mentions(k.what) || mentions(k.replay))) out.push_back(&k);
  return out;
}

/// The rows covering `server` that state::Twin can recognise per step, in table order.
inline std::vector<const KnownIssue*> recognisable_issues(const server::Identity& server) {
  std::vector<const KnownIssue*> out;
  for (const auto& k : table())
    if (k.recognisable() && k.covers(server)) out.push_back(&k);
  return out;
}

}  // namespace expirykit::known_issues
