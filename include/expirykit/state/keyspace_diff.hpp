// expirykit/state/keyspace_diff.hpp: the whole keyspace of a live server against the model's, as
// state::Twin::compare_state() reports it (state/twin.hpp), and the listpack limits the model's
// encoding predictions need.
//
//   auto diffs = state::keyspace_diff(side, ks, server::time_ms(side("TIME")), {});
//
// Every key either side holds is compared: TYPE, the key's PTTL presence, a string's GET, a
// hash's HLEN (stored fields, expired included), HGETALL (live fields, as a set: model/canonical.hpp),
// each field's HPEXPIRETIME (-2 for a field past its deadline, within the tolerance) and OBJECT
// ENCODING (listpack or hashtable, when the limits were read). Only read-only commands that
// never delete lazily are sent, over the connection given (the twin's read-back connection).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <expirykit/model/canonical.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/state/replies.hpp>

namespace expirykit::state {

/// A reply on one line: arrays as [a, b, ...].
inline std::string oneline(const resp::Reply& r) { return r.oneline(); }

struct KeyspaceDiffOptions {
  int64_t time_tolerance_ms = 0;  ///< allowed difference (ms) of HPEXPIRETIME read back
  bool check_encoding = true;     ///< compare OBJECT ENCODING with the model's prediction
  const std::set<std::string>* hlen_unknown = nullptr;  ///< keys whose HLEN is not compared
  std::function<bool(const std::string&)> owns;         ///< only these keys (empty: all)
};

/// The differences between the server behind `side` and the model `ks` at server time `now_ms`
/// (Unix ms): one line per difference ("h: HLEN server 3, model 2"); empty means equal.
inline std::vector<std::string> keyspace_diff(resp::Client& side, const model::Keyspace& ks, int64_t now_ms,
                                              const KeyspaceDiffOptions& o, const resp::Reply* keys_read = nullptr);

/// keyspace_diff() at the server's time now: TIME and KEYS * read in one round trip (the twin's
/// compare_state: two round trips in all). Throws what resp::Client throws.
inline std::vector<std::string> keyspace_diff(resp::Client& side, const model::Keyspace& ks, const KeyspaceDiffOptions& o) {
  const std::vector<resp::Reply> r = side.pipeline({{"TIME"}, {"KEYS", "*"}});
  return keyspace_diff(side, ks, server::time_ms(r[0]), o, &r[1]);
}

/// (`keys_read`: the server's reply to KEYS *, when read already.)
inline std::vector<std::string> keyspace_diff(resp::Client& side, const model::Keyspace& ks, int64_t now_ms,
                                              const KeyspaceDiffOptions& o, const resp::Reply* keys_read) {
  std::vector<std::string> diffs;
  const int64_t now = now_ms;
  std::set<std::string> keys;
  for (const auto& k : ks.key_names())
    if (ks.peek(k, now) && (!o.owns || o.owns(k))) keys.insert(k);
  const resp::Reply all = keys_read ? *keys_read : side("KEYS", "*");
  if (all.is_array())
    for (const auto& k : all.elements())
      if (!o.owns || o.owns(k.str())) keys.insert(k.str());
  // Every read of every key in one pipeline, planned from the model's side of each key (a read
  // the server's type makes pointless is sent anyway and its reply not looked at): two round
  // trips in all (KEYS, then this), whatever the number of keys.
  struct Plan {
    const model::Entry* e = nullptr;
    std::size_t type = 0, pttl = 0, get = 0, hlen = 0, getall = 0, enc = 0, times = 0;
    Argv times_argv;
    std::vector<Reply> pairs;
    std::vector<long long> expected;
  };
  std::vector<Argv> reads;
  std::vector<Plan> plans;
  auto read = [&reads](Argv a) {
    reads.push_back(std::move(a));
    return reads.size() - 1;
  };
  for (const auto& key : keys) {
    Plan p;
    p.e = ks.peek(key, now);
    p.type = read({"TYPE", key});
    if (p.e) {
      p.pttl = read({"PTTL", key});
      if (p.e->is_string()) {
        p.get = read({"GET", key});
      } else {
        const model::Hash& h = p.e->hash();
        p.hlen = read({"HLEN", key});
        p.times_argv = {"HPEXPIRETIME", key, "FIELDS", std::to_string(h.fields.size())};
        for (const auto& [f, fld] : h.fields) {
          if (!fld.expired(now)) {
            p.pairs.push_back(Reply::string(f));
            p.pairs.push_back(Reply::string(fld.value));
          }
          p.times_argv.push_back(f);
          p.expected.push_back(fld.expired(now) ? -2 : fld.expire_ms ? *fld.expire_ms : -1);
        }
        p.getall = read({"HGETALL", key});
        if (o.check_encoding) p.enc = read({"OBJECT", "ENCODING", key});
        if (!h.fields.empty()) p.times = read(p.times_argv);
      }
    }
    plans.push_back(std::move(p));
  }
  const std::vector<Reply> r = reads.empty() ? std::vector<Reply>{} : side.pipeline(reads);
  std::size_t i = 0;
  for (const auto& key : keys) {
    const Plan& p = plans[i++];
    const std::string shown = resp::cli_quote(key);  // a binary key stays on one line
    const model::Entry* e = p.e;
    const Reply& type = r[p.type];
    const std::string mt = e ? e->type_name() : "none";
    if (!type.is_status() || type.str() != mt) {
      diffs.push_back(shown + ": TYPE server " + type.to_string() + ", model " + mt);
      continue;
    }
    if (!e) continue;
    const Reply& pttl = r[p.pttl];
    const bool model_ttl = e->expire_ms.has_value();
    if (!pttl.is_integer() || (pttl.as_integer() == -1) == model_ttl)
      diffs.push_back(shown + ": key PTTL server " + pttl.to_string() + ", model " +
                      (model_ttl ? std::to_string(*e->expire_ms - now) : "-1"));
    if (e->is_string()) {
      const Reply& v = r[p.get];
      if (v != Reply::string(e->string()))
        diffs.push_back(shown + ": GET server " + v.to_string() + ", model " + resp::quoted(e->string()));
      continue;
    }
    const model::Hash& h = e->hash();
    const Reply& len = r[p.hlen];
    if (!(o.hlen_unknown && o.hlen_unknown->count(key)) &&
        len != Reply::integer(static_cast<long long>(h.stored_count())))
      diffs.push_back(shown + ": HLEN server " + len.to_string() + ", model " + std::to_string(h.stored_count()));
    const Argv getall{"HGETALL", key};
    const Reply& all_fields = r[p.getall];
    if (!model::same_reply(getall, Reply::array(p.pairs), all_fields))
      diffs.push_back(shown + ": HGETALL server " + oneline(all_fields) + ", model " + oneline(Reply::array(p.pairs)));
    if (o.check_encoding) {
      const Reply& enc = r[p.enc];
      if (!enc.is_string() || enc.str() != model::to_string(h.encoding))
        diffs.push_back(shown + ": OBJECT ENCODING server " + enc.to_string() + ", model " + model::to_string(h.encoding));
    }
    if (!h.fields.empty()) {
      const Reply& t = r[p.times];
      if (!replies_match(p.times_argv, Reply::ints(p.expected), t, o.time_tolerance_ms))
        diffs.push_back(shown + ": " + resp::cli_line(p.times_argv) + " server " + oneline(t) + ", model " +
                        oneline(Reply::ints(p.expected)));
    }
  }
  return diffs;
}

/// hash-max-listpack-entries and hash-max-listpack-value read with CONFIG GET into the model's
/// limits (model/keyspace.hpp), which decide its listpack / hashtable predictions. False (limits
/// untouched) when the server refuses CONFIG GET or answers otherwise: encoding checks stay off.
inline bool read_listpack_limits(resp::Client& c, model::Keyspace& ks) {
  try {
    const Reply e = c("CONFIG", "GET", "hash-max-listpack-entries");
    const Reply v = c("CONFIG", "GET", "hash-max-listpack-value");
    if (e.is_array() && e.size() == 2 && v.is_array() && v.size() == 2) {
      ks.limits().entries = std::stoull(e[1].str());
      ks.limits().value = std::stoull(v[1].str());
      return true;
    }
  } catch (const std::exception&) {
  }
  return false;
}

}  // namespace expirykit::state
