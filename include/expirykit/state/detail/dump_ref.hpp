// expirykit/state/detail/dump_ref.hpp (internal to state::Twin): DUMP payloads, which the
// generators cannot know. `RESTORE key ttl @dump:<src> ...` (Twin::dump_ref) names the payload of
// DUMP <src> taken just before the command is sent (over the read-back connection); the model
// remembers which entry every payload it saw stands for (model::Keyspace::remember_dump), those
// read here and those a DUMP step answered, so that a RESTORE of it is modelled.
#pragma once

#include <string>
#include <string_view>

#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state::detail {

/// Whether `a` is `RESTORE key ttl <prefix><src> ...` (prefix: Twin::dump_ref, "@dump:"): a
/// payload still to be read.
inline bool names_dump_ref(const Argv& a, std::string_view prefix) {
  return a.size() > 3 && a[3].rfind(prefix, 0) == 0 && model::upper(a[0]) == "RESTORE";
}

/// `RESTORE key ttl <prefix><src> ...` (prefix: Twin::dump_ref, "@dump:") with the payload of
/// DUMP <src> read now on `side`, the model remembering which entry of `ks` it stands for; a
/// missing <src> gives an empty payload. Any other command is returned as it is.
inline Argv resolve_dump_ref(resp::Client& side, model::Keyspace& ks, const Argv& a, const std::string& prefix) {
  if (!names_dump_ref(a, prefix)) return a;
  Argv out = a;
  const std::string src = a[3].substr(prefix.size());
  const Reply p = side("DUMP", src);
  out[3] = p.is_string() ? p.str() : std::string();
  if (p.is_string())
    if (const model::Entry* e = ks.raw(src)) ks.remember_dump(p.str(), *e);
  return out;
}

/// After an agreeing step `s` of `mc`: the payload a `DUMP key` answered stands for the key's
/// entry in `ks` (the model state after the step).
inline void remember_dump(model::Keyspace& ks, const ModelCommand& mc, const Step& s) {
  if (s.ok && mc.name == "DUMP" && s.server.is_string() && mc.argv.size() == 2)
    if (const model::Entry* e = ks.raw(mc.argv[1])) ks.remember_dump(s.server.str(), *e);
}

}  // namespace expirykit::state::detail
