// expirykit/state/adopt.hpp: reading back from a server into the model: keys after a command
// the model does not cover (model::Unmodelled) ran on the server only, and the deadlines a
// command with a relative TTL set at the server's own "now" (state/twin.hpp's file comment).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <expirykit/model/model.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state {

using resp::Argv;
using resp::Reply;

/// After a command the model does not cover: the keys it names (COMMAND GETKEYS; none if the
/// server cannot say) are read back into the model as the server now holds them (type,
/// value, live fields with deadlines, key TTL, encoding). Logically expired fields cannot be
/// read by name: such keys are added to `hlen_unknown` (left out of the HLEN comparison).
/// The model's pending events are dropped. Returns the keys. Reads over the connection `side()`
/// returns, called only when something is read (a command known to name no key reads nothing).
/// Throws what resp::Client throws.
template <class Side>
  requires std::is_invocable_r_v<resp::Client&, Side&>
std::vector<std::string> adopt_from_server(Side&& side_of, model::Keyspace& ks, const Argv& argv,
                                           std::set<std::string>& hlen_unknown) {
  std::vector<std::string> keys;
  // A command the server says has no key arguments (DEBUG SLEEP 0.005, DEBUG SET-ACTIVE-EXPIRE 0:
  // the same arguments name the same keys) is remembered as such: no round trip the next time.
  static std::mutex keyless_mu;
  static std::set<Argv> keyless;
  const Argv& sig = argv;
  {
    std::lock_guard<std::mutex> lock(keyless_mu);
    if (keyless.count(sig)) {
      ks.take_events();
      return keys;
    }
  }
  resp::Client& side = side_of();
  Argv getkeys{"COMMAND", "GETKEYS"};
  getkeys.insert(getkeys.end(), argv.begin(), argv.end());
  const Reply k = side.call(getkeys);
  if (k.is_array())
    for (const auto& e : k.elements()) keys.push_back(e.str());
  if (k.is_error() && k.str().find("has no key arguments") != std::string::npos) {
    std::lock_guard<std::mutex> lock(keyless_mu);
    keyless.insert(sig);
  }
  for (const auto& key : keys) {
    ks.erase(key);
    const Reply type = side("TYPE", key);
    const Reply pexp = side("PEXPIRETIME", key);
    std::optional<int64_t> ttl;
    if (pexp.is_integer() && pexp.as_integer() >= 0) ttl = pexp.as_integer();
    if (type.is_status() && type.str() == "string") {
      const Reply v = side("GET", key);
      if (v.is_string()) ks.put(key, model::Entry{v.str(), ttl});
    } else if (type.is_status() && type.str() == "hash") {
      model::Hash h;
      const Reply all = side("HGETALL", key);
      Argv times{"HPEXPIRETIME", key, "FIELDS", "0"};
      for (std::size_t i = 0; all.is_array() && i + 1 < all.size(); i += 2) {
        h.fields[all[i].str()] = model::Field{all[i + 1].str(), std::nullopt};
        times.push_back(all[i].str());
      }
      times[3] = std::to_string(times.size() - 4);
      if (times.size() > 4) {
        const Reply t = side.call(times);
        for (std::size_t i = 4; t.is_array() && i < times.size() && i - 4 < t.size(); ++i)
          if (t[i - 4].is_integer() && t[i - 4].as_integer() >= 0) h.fields[times[i]].expire_ms = t[i - 4].as_integer();
      }
      const Reply enc = side("OBJECT", "ENCODING", key);
      if (enc.is_string())
        h.encoding = enc.str() == "listpack"     ? model::Encoding::listpack
                     : enc.str() == "listpackex" ? model::Encoding::listpackex
                                                 : model::Encoding::hashtable;
      h.maybe_indexed = true;  // unknown: Redis may keep it registered (context.hpp)
      const Reply len = side("HLEN", key);
      if (!len.is_integer() || static_cast<std::size_t>(len.as_integer()) != h.fields.size()) hlen_unknown.insert(key);
      ks.put(key, model::Entry{std::move(h), ttl});
    }
  }
  ks.take_events();
  return keys;
}
/// adopt_from_server() over `side` itself.
inline std::vector<std::string> adopt_from_server(resp::Client& side, model::Keyspace& ks, const Argv& argv,
                                                std::set<std::string>& hlen_unknown) {
  return adopt_from_server([&side]() -> resp::Client& { return side; }, ks, argv, hlen_unknown);
}

/// Deadlines of `key` in the model: "" for the key's own TTL, else "f:<field>" per field (Unix ms).
inline std::map<std::string, int64_t> model_deadlines(const model::Keyspace& ks, const std::string& key) {
  std::map<std::string, int64_t> out;
  const model::Entry* e = ks.raw(key);
  if (!e) return out;
  if (e->expire_ms) out[""] = *e->expire_ms;
  if (e->is_hash())
    for (const auto& [f, fld] : e->hash().fields)
      if (fld.expire_ms) out["f:" + f] = *fld.expire_ms;
  return out;
}

/// The server's deadline minus the model's for the first deadline of `key` that step `s` changed
/// (against `before`, model_deadlines() before the step) that differs and stays inside the
/// step's TIME window: how many ms later than `s.model_at_ms` the server ran the step
/// (std::nullopt: none such). Reads PEXPIRETIME / HPEXPIRETIME over `side`, or over the
/// connection `side()` returns, called only when a deadline is to be read.
template <class Side>
  requires std::is_invocable_r_v<resp::Client&, Side&>
std::optional<int64_t> server_deadline_shift(Side&& side, const model::Keyspace& ks, const std::string& key,
                                             const std::map<std::string, int64_t>& before, const Step& s) {
  if (!ks.raw(key)) return std::nullopt;
  for (const auto& [k, v] : model_deadlines(ks, key)) {
    auto it = before.find(k);
    if (it != before.end() && it->second == v) continue;
    resp::Client& c = side();
    const Reply r = k.empty() ? c("PEXPIRETIME", key) : c("HPEXPIRETIME", key, "FIELDS", "1", k.substr(2));
    const Reply& t = r.is_array() && r.size() == 1 ? r[0] : r;
    if (!t.is_integer() || t.as_integer() < 0) continue;
    const int64_t shift = t.as_integer() - v;  // 0 for an absolute deadline
    if (shift != 0 && s.model_at_ms + shift >= s.before_ms && s.model_at_ms + shift <= s.after_ms) return shift;
  }
  return std::nullopt;
}
/// server_deadline_shift() over `side` itself.
inline std::optional<int64_t> server_deadline_shift(resp::Client& side, const model::Keyspace& ks, const std::string& key,
                                                    const std::map<std::string, int64_t>& before, const Step& s) {
  return server_deadline_shift([&side]() -> resp::Client& { return side; }, ks, key, before, s);
}

/// For each deadline of `key` that step `s` changed in the model (against `before`), reads the
/// server's over `side` (or the connection `side()` returns, called only when one is read) and
/// adopts it when it differs by no more than the step's TIME window, widened by `tolerance_ms`
/// (state/twin.hpp's file comment: a relative TTL lands on the server's own "now", which the
/// model can only bracket).
template <class Side>
  requires std::is_invocable_r_v<resp::Client&, Side&>
void adopt_server_deadlines(Side&& side, model::Keyspace& ks, const std::string& key,
                            const std::map<std::string, int64_t>& before, const Step& s, int64_t tolerance_ms) {
  model::Entry* e = ks.raw(key);
  if (!e) return;
  std::vector<std::string> fields;
  bool key_ttl = false;
  for (const auto& [k, v] : model_deadlines(ks, key)) {
    auto it = before.find(k);
    if (it != before.end() && it->second == v) continue;
    if (k.empty()) key_ttl = true;
    else fields.push_back(k.substr(2));
  }
  if (fields.empty() && !key_ttl) return;
  // A one-millisecond window, no tolerance: the model set them at the server's own millisecond,
  // nothing to adopt (only an equal deadline would be), no need to read them.
  if (s.before_ms == s.after_ms && s.model_at_ms == s.before_ms && tolerance_ms == 0) return;
  // The model set its deadlines at s.model_at_ms; the server's "now" was in [before, after].
  const int64_t lo = s.before_ms - s.model_at_ms, hi = s.after_ms - s.model_at_ms + tolerance_ms;
  auto adopt = [&](std::optional<int64_t>& mine, const Reply& theirs) {
    if (!mine || !theirs.is_integer() || theirs.as_integer() < 0) return;
    const int64_t t = theirs.as_integer();
    if (t != *mine && t - *mine >= lo - tolerance_ms && t - *mine <= hi) mine = t;
  };
  if (key_ttl) adopt(e->expire_ms, side()("PEXPIRETIME", key));
  if (!fields.empty() && e->is_hash()) {
    Argv a{"HPEXPIRETIME", key, "FIELDS", std::to_string(fields.size())};
    a.insert(a.end(), fields.begin(), fields.end());
    const Reply r = side().call(a);
    if (!r.is_array() || r.size() != fields.size()) return;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      auto f = e->hash().fields.find(fields[i]);
      if (f != e->hash().fields.end()) adopt(f->second.expire_ms, r[i]);
    }
  }
}
/// adopt_server_deadlines() over `side` itself.
inline void adopt_server_deadlines(resp::Client& side, model::Keyspace& ks, const std::string& key,
                                   const std::map<std::string, int64_t>& before, const Step& s, int64_t tolerance_ms) {
  adopt_server_deadlines([&side]() -> resp::Client& { return side; }, ks, key, before, s, tolerance_ms);
}

/// Whether `argv`, a command outside the model, leaves every key and every INFO counter the
/// model holds as they were (debugCommand in Valkey's and Redis's src/debug.c):
///  - DEBUG SET-ACTIVE-EXPIRE 0|1, which only switches active expiry, a cycle the model never
///    runs itself;
///  - DEBUG SLEEP <seconds>, which only holds the server's one thread (nanosleep) and names no
///    key: time passes, as between any two commands, and the model reads each later command's
///    own TIME window (the main property's sleep set-up: gen::setup_prefix).
/// After it the twin re-bases no counter and reads nothing back; a pipelined run goes on past
/// DEBUG SET-ACTIVE-EXPIRE and ends after DEBUG SLEEP, so that the next one is laid out from the
/// server's time after the sleep (state/detail/pipeline.hpp).
inline bool leaves_model_alone(const Argv& argv) {
  if (argv.size() != 3 || model::upper(argv[0]) != "DEBUG") return false;
  const std::string sub = model::upper(argv[1]);
  return sub == "SET-ACTIVE-EXPIRE" || sub == "SLEEP";
}

/// After commands outside the model (`cmds`: one command, or a batch holding one): every key they
/// name re-read from the server into `ks` (adopt_from_server), and `tracking` told what is known:
/// what they invalidated is not, so the keys they touched are no longer tracked; the keys they
/// read are tracked now (model/tracking.hpp). Reads over the connection `side()` returns, called
/// only when something is read.
template <class Side>
  requires std::is_invocable_r_v<resp::Client&, Side&>
void adopt_unmodelled(Side&& side, model::Keyspace& ks, const std::vector<Argv>& cmds,
                      std::set<std::string>& hlen_unknown, model::TrackingModel& tracking) {
  std::vector<std::string> touched;
  for (const auto& c : cmds) {
    auto k = adopt_from_server(side, ks, c, hlen_unknown);
    touched.insert(touched.end(), k.begin(), k.end());
  }
  for (const auto& k : touched) tracking.tracked.erase(k);
  for (const auto& c : cmds)
    for (const auto& k : model::TrackingModel::read_keys(c)) tracking.tracked.insert(k);
}
/// adopt_unmodelled() over `side` itself.
inline void adopt_unmodelled(resp::Client& side, model::Keyspace& ks, const std::vector<Argv>& cmds,
                             std::set<std::string>& hlen_unknown, model::TrackingModel& tracking) {
  adopt_unmodelled([&side]() -> resp::Client& { return side; }, ks, cmds, hlen_unknown, tracking);
}

}  // namespace expirykit::state
