// expirykit/state/adopt.hpp: reading keys back from a server into the model, after a command
// the model does not cover (model::Unmodelled) ran on the server only.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <expirykit/model/model.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::state {

using resp::Argv;
using resp::Reply;

/// After a command the model does not cover: the keys it names (COMMAND GETKEYS; none if the
/// server cannot say) are read back into the model as the server now holds them (type,
/// value, live fields with deadlines, key TTL, encoding). Logically expired fields cannot be
/// read by name: such keys are added to `hlen_unknown` (left out of the HLEN comparison).
/// The model's pending events are dropped. Returns the keys. Throws what resp::Client throws.
inline std::vector<std::string> adopt_from_server(resp::Client& side, model::Keyspace& ks, const Argv& argv,
                                                std::set<std::string>& hlen_unknown) {
  std::vector<std::string> keys;
  Argv getkeys{"COMMAND", "GETKEYS"};
  getkeys.insert(getkeys.end(), argv.begin(), argv.end());
  const Reply k = side.call(getkeys);
  if (k.is_array())
    for (const auto& e : k.elements()) keys.push_back(e.str());
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

}  // namespace expirykit::state
