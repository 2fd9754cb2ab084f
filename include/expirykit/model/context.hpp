// expirykit/model/context.hpp: what every model command function receives, plus the argument
// parsing primitives the servers use (strict integers, long doubles, case-insensitive tokens).
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/model/dialect.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::model {

using resp::Argv;
using resp::Reply;

/// Thrown by apply() for a command (or an option of a command) the model does not cover. The
/// model never guesses: a caller comparing with a server must skip the command or stop.
class Unmodelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One command application: state, dialect, arguments, and the time (absolute Unix ms) at which
/// the server is assumed to execute it.
struct Context {
  Keyspace& ks;
  const Dialect& d;
  const Argv& argv;
  int64_t now;

  std::string cmd_lower() const {
    std::string s = argv.empty() ? std::string() : argv[0];
    for (auto& c : s) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    return s;
  }
  Reply error(const std::string& tmpl, std::string_view arg = {}) const {
    return Reply::error(ErrorTexts::format(tmpl, cmd_lower(), arg));
  }
  Reply wrongtype() const { return Reply::error(d.err.wrongtype); }
  Reply arity() const { return Reply::error(d.arity_error(cmd_lower())); }
};

/// ASCII case-insensitive equality (server keywords: strcasecmp).
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

/// The servers' strict integer syntax (string2ll): optional '-', no '+', no spaces, no leading
/// zeros (except "0" itself; "-0" is rejected), within int64.
inline bool parse_ll(std::string_view s, long long& out) {
  if (s.empty() || s.size() > 20) return false;
  if (s == "0") {
    out = 0;
    return true;
  }
  std::size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  unsigned long long v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    unsigned long long d = static_cast<unsigned long long>(s[i] - '0');
    if (v > (std::numeric_limits<unsigned long long>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  if (neg) {
    if (v > static_cast<unsigned long long>(std::numeric_limits<long long>::max()) + 1) return false;
    out = v == static_cast<unsigned long long>(std::numeric_limits<long long>::max()) + 1
              ? std::numeric_limits<long long>::min()
              : -static_cast<long long>(v);
  } else {
    if (v > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) return false;
    out = static_cast<long long>(v);
  }
  return true;
}

enum class FloatParse { ok, invalid };

/// The servers' long double syntax (getLongDoubleFromObject: strtold over the whole string, no
/// leading space, NaN and out-of-range values rejected; infinity is accepted here and rejected
/// by the caller). Live 9.1.2 / 8.0.6: "inf" gives "value is NaN or Infinity", " 1" gives "not a
/// valid float", "0x10" is 16.
inline FloatParse parse_ld(std::string_view s, long double& out) {
  if (s.empty() || s.size() > 5000) return FloatParse::invalid;
  if (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')) return FloatParse::invalid;
  std::string buf(s);
  if (buf.find('\0') != std::string::npos) return FloatParse::invalid;
  errno = 0;
  char* end = nullptr;
  long double v = std::strtold(buf.c_str(), &end);
  if (end == buf.c_str() || *end != '\0') return FloatParse::invalid;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return FloatParse::invalid;
  if (std::isnan(v)) return FloatParse::invalid;
  out = v;
  return FloatParse::ok;
}

/// ld2string(LD_STR_HUMAN): "%.17Lf", trailing zeros and a trailing '.' removed, "-0" -> "0".
inline std::string format_ld(long double v) {
  std::string buf(6000, '\0');
  int n = std::snprintf(buf.data(), buf.size(), "%.17Lf", v);
  if (n < 0) n = 0;
  buf.resize(static_cast<std::size_t>(n));
  if (buf.find('.') != std::string::npos) {
    while (!buf.empty() && buf.back() == '0') buf.pop_back();
    if (!buf.empty() && buf.back() == '.') buf.pop_back();
  }
  if (buf == "-0") buf = "0";
  return buf;
}

/// Shared helpers on a looked-up key.
/// The hash at argv key, nullptr when missing; sets `wrong` when the key holds a string.
inline Hash* lookup_hash(Context& c, const std::string& key, bool& wrong) {
  wrong = false;
  Entry* e = c.ks.find(key, c.now);
  if (!e) return nullptr;
  if (!e->is_hash()) {
    wrong = true;
    return nullptr;
  }
  return &e->hash();
}

/// Erases `key` if a command that removed fields from its hash (`before`: the field count
/// before the command) left it with none. A hash that was already empty stays: servers delete a
/// key when its last field goes, so an empty hash made by Valkey 9.1.2's COPY of an all-expired
/// hash (known issue valkey-copy-skips-expired-fields, Defects::copy_skips_expired_fields)
/// survives HEXPIRE/HDEL/... that remove nothing (live 9.1.2, found by the durability property).
inline void drop_if_emptied(Context& c, const std::string& key, const Hash* h, std::size_t before) {
  if (h && h->fields.size() < before) c.ks.drop_if_empty(key);
}

/// Records a keyspace notification for this command (effects.hpp; class 'h' unless given).
inline void notify(Context& c, const char* name, const std::string& key, char cls = 'h') {
  c.ks.notify(name, key, cls);
}

/// After a write to the hash at `key`: the encoding the server would now report, and whether
/// the hash may still sit in the volatile-field index. `ttl_set`: the command gave at least one
/// field a deadline, or (Redis) tried to in a way that converts (see the callers). Encoding
/// rules: effects.hpp; a hash past hash-max-listpack-entries fields, or with a field name or
/// value longer than hash-max-listpack-value bytes, is a hashtable (both servers, live 9.1.2 /
/// 8.0.6). The index: Valkey keeps keys_with_volatile_items exact; Redis's subexpiry is lazy
/// (redis-hfe.md §9): a hash stays registered after HPERSIST, after HSET over its volatile
/// fields, after lazy deletion, and after HDEL or HGETDEL on a hash that had no field with a
/// deadline left before them (found by the property on 8.0.6), until active expiry visits it;
/// HDEL and HGETDEL that remove its last such field take it out at once (after_field_delete).
/// The model keeps the bounds: hashes with volatile fields (at least) and those plus every hash
/// that had some (at most, Hash::maybe_indexed).
inline void after_hash_write(Context& c, const std::string& key, bool ttl_set) {
  Entry* e = c.ks.raw(key);
  if (!e || !e->is_hash()) return;
  Hash& h = e->hash();
  if (ttl_set && h.encoding == Encoding::listpack)
    h.encoding = c.d.ttl_encoding == "listpackex" ? Encoding::listpackex : Encoding::hashtable;
  if (h.encoding != Encoding::hashtable) {
    const ListpackLimits& lim = c.ks.limits();
    bool big = h.fields.size() > lim.entries;
    for (const auto& [name, f] : h.fields) big = big || name.size() > lim.value || f.value.size() > lim.value;
    if (big) h.encoding = Encoding::hashtable;
  }
  if (c.d.volatile_index_lazy && h.has_volatile()) h.maybe_indexed = true;
}

/// After HDEL or HGETDEL removed fields of `h`, which before the command held at least one field
/// with a deadline (`had_ttl`; logically expired, unreclaimed ones count): when none is left,
/// Redis takes the hash out of its volatile-field index at once, so INFO keyspace subexpiry
/// drops by one ("is it last HFE" in hdelCommand and hgetdelCommand, src/t_hash.c; live on
/// 8.0.6, 2026-12-05: 1 -> 0 for a listpackex and a hashtable hash). The hash is then no longer
/// maybe_indexed. Valkey's index is exact anyway (volatile_indexed()).
inline void after_field_delete(Hash& h, bool had_ttl) {
  if (had_ttl && !h.has_volatile()) h.maybe_indexed = false;
}

/// The encoding a hash gets when a server loads it (DEBUG RELOAD, a restart, RESTORE): one
/// that is too big for a listpack is a hashtable; otherwise Valkey makes a hash with volatile
/// fields a hashtable and one without a listpack (live 9.1.2: RDB type 22 loads as hashtable,
/// type 4 as listpack), and Redis keeps listpackex for a hash that had it or has volatile fields,
/// listpack otherwise (live 8.0.6: type 25 restores as listpackex even without TTLs).
inline Encoding loaded_encoding(const Dialect& d, const Hash& h, const ListpackLimits& lim) {
  bool big = h.fields.size() > lim.entries;
  for (const auto& [name, f] : h.fields) big = big || name.size() > lim.value || f.value.size() > lim.value;
  if (big) return Encoding::hashtable;
  if (d.ttl_encoding == "listpackex")
    return (h.encoding == Encoding::listpackex || h.has_volatile()) ? Encoding::listpackex : Encoding::listpack;
  return h.has_volatile() ? Encoding::hashtable : Encoding::listpack;
}

/// Redis lazy expiry on access (dialect.lazy_delete_on_read): removes `field` from the hash at
/// `key` if it is logically expired (`hexpired`, once per key and command however many fields
/// go; expired_fields + 1 per field), then the key if the hash became empty (`del`). Returns
/// true if the hash (and key) disappeared. `keep_key`: the key stays even if emptied, for the
/// caller to delete after its own events (Redis's HGETDEL, HGETEX and HSETEX FNX/FXX look fields
/// up with HFE_LAZY_AVOID_HASH_DEL and send `hexpired`, their own event, then `del`: redis/redis
/// src/t_hash.c; live 8.0.6); the function then returns false. A no-op on Valkey
/// (valkey-hfe.md §1: no lazy deletion). Live 8.0.6: HMGET of two expired fields sends one
/// `hexpired`.
inline bool lazy_expire_field(Context& c, const std::string& key, const std::string& field, bool keep_key = false) {
  if (!c.d.lazy_delete_on_read) return false;
  Entry* e = c.ks.find(key, c.now);
  if (!e || !e->is_hash()) return false;
  auto& fs = e->hash().fields;
  auto it = fs.find(field);
  if (it == fs.end() || !it->second.expired(c.now)) return false;
  fs.erase(it);
  ++c.ks.counters().expired_fields;
  const auto& pending = c.ks.pending_events();
  if (pending.empty() || pending.back() != Event{"hexpired", key, 'h'}) notify(c, "hexpired", key);
  after_hash_write(c, key, false);
  return !keep_key && c.ks.drop_if_empty(key);
}

/// Before a write over `field` of `h`: if the field is logically expired, the server first
/// deletes it as expired (Valkey 9.0.2+, valkey-hfe.md §9: an extra `hexpired` before the
/// command's own event, expired_fields + 1 per field; dialect.overwrite_expired_notifies). One
/// `hexpired` per command and key however many fields it overwrites (live 9.1.2: HSET and
/// HSETEX KEEPTTL over two expired fields send `hexpired` once, then `hset`). On Redis the field
/// is deleted lazily first (lazy_expire_field). Returns true if the field was expired.
inline bool overwrite_expired(Context& c, const std::string& key, Hash& h, const std::string& field) {
  auto it = h.fields.find(field);
  if (it == h.fields.end() || !it->second.expired(c.now)) return false;
  if (c.d.overwrite_expired_notifies) {
    ++c.ks.counters().expired_fields;
    const auto& pending = c.ks.pending_events();
    if (pending.empty() || pending.back() != Event{"hexpired", key, 'h'}) notify(c, "hexpired", key);
  }
  return true;
}

}  // namespace expirykit::model
