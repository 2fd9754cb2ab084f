// expirykit/model/dialect.hpp: what differs between servers with hash field TTLs, as data.
//
// A Dialect is picked from the server's identity (Dialect::for_server("valkey", 9, 1)) and read by
// the command functions in model/. The model is the specification: a Dialect member states a
// DIALECT FACT, a documented or intended difference between server lines (an argument grammar, an
// error text, a limit, a reclamation design, an INFO name, an encoding), never a server defect.
// What a released server does against its own documentation or design (a bug a later release may
// fix) is a row of known_issues/table.hpp instead. Some of those rows the model can reproduce
// (Dialect::defects, all off in every factory below) so that state::Twin can tell a known
// divergence from a new one and keep following the server (state/known_divergence.hpp).
//
// Every member cites where the behaviour comes from: valkey-hfe.md §N / redis-hfe.md §N (the
// kit's reference notes on the two servers, docs/semantics/ in this repository) with the tag
// used there ([L]/[V] checked live, [S] source, [T] upstream tests), upstream sources and
// documents, or "live 9.1.2"/"live 8.0.6" for
// facts first established while writing the model. checks/dialect/ runs one example per fact
// against the live servers.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace expirykit::model {

/// How HTTL and HEXPIRETIME turn milliseconds into seconds.
enum class Rounding {
  nearest,  ///< (ms + 500) / 1000, Valkey (valkey-hfe.md §6 [S][L], redis-hfe.md §3 [V])
  ceiling,  ///< (ms + 999) / 1000, Redis (redis-hfe.md §3 [V], live 8.0.6)
};

/// Argument grammar family of the HFE commands (HEXPIRE*, HTTL*, HPERSIST, HSETEX, HGETEX,
/// HGETDEL). The two families differ in structure, not only in texts (redis-hfe.md §2, §4;
/// valkey-hfe.md §2):
///   redis:  fixed positions (FIELDS must follow at most one flag), each flag at most once, key
///           type checked before arguments (except HSETEX), time validated while parsing.
///   valkey: flags in any order and repeatable (last wins), first "FIELDS" token is the keyword,
///           arguments checked before the key type, HSETEX/HGETEX time parsed after the type.
enum class Grammar { redis, valkey };

/// Exact error texts. `{cmd}` is replaced by the lowercase command name, `{arg}` by the
/// offending argument as typed, up to its first NUL byte (format()).
struct ErrorTexts {
  std::string wrongtype = "WRONGTYPE Operation against a key holding the wrong kind of value";
  std::string not_integer = "ERR value is not an integer or out of range";
  std::string syntax = "ERR syntax error";
  std::string arity = "ERR wrong number of arguments for '{cmd}' command";
  std::string expire_time = "ERR invalid expire time in '{cmd}' command";
  /// Negative time in HEXPIRE*/HSETEX/HGETEX. Redis: "must be >= 0"; Valkey: expire_time
  /// (redis-hfe.md §4 [V]).
  std::string negative_time;
  /// Valkey's generic numfields text (valkey-hfe.md §2 [L]).
  std::string numfields;
  /// HEXPIRE*: numfields not a positive integer (Redis: also when not a number).
  std::string hexpire_numfields_range;
  /// HTTL*/HPERSIST/HGETEX/HGETDEL: numfields not a positive integer.
  std::string numfields_range;
  /// numfields != number of field arguments (all but HSETEX).
  std::string numfields_mismatch;
  /// HTTL family mismatch / bad numfields on Valkey: syntax error (valkey-hfe.md §6 [L]).
  std::string httl_numfields;
  /// FIELDS missing / misplaced (Redis).
  std::string fields_missing = "ERR Mandatory argument FIELDS is missing or not at the right position";
  std::string hsetex_numfields_invalid = "ERR invalid number of fields";
  std::string hsetex_fnx_fxx = "ERR Only one of FXX or FNX arguments can be specified";
  std::string hsetex_one_expiry =
      "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified";
  std::string unknown_argument = "ERR unknown argument: {arg}";
  std::string unsupported_option = "ERR Unsupported option {arg}";
  // Redis 8.6's keyword parser (Dialect::keyword_order_free, model/cmd/keyword_args.hpp; live 8.6.3).
  std::string fields_twice = "ERR FIELDS keyword specified multiple times";
  std::string fields_too_close = "ERR FIELDS requires at least numfields and one field argument";
  std::string fields_missing_86 = "ERR missing FIELDS argument";
  std::string wrong_args_bare = "ERR wrong number of arguments";
  std::string multiple_conditions = "ERR Multiple condition flags specified";
  std::string missing_expire_time = "ERR missing expire time";
  std::string hgetex_one_expiry = "ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified";
  std::string unknown_argument_bare = "ERR unknown argument";
  std::string nx_incompatible = "ERR NX and XX, GT or LT options at the same time are not compatible";
  std::string gt_lt_incompatible = "ERR GT and LT options at the same time are not compatible";
  // Commands outside HFE, identical on both servers (live 9.1.2 and 8.0.6).
  std::string hash_not_integer = "ERR hash value is not an integer";
  std::string hash_not_float = "ERR hash value is not a float";
  std::string not_float = "ERR value is not a valid float";
  std::string nan_or_inf = "ERR value is NaN or Infinity";
  std::string incr_overflow = "ERR increment or decrement would overflow";
  std::string float_nan_inf = "ERR increment would produce NaN or Infinity";
  std::string no_such_key = "ERR no such key";
  std::string same_object = "ERR source and destination objects are the same";

  /// Fills `{cmd}` (lowercased) and `{arg}` in a template. `{arg}` is cut at its first NUL byte:
  /// both servers print the argument with `%s` (addReplyErrorFormat, src/networking.c), so
  /// `HEXPIRE h 100 FIELDS 1 a "b\0c"` answers "ERR unknown argument: b" (found live on Redis
  /// 8.6.3 by the cluster property, seed 8420498266047838248; checks/dialect/dialect_facts_test.cpp).
  static std::string format(std::string_view tmpl, std::string_view cmd, std::string_view arg = {}) {
    arg = arg.substr(0, arg.find('\0'));
    std::string out;
    for (std::size_t i = 0; i < tmpl.size();) {
      if (tmpl.substr(i, 5) == "{cmd}") {
        for (char c : cmd) out += (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
        i += 5;
      } else if (tmpl.substr(i, 5) == "{arg}") {
        out += arg;
        i += 5;
      } else {
        out += tmpl[i++];
      }
    }
    return out;
  }
};

/// Server defects the model can reproduce: each switch is one row of known_issues/table.hpp
/// (the id is named at the switch), never a property of a server line. Every Dialect factory
/// leaves them all off (the specification); KnownIssue::reproduce turns one on for
/// state/known_divergence.hpp, which replays a step with it to recognise the known divergence.
struct Defects {
  /// valkey-copy-skips-expired-fields: COPY leaves logically expired fields out of the copy (an
  /// all-expired source gives an empty hash). Specification: COPY duplicates every stored field
  /// with its deadline, as RENAME, DUMP/RESTORE and a replica executing the COPY do.
  bool copy_skips_expired_fields = false;
  /// redis-hsetex-keepttl-expired-deadline: HSETEX KEEPTTL over a logically expired field keeps
  /// the past deadline, so the value it reports as set (reply 1) is never readable.
  /// Specification: the expired field is absent, the write creates it without a TTL.
  bool hsetex_keepttl_keeps_expired_deadline = false;
  /// redis-hexpire-revives-expired-field: HEXPIRE* sees a logically expired field with its past
  /// deadline (NX/XX/GT/LT compare with it) and a new deadline revives its old value (reply 1).
  /// Specification: -2, as HTTL and HPERSIST answer for the same field, nothing changes.
  bool hexpire_sees_expired = false;
  /// valkey-fields-keyword-scan-includes-key: HSETEX and HGETEX look for the FIELDS keyword from
  /// argv[1], the key, on. Specification: from argv[2] (the key is never a keyword).
  bool fields_keyword_scan_includes_key = false;
  /// valkey-fields-token-unchecked: HTTL*, HPERSIST and HGETDEL accept any token where FIELDS
  /// belongs. Specification: a syntax error (valkey-io/valkey#4045).
  bool fields_token_unchecked = false;
  /// redis-hmget-deletes-hash-silently: HMGET whose first lazily expired field is the hash's last
  /// stored field deletes the key without `hexpired` and `del`. Specification: the lazy deletion
  /// is notified, as HGET does.
  bool hmget_deletes_hash_silently = false;

  /// True when any switch is on.
  bool any() const {
    return copy_skips_expired_fields || hsetex_keepttl_keeps_expired_deadline || hexpire_sees_expired ||
           fields_keyword_scan_includes_key || fields_token_unchecked || hmget_deletes_hash_silently;
  }
  /// Every switch on in either.
  Defects operator|(const Defects& o) const {
    Defects d;
    d.copy_skips_expired_fields = copy_skips_expired_fields || o.copy_skips_expired_fields;
    d.hsetex_keepttl_keeps_expired_deadline =
        hsetex_keepttl_keeps_expired_deadline || o.hsetex_keepttl_keeps_expired_deadline;
    d.hexpire_sees_expired = hexpire_sees_expired || o.hexpire_sees_expired;
    d.fields_keyword_scan_includes_key = fields_keyword_scan_includes_key || o.fields_keyword_scan_includes_key;
    d.fields_token_unchecked = fields_token_unchecked || o.fields_token_unchecked;
    d.hmget_deletes_hash_silently = hmget_deletes_hash_silently || o.hmget_deletes_hash_silently;
    return d;
  }
  friend bool operator==(const Defects&, const Defects&) = default;
};

/// How commands are written to replicas and the AOF (model/propagation.hpp; redis-hfe.md §11 [V],
/// which captured the replication stream; live 2026-12-05 through the AOF increment on Valkey
/// 9.1.2, Redis 8.0.6 and 8.6.3: suites/durability/propagation.cpp). Every relative time becomes
/// an absolute one in ms on both. Fact: each code base rewrites its commands into forms of its
/// own choosing (t_hash.c of each); neither documents the form, only that replicas and the AOF
/// replay to the same data.
struct Propagation {
  /// HEXPIRE* setting a future deadline: HPEXPIREAT names only the fields it set (Redis) or the
  /// command's own field list, missing fields and failed conditions included (Valkey).
  bool expire_names_set_fields_only = false;
  /// Fields deleted by a past deadline: one `HDEL key f` per field, in MULTI/EXEC when more than
  /// one (Redis), or one `HDEL key f1 f2 ...` (Valkey).
  bool hdel_per_field = false;
  /// HSETEX that sets: rewritten in place (a relative or second time becomes `PXAT <ms>` where it
  /// stood, FNX/FXX kept: Redis), or `HSETEX key [PXAT <ms>|KEEPTTL] FIELDS n ...` without
  /// FNX/FXX/NX/XX (Valkey).
  bool hsetex_in_place = false;
  /// HSETEX with a past time: HDEL of every field it names, new ones too (Redis), or of those
  /// that existed before it (Valkey; nothing if none did).
  bool hsetex_past_deletes_named = false;
  /// HSETEX KEEPTTL over a logically expired, unreclaimed field: `MULTI`, `HDEL key <those
  /// fields>`, the HSETEX, `EXEC`: the field is deleted as expired first, so that KEEPTTL keeps
  /// no past deadline (Valkey 9.1.2, live AOF 2026-12-06; valkey-io/valkey#3036). Redis deletes
  /// such fields lazily instead (Dialect::lazy_delete_on_read).
  bool keepttl_deletes_expired_first = false;
  /// HINCRBY of a field without a deadline and HSETNX that set, in a hash that stores a field
  /// with a deadline (even a logically expired one): `HSET key f <value>` (Valkey 9.1.2, live AOF
  /// 2026-12-06; as given in a hash with none), or as given always (Redis).
  bool volatile_hash_writes_as_hset = false;
  /// HGETEX with a time or PERSIST: the fields as given (Redis), or only those it changed (Valkey:
  /// the live ones for a time, the persisted ones for PERSIST). redis-hfe.md §11 says "existing
  /// fields" for Redis; live 8.0.6 and 8.6.3 name missing ones too (the live servers win).
  bool hgetex_names_as_given = false;
  /// HGETDEL that deleted: `HDEL key <fields as given>` (Redis) or itself (Valkey).
  bool hgetdel_as_hdel = false;
  /// HINCRBYFLOAT: `HSETEX key KEEPTTL FIELDS 1 f v` always (Redis), or `HSET key f v` and, on a
  /// field with a deadline, `HSETEX key PXAT <ms> FIELDS 1 f v` (Valkey, also for HINCRBY, which
  /// Redis propagates as given).
  bool hincr_keepttl = false;
  /// Fields the server reclaims past their deadline (active expiry; Redis's lazy expiry on a
  /// read): one `HDEL key f` per field, the key's last field too, in MULTI/EXEC only when one
  /// command deleted several lazily (Redis), or
  /// one `HDEL key f1 f2 ...` per expiry batch, wrapped as `MULTI`, HDEL, `UNLINK key`, `EXEC`
  /// when the key goes with it (Valkey). Live 2026-12-05 (AOF increment: Valkey 9.1.2, Redis
  /// 8.0.6 and 8.6.3); redis-hfe.md §11 names the HDEL and the UNLINK.
  bool expiry_hdel_per_field = false;
};

/// The differences between server lines, as data. Build one with for_server() or a named
/// factory. Each member says why it is a dialect fact (documented, designed, or tested upstream)
/// rather than a defect.
struct Dialect {
  std::string name;    ///< "valkey-9.1", "redis-8.0", "redis-7.4"
  std::string flavor;  ///< "valkey" or "redis"
  int major = 0, minor = 0;
  /// Fact: the two documented argument grammars (Redis and Valkey command docs).
  Grammar grammar = Grammar::valkey;

  // ---- which commands exist (redis-hfe.md §1 [V]); fact: "since" in COMMAND DOCS ----
  bool has_hsetex = true;
  bool has_hgetex = true;
  bool has_hgetdel = true;
  /// HSETEX takes key-level NX/XX (Valkey 9.1, valkey-hfe.md §3 [L]; Redis: "unknown argument").
  /// Fact: a documented Valkey 9.1 option (valkey-io/valkey#2668).
  bool hsetex_key_nx_xx = false;
  /// HEXPIRE* accepts several conditions at once, e.g. XX GT (valkey-hfe.md §5 [T]); Redis
  /// accepts exactly one (live 8.0.6: "XX GT" gives the FIELDS-missing error). Fact: each
  /// server's documented syntax, and Valkey's own tests combine XX with GT/LT.
  bool hexpire_multiple_conditions = false;
  /// The same flag twice is accepted, last value wins (valkey-hfe.md §2 [L], redis-hfe.md §4 [V]).
  /// Fact: Valkey's shared option parser (as for SET) and its tests (KEEPTTL KEEPTTL); Redis's
  /// parser rejects repeats by design.
  bool duplicate_flags_accepted = false;
  /// Largest numfields HSETEX takes before its count check; above it the dialect answers
  /// err.hsetex_numfields_invalid. Redis reads HSETEX's numfields as an int in [1, INT_MAX]
  /// (redis/redis src/t_hash.c, hsetexParseArgs): 2147483648 and 2^63-1 give "invalid number of
  /// fields" where 2147483647 gives the arity error (live 8.0.6). Valkey takes any long long and
  /// gives its numfields text for a count that does not match (live 9.1.2); the other HFE
  /// commands take any long long on both servers (live). Fact: an argument range and its text.
  long long hsetex_numfields_max = std::numeric_limits<long long>::max();
  /// HEXPIRE*, HSETEX and HGETEX take their options before or after the FIELDS block, in any
  /// order, a repeated condition once, with Redis 8.6's texts (model/cmd/keyword_args.hpp). Fact: a
  /// documented change of the grammar (redis/redis#14416 "flexible argument positions", 8.6
  /// release notes; #14883 FIELDS validation, 8.6.2), checked live on 8.6.3.
  bool keyword_order_free = false;
  /// RESTORE with a TTL that has already passed counts the key in INFO expired_keys (Redis 8.6:
  /// src/cluster.c restoreCommand "Update the stats"; live 8.6.3: 1, 8.0.6: 0). Fact: what the
  /// server counts is its design, documented in its source.
  bool restore_past_ttl_counts_expired = false;
  /// WRONGTYPE is checked before argument errors in HEXPIRE*, HTTL*, HPERSIST, HGETDEL
  /// (redis-hfe.md §4 [V]; live for HPERSIST/HGETDEL). HGETEX checks the type first on both
  /// servers only for errors after option parsing on Valkey; see setex_getex_commands.hpp. Fact:
  /// which of two errors wins is an implementation choice neither server documents.
  bool wrongtype_before_args = false;

  // ---- time ----
  /// HTTL, HEXPIRETIME (redis-hfe.md §3 [V]). Fact: Redis rounds field TTLs up on purpose
  /// (t_hash.c adds 999), Valkey rounds as its key TTL does; neither documents a rounding.
  Rounding sec_rounding = Rounding::nearest;
  /// Largest accepted absolute field expiry in ms (redis-hfe.md §4 [S][V]): 2^46-1 on Redis,
  /// LLONG_MAX on Valkey (valkey-hfe.md §5 [L]). Fact: Redis's ebuckets store 48-bit times by
  /// design (HFE_MAX_ABS_TIME_MSEC), Valkey uses the key-expire limits.
  int64_t max_field_expire_ms = std::numeric_limits<int64_t>::max();

  // ---- logically expired fields (redis-hfe.md §6, §12 rows 13-16; valkey-hfe.md §9, §10) ----
  // Facts: Redis reclaims lazily on access and actively (redis/redis#13172 "Lazy Expiration"),
  // Valkey actively only (valkey-io/valkey#2089 "Major decisions"); the counts below follow from
  // each design and are asserted by the servers' own tests.
  /// Redis deletes an expired field when a command touches it (HGET, HMGET, HEXISTS, HSTRLEN,
  /// HGETEX, HGETDEL, HDEL, HSETEX FNX/FXX, HINCRBY*); the key goes with its last field.
  bool lazy_delete_on_read = false;
  /// HDEL of an expired, unreclaimed field: Redis deletes it and counts 1 (Redis's
  /// hash-field-expire tests assert it); Valkey counts 0 and keeps it (Valkey's tests).
  int hdel_expired_reply = 0;
  /// HSET over an expired field counts as a new field: Valkey 1 (valkey-io/valkey#3060), Redis
  /// 0 (the stored field is overwritten in place). Either way the field ends up live without TTL.
  bool hset_expired_counts_new = true;
  /// Loading an RDB (a restart, DEBUG RELOAD) skips fields past their deadline, and a hash left
  /// without a field (Valkey 9.1.2: rdb_last_load_keys_loaded does not count it; valkey-hfe.md
  /// checklist 111); Redis loads them as stored and counts the key, its fields reclaimed later
  /// by active expiry or a lazy read, expired_subkeys 0 until then (redis-hfe.md checklist 90,
  /// 91). Live 2026-12-06 (Valkey 9.1.2, Redis 8.0.6, 8.6.3): model::Keyspace::after_load.
  bool load_skips_due_fields = false;

  // ---- effects: events, counters, encodings (model/effects.hpp) ----
  /// A write over a logically expired field first deletes it as expired: `hexpired` and
  /// expired_fields + 1 (valkey-hfe.md §9 [L], Valkey 9.0.2+). Fact: valkey-io/valkey#3060.
  bool overwrite_expired_notifies = false;
  /// The volatile-field index keeps a hash whose field TTLs were all removed by HPERSIST (or an
  /// overwrite) until active expiry visits it (Redis; redis-hfe.md §9 [V]); Valkey updates it at
  /// once. Fact: Redis's global ebuckets are updated lazily by design (redis/redis#13172).
  bool volatile_index_lazy = false;
  /// Every TTL command that reaches an existing listpack hash converts it, whatever it changes:
  /// HEXPIRE* (also when every field answers -2 or 0, or a past time deletes), HSETEX with a time
  /// option (also past), HGETEX with any option (also PERSIST, also on missing fields) -- Redis
  /// (listpackex; live 8.0.6, not on HSETEX KEEPTTL or a failed FNX/FXX). Valkey converts only
  /// when a future deadline is set (live 9.1.2). Fact: an internal encoding, no contract.
  bool ttl_attempt_converts = false;
  /// Key-level EXPIRE/PEXPIRE(AT) with a past time deletes the key with this event: `expired`
  /// (class x, expired_keys + 1: live 9.1.2) or `del` (class g: live 8.0.6). Fact: each server's
  /// keyspace-notification documentation.
  std::string key_past_expire_event = "del";

  // ---- observability (redis-hfe.md §7-§9, §12); facts: each server's documented names ----
  std::string info_expired_fields_stat;  ///< "expired_fields" / "expired_subkeys"
  std::string info_keyspace_volatile;    ///< "keys_with_volatile_items" / "subexpiry"
  /// "hashtable" / "listpackex". Fact: the encoding each line uses (Valkey 9.x has no compact
  /// encoding with field TTLs). That this costs memory is known issue valkey-ttl-hash-not-compact
  /// (valkey-io/valkey#2618), which the memory guard reports; a release that changes the
  /// encoding is a new dialect line here.
  std::string ttl_encoding;
  /// "hexpired" / "hdel": the event of a field given a past deadline. Fact: Valkey documents
  /// `hexpired` (topics/notifications), Redis's pubsub tests assert `hdel` for HPEXPIRE 0.
  std::string past_ttl_event;
  /// Class of the `hexpired` active expiry sends: 'x' on Valkey, 'h' on Redis (from a command it
  /// is 'h' on both). Fact: each server's keyspace-notification documentation.
  char hexpired_class = 'x';

  /// Error texts. Fact: texts differ by design between the two code bases (live 9.1.2 / 8.0.6).
  ErrorTexts err;

  /// What replicas and the AOF are sent (see Propagation).
  Propagation propagation;

  /// Server defects to reproduce (see Defects). Off in every factory: the specification.
  Defects defects;

  /// Text helpers.
  std::string arity_error(std::string_view cmd) const { return ErrorTexts::format(err.arity, cmd); }

  /// HTTL / HEXPIRETIME seconds from a millisecond quantity (>= 0).
  int64_t to_seconds(int64_t ms) const {
    // Valkey on deadlines near LLONG_MAX: see field_ttl_commands.hpp (ms + 500 would overflow).
    if (sec_rounding == Rounding::nearest)
      return ms > std::numeric_limits<int64_t>::max() - 500 ? ms / 1000 + (ms % 1000 >= 500)
                                                            : (ms + 500) / 1000;
    return ms > std::numeric_limits<int64_t>::max() - 999 ? ms / 1000 + (ms % 1000 != 0)
                                                          : (ms + 999) / 1000;
  }

  static Dialect valkey_9_1() {
    Dialect d;
    d.name = "valkey-9.1";
    d.flavor = "valkey";
    d.major = 9;
    d.minor = 1;
    d.grammar = Grammar::valkey;
    d.hsetex_key_nx_xx = true;
    d.hexpire_multiple_conditions = true;
    d.duplicate_flags_accepted = true;
    d.wrongtype_before_args = false;
    d.sec_rounding = Rounding::nearest;
    d.max_field_expire_ms = std::numeric_limits<int64_t>::max();
    d.lazy_delete_on_read = false;
    d.load_skips_due_fields = true;
    d.propagation.keepttl_deletes_expired_first = true;
    d.propagation.volatile_hash_writes_as_hset = true;
    d.hdel_expired_reply = 0;
    d.hset_expired_counts_new = true;
    d.overwrite_expired_notifies = true;
    d.volatile_index_lazy = false;
    d.ttl_attempt_converts = false;
    d.key_past_expire_event = "expired";
    d.info_expired_fields_stat = "expired_fields";
    d.info_keyspace_volatile = "keys_with_volatile_items";
    d.ttl_encoding = "hashtable";
    d.past_ttl_event = "hexpired";
    d.hexpired_class = 'x';
    const std::string nf = "ERR numfields should be greater than 0 and match the provided number of fields";
    d.err.negative_time = d.err.expire_time;
    d.err.numfields = nf;
    d.err.hexpire_numfields_range = nf;
    d.err.numfields_range = nf;
    d.err.numfields_mismatch = nf;
    d.err.httl_numfields = d.err.syntax;
    d.err.hsetex_numfields_invalid = nf;
    d.err.hsetex_fnx_fxx = d.err.syntax;
    d.err.hsetex_one_expiry = d.err.syntax;
    d.err.unknown_argument = d.err.syntax;
    return d;
  }

  /// Valkey 9.0: as 9.1 without HGETDEL and HSETEX NX/XX (valkey-hfe.md §1, §3). Not verified
  /// live (no 9.0 server provisioned). 9.0 does not check the FIELDS token of HTTL* and HPERSIST:
  /// known issue valkey-fields-token-unchecked, not a fact of this dialect.
  static Dialect valkey_9_0() {
    Dialect d = valkey_9_1();
    d.name = "valkey-9.0";
    d.minor = 0;
    d.has_hgetdel = false;
    d.hsetex_key_nx_xx = false;
    return d;
  }

  static Dialect redis_8_0() {
    Dialect d;
    d.name = "redis-8.0";
    d.flavor = "redis";
    d.major = 8;
    d.minor = 0;
    d.grammar = Grammar::redis;
    d.hsetex_key_nx_xx = false;
    d.hexpire_multiple_conditions = false;
    d.duplicate_flags_accepted = false;
    d.wrongtype_before_args = true;
    d.sec_rounding = Rounding::ceiling;
    d.max_field_expire_ms = (int64_t{1} << 46) - 1;
    d.lazy_delete_on_read = true;
    d.load_skips_due_fields = false;
    d.hdel_expired_reply = 1;
    d.hset_expired_counts_new = false;
    d.overwrite_expired_notifies = false;
    d.volatile_index_lazy = true;
    d.ttl_attempt_converts = true;
    d.key_past_expire_event = "del";
    d.info_expired_fields_stat = "expired_subkeys";
    d.info_keyspace_volatile = "subexpiry";
    d.ttl_encoding = "listpackex";
    d.past_ttl_event = "hdel";
    d.hexpired_class = 'h';
    d.propagation = {.expire_names_set_fields_only = true,
                     .hdel_per_field = true,
                     .hsetex_in_place = true,
                     .hsetex_past_deletes_named = true,
                     .hgetex_names_as_given = true,
                     .hgetdel_as_hdel = true,
                     .hincr_keepttl = true,
                     .expiry_hdel_per_field = true};
    d.err.negative_time = "ERR invalid expire time, must be >= 0";
    d.err.numfields = "ERR Number of fields must be a positive integer";
    d.err.hexpire_numfields_range = "ERR Parameter `numFields` should be greater than 0";
    d.err.numfields_range = "ERR Number of fields must be a positive integer";
    d.err.numfields_mismatch = "ERR The `numfields` parameter must match the number of arguments";
    d.err.httl_numfields = d.err.numfields_range;
    d.hsetex_numfields_max = 2147483647;  // INT_MAX: hsetexParseArgs (live 8.0.6)
    return d;
  }

  /// Redis 8.6: as 8.0, with the keyword-order grammar of HEXPIRE*, HSETEX and HGETEX and its
  /// error texts, and RESTORE of an already expired TTL counted as an expired key (both above;
  /// docs/semantics/redis-8.6.md: the release report 8.0.6 -> 8.6.3 and the live checks).
  static Dialect redis_8_6() {
    Dialect d = redis_8_0();
    d.name = "redis-8.6";
    d.minor = 6;
    d.keyword_order_free = true;
    d.restore_past_ttl_counts_expired = true;
    return d;
  }

  /// Redis 7.4: the nine core commands only (redis-hfe.md §1 [V]); grammar and semantics as
  /// 8.0 as far as the reference tells; Redis 7.4 propagated HINCRBYFLOAT as a plain HSET (§11), which
  /// Propagation cannot say: model/propagation.hpp gives 8.0's form.
  static Dialect redis_7_4() {
    Dialect d = redis_8_0();
    d.name = "redis-7.4";
    d.major = 7;
    d.minor = 4;
    d.has_hsetex = d.has_hgetex = d.has_hgetdel = false;
    return d;
  }

  /// The dialect for a server identity, or nullopt for a server without hash field TTLs
  /// (Valkey < 9.0, Redis < 7.4). `flavor` is "valkey" or "redis" (case-sensitive). Newer
  /// versions than the known ones map to the newest known dialect of their flavor.
  static std::optional<Dialect> for_server(std::string_view flavor, int major, int minor) {
    if (flavor == "valkey") {
      if (major < 9) return std::nullopt;
      if (major == 9 && minor == 0) return valkey_9_0();
      return valkey_9_1();
    }
    if (flavor == "redis") {
      if (major < 7 || (major == 7 && minor < 4)) return std::nullopt;
      if (major == 7) return redis_7_4();
      if (major == 8 && minor < 6) return redis_8_0();  // 8.2 and 8.4: not checked; 8.0 stands in
      return redis_8_6();
    }
    return std::nullopt;
  }
};

}  // namespace expirykit::model
