// expirykit/model/dialect.hpp: what differs between servers with hash field TTLs, as data.
//
// A Dialect is picked from the server's identity (Dialect::for_server("valkey", 9, 1)) and read by
// the command functions in model/. Every member cites where the behaviour comes from:
//   valkey-hfe.md §N / redis-hfe.md §N (the reference files in /work/shared/reference), with the
//   tag used there ([L]/[V] checked live, [S] source, [T] upstream tests), or
//   "live 9.1.2"/"live 8.0.6" for facts first established while writing the model (recorded in
//   notes/model-findings.md).
// checks/dialect/ runs one example per fact against the live servers.
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
/// offending argument as typed.
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

  /// Fills `{cmd}` (lowercased) and `{arg}` in a template.
  static std::string format(std::string_view tmpl, std::string_view cmd, std::string_view arg = {}) {
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

/// The differences between servers, as data. Build one with for_server() or a named factory.
struct Dialect {
  std::string name;    ///< "valkey-9.1", "redis-8.0", "redis-7.4"
  std::string flavor;  ///< "valkey" or "redis"
  int major = 0, minor = 0;
  Grammar grammar = Grammar::valkey;

  // ---- which commands exist (redis-hfe.md §1 [V]) ----
  bool has_hsetex = true;
  bool has_hgetex = true;
  bool has_hgetdel = true;
  /// HSETEX takes key-level NX/XX (Valkey 9.1, valkey-hfe.md §3 [L]; Redis: "unknown argument").
  bool hsetex_key_nx_xx = false;
  /// HTTL family / HPERSIST / HGETDEL check that argv[2] is FIELDS (valkey-hfe.md §2: 9.1.2 yes,
  /// 9.1.0 no; Redis yes).
  bool fields_token_checked = true;
  /// HEXPIRE* accepts several conditions at once, e.g. XX GT (valkey-hfe.md §5 [T]); Redis
  /// accepts exactly one (live 8.0.6: "XX GT" gives the FIELDS-missing error).
  bool hexpire_multiple_conditions = false;
  /// The same flag twice is accepted, last value wins (valkey-hfe.md §2 [L], redis-hfe.md §4 [V]).
  bool duplicate_flags_accepted = false;
  /// Where HSETEX / HGETEX start looking for the FIELDS keyword (Valkey grammar only). Valkey
  /// 9.1.2 starts at argv[1], the KEY: on a key named "fields" (any case) `HSETEX fields
  /// FIELDS 1 a 1` fails ("not an integer": numfields is read from argv[2]) and
  /// `HSETEX fields 2 a 1 b 2` sets two fields (live 9.1.2, notes/model-findings.md).
  std::size_t fields_keyword_scan_from = 2;
  /// WRONGTYPE is checked before argument errors in HEXPIRE*, HTTL*, HPERSIST, HGETDEL
  /// (redis-hfe.md §4 [V]; live for HPERSIST/HGETDEL). HGETEX checks the type first on both
  /// servers only for errors after option parsing on Valkey; see field_ttl_commands.hpp.
  bool wrongtype_before_args = false;

  // ---- time ----
  Rounding sec_rounding = Rounding::nearest;  ///< HTTL, HEXPIRETIME (redis-hfe.md §3 [V])
  /// Largest accepted absolute field expiry in ms (redis-hfe.md §4 [S][V]): 2^46-1 on Redis,
  /// LLONG_MAX on Valkey (valkey-hfe.md §5 [L]).
  int64_t max_field_expire_ms = std::numeric_limits<int64_t>::max();

  // ---- logically expired fields (redis-hfe.md §6, §12 rows 13-16; valkey-hfe.md §9, §10) ----
  /// Redis deletes an expired field when a command touches it (HGET, HMGET, HEXISTS, HSTRLEN,
  /// HGETEX, HGETDEL, HDEL, HSETEX FNX/FXX, HINCRBY*); the key goes with its last field.
  bool lazy_delete_on_read = false;
  /// HDEL of an expired, unreclaimed field: Redis deletes it and counts 1; Valkey counts 0 and
  /// keeps it.
  int hdel_expired_reply = 0;
  /// HSET over an expired field counts as a new field: Valkey 1, Redis 0.
  bool hset_expired_counts_new = true;
  /// HEXPIRE* on an expired field: Redis treats it as present with its past deadline (GT/LT
  /// compare with it; success revives it, reply 1); Valkey replies -2.
  bool hexpire_sees_expired = false;
  /// HSETEX KEEPTTL over an expired field: Redis keeps the past deadline, so the field stays
  /// expired (live 8.0.6); Valkey makes it persistent (valkey-hfe.md §3 [L]).
  bool hsetex_keepttl_keeps_expired_deadline = false;
  /// COPY leaves out logically expired fields (live 9.1.2: COPY of an all-expired hash creates
  /// an EMPTY hash that EXISTS; HLEN 0); Redis copies them (live 8.0.6).
  bool copy_skips_expired_fields = false;

  // ---- effects: events, counters, encodings (model/effects.hpp) ----
  /// A write over a logically expired field first deletes it as expired: `hexpired` and
  /// expired_fields + 1 (valkey-hfe.md §9 [L], Valkey 9.0.2+).
  bool overwrite_expired_notifies = false;
  /// The volatile-field index keeps a hash whose field TTLs were all removed by HPERSIST (or an
  /// overwrite) until active expiry visits it (Redis; redis-hfe.md §9 [V]); Valkey updates it at
  /// once.
  bool volatile_index_lazy = false;
  /// Every TTL command that reaches an existing listpack hash converts it, whatever it changes:
  /// HEXPIRE* (also when every field answers -2 or 0, or a past time deletes), HSETEX with a time
  /// option (also past), HGETEX with any option (also PERSIST, also on missing fields) -- Redis
  /// (listpackex; live 8.0.6, not on HSETEX KEEPTTL or a failed FNX/FXX). Valkey converts only
  /// when a future deadline is set (live 9.1.2).
  bool ttl_attempt_converts = false;
  /// Key-level EXPIRE/PEXPIRE(AT) with a past time deletes the key with this event: `expired`
  /// (class x, expired_keys + 1: live 9.1.2) or `del` (class g: live 8.0.6).
  std::string key_past_expire_event = "del";

  // ---- observability (redis-hfe.md §7-§9, §12) ----
  std::string info_expired_fields_stat;  ///< "expired_fields" / "expired_subkeys"
  std::string info_keyspace_volatile;    ///< "keys_with_volatile_items" / "subexpiry"
  std::string ttl_encoding;              ///< "hashtable" / "listpackex"
  std::string past_ttl_event;            ///< "hexpired" / "hdel"
  char hexpired_class = 'x';             ///< active-expiry hexpired event class

  ErrorTexts err;

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
    d.hdel_expired_reply = 0;
    d.hset_expired_counts_new = true;
    d.hexpire_sees_expired = false;
    d.hsetex_keepttl_keeps_expired_deadline = false;
    d.copy_skips_expired_fields = true;
    d.fields_keyword_scan_from = 1;
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

  /// Valkey 9.0: as 9.1 without HGETDEL and HSETEX NX/XX, and without the FIELDS-token check
  /// (valkey-hfe.md §2, §18 #4045). Not verified live (no 9.0 server provisioned).
  static Dialect valkey_9_0() {
    Dialect d = valkey_9_1();
    d.name = "valkey-9.0";
    d.minor = 0;
    d.has_hgetdel = false;
    d.hsetex_key_nx_xx = false;
    d.fields_token_checked = false;
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
    d.hdel_expired_reply = 1;
    d.hset_expired_counts_new = false;
    d.hexpire_sees_expired = true;
    d.hsetex_keepttl_keeps_expired_deadline = true;
    d.copy_skips_expired_fields = false;
    d.overwrite_expired_notifies = false;
    d.volatile_index_lazy = true;
    d.ttl_attempt_converts = true;
    d.key_past_expire_event = "del";
    d.info_expired_fields_stat = "expired_subkeys";
    d.info_keyspace_volatile = "subexpiry";
    d.ttl_encoding = "listpackex";
    d.past_ttl_event = "hdel";
    d.hexpired_class = 'h';
    d.err.negative_time = "ERR invalid expire time, must be >= 0";
    d.err.numfields = "ERR Number of fields must be a positive integer";
    d.err.hexpire_numfields_range = "ERR Parameter `numFields` should be greater than 0";
    d.err.numfields_range = "ERR Number of fields must be a positive integer";
    d.err.numfields_mismatch = "ERR The `numfields` parameter must match the number of arguments";
    d.err.httl_numfields = d.err.numfields_range;
    return d;
  }

  /// Redis 7.4: the nine core commands only (redis-hfe.md §1 [V]); grammar and semantics as
  /// 8.0 as far as the reference tells (HINCRBYFLOAT propagation differs, §11, not modelled).
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
      return redis_8_0();
    }
    return std::nullopt;
  }
};

}  // namespace expirykit::model
