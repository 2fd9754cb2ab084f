// expirykit/model/cmd/dump_commands.hpp: DUMP and RESTORE of volatile hashes.
//
// A DUMP payload is the server's serialization; the model does not compute it. Instead the
// model remembers which entry a payload stands for: state::Twin calls Keyspace::remember_dump()
// with the server's payload and the model's entry at the time of the DUMP, and RESTORE looks the
// payload up (an unknown payload is Unmodelled). The model's DUMP reply is a placeholder: only
// "a payload" vs nil is compared (canonical.hpp).
//
// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] (valkey.io/commands/restore,
// redis.io/docs/latest/commands/restore): BUSYKEY when the key exists without REPLACE; ttl 0 no
// key TTL, else relative ms or, with ABSTTL, absolute Unix ms; an ABSTTL already past restores
// nothing and replies OK. Field deadlines are absolute and restored as dumped, logically expired
// ones included (valkey-hfe.md §11 [L][T]). The restored hash's encoding is the one a load gives
// (effects.hpp loaded_encoding). Event `restore` (class g; live 9.1.2 / 8.0.6: none for the
// replaced key).
#pragma once

#include <string>

#include <expirykit/model/context.hpp>

namespace expirykit::model::cmd {

/// DUMP key -> a payload (placeholder, see the file comment), nil for a missing key.
inline Reply dump(Context& c) {
  if (c.argv.size() != 2) return c.arity();
  return c.ks.find(c.argv[1], c.now) ? Reply::string("<payload>") : Reply::nil();
}

/// RESTORE: see the file comment. Errors: arity, "ERR value is not an integer or out of range"
/// (ttl), "ERR Invalid TTL value, must be >= 0", "ERR syntax error", "BUSYKEY Target key name
/// already exists.", for an empty payload "ERR DUMP payload version or checksum are wrong", and
/// for the payload of an empty hash "ERR Bad data format".
inline Reply restore(Context& c) {
  const Argv& a = c.argv;
  if (a.size() < 4) return c.arity();
  bool replace = false, absttl = false;
  for (std::size_t i = 4; i < a.size(); ++i) {
    if (iequals(a[i], "REPLACE")) {
      replace = true;
    } else if (iequals(a[i], "ABSTTL")) {
      absttl = true;
    } else if (iequals(a[i], "IDLETIME") && i + 1 < a.size()) {
      long long idle = 0;
      if (!parse_ll(a[++i], idle)) return Reply::error(c.d.err.not_integer);
      if (idle < 0) return Reply::error("ERR Invalid IDLETIME value, must be >= 0");
    } else {
      throw Unmodelled("RESTORE option " + a[i]);
    }
  }
  long long ttl = 0;
  if (!parse_ll(a[2], ttl)) return Reply::error(c.d.err.not_integer);
  if (ttl < 0) return Reply::error("ERR Invalid TTL value, must be >= 0");
  if (!replace && c.ks.find(a[1], c.now)) return Reply::error("BUSYKEY Target key name already exists.");
  if (a[3].empty()) return Reply::error("ERR DUMP payload version or checksum are wrong");
  const Entry* dumped = c.ks.dumped(a[3]);
  if (!dumped) throw Unmodelled("RESTORE of a payload the model did not see dumped");
  // An empty hash (only known issue valkey-copy-skips-expired-fields makes one) dumps to a
  // payload the loader refuses, before any TTL is looked at (live 9.1.2).
  if (dumped->is_hash() && dumped->hash().fields.empty()) return Reply::error("ERR Bad data format");
  Entry e = *dumped;
  e.expire_ms.reset();
  if (ttl > 0) {
    const int64_t when = absttl ? ttl : c.now + ttl;
    if (when <= c.now) {  // already expired: nothing is restored
      if (replace && c.ks.find(a[1], c.now)) {
        c.ks.erase(a[1]);
        notify(c, "del", a[1], 'g');
      }
      if (c.d.restore_past_ttl_counts_expired) ++c.ks.counters().expired_keys;
      return Reply::ok();
    }
    e.expire_ms = when;
  }
  if (e.is_hash()) e.hash().encoding = loaded_encoding(c.d, e.hash(), c.ks.limits());
  c.ks.erase(a[1]);
  c.ks.put(a[1], std::move(e));
  after_hash_write(c, a[1], false);
  notify(c, "restore", a[1], 'g');
  return Reply::ok();
}

}  // namespace expirykit::model::cmd
