// expirykit/state/detail/dump_ref.hpp (internal to state::Twin): DUMP payloads, which the
// generators cannot know. `RESTORE key ttl @dump:<src> ...` (Twin::dump_ref) names the payload of
// DUMP <src> taken just before the command is sent (over the read-back connection); the model
// remembers which entry every payload it saw stands for (model::Keyspace::remember_dump), those
// read here and those a DUMP step answered, so that a RESTORE of it is modelled.
// A pipelined run (Twin::run_all) whose next command names a payload sends its DUMP as soon as the
// run's replies are in (DumpAhead): the server reads it while the client checks the run.
#pragma once

#include <cstdint>
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

/// The key whose payload `a` names (`RESTORE key ttl <prefix><src> ...`: <src>); "" when it
/// names none.
inline std::string dump_ref_source(const Argv& a, std::string_view prefix) {
  return names_dump_ref(a, prefix) ? a[3].substr(prefix.size()) : std::string();
}

/// `a` (`RESTORE key ttl <prefix><src> ...`) with `p`, the server's reply to DUMP <src>, as its
/// payload, the model remembering which entry of `ks` it stands for; a missing <src> (nil) gives
/// an empty payload.
inline Argv with_dump_payload(const Reply& p, model::Keyspace& ks, const Argv& a, std::string_view prefix) {
  Argv out = a;
  const std::string src = a[3].substr(prefix.size());
  out[3] = p.is_string() ? p.str() : std::string();
  if (p.is_string())
    if (const model::Entry* e = ks.raw(src)) ks.remember_dump(p.str(), *e);
  return out;
}

/// `RESTORE key ttl <prefix><src> ...` (prefix: Twin::dump_ref, "@dump:") with the payload of
/// DUMP <src> read now on `side`, the model remembering which entry of `ks` it stands for; a
/// missing <src> gives an empty payload. Any other command is returned as it is.
inline Argv resolve_dump_ref(resp::Client& side, model::Keyspace& ks, const Argv& a, const std::string& prefix) {
  if (!names_dump_ref(a, prefix)) return a;
  return with_dump_payload(side("DUMP", a[3].substr(prefix.size())), ks, a, prefix);
}

/// A `DUMP <src>` sent on the read-back connection `side` right after a pipelined run whose next
/// command is `RESTORE ... @dump:<src>`, its reply not yet read. Twin::resolve_dump_ref uses it
/// when nothing went out on the twin's connection `c` or on `side` since (their
/// resp::Client::commands_appended() as they were right after it: the server is as the run left
/// it, which is where a DUMP sent then would read it); else it reads the reply, drops it and
/// sends its own.
struct DumpAhead {
  resp::Client* c = nullptr;     ///< the twin's connection then
  resp::Client* side = nullptr;  ///< the connection it went on
  std::string src;
  std::uint64_t c_sent = 0, side_sent = 0;
};
/// Sends DUMP `src` on `side` without reading the reply (DumpAhead). Throws what resp::Client throws.
inline DumpAhead send_dump(resp::Client& side, resp::Client& c, const std::string& src) {
  side.append({"DUMP", src});
  side.send();
  return DumpAhead{&c, &side, src, c.commands_appended(), side.commands_appended()};
}

/// After an agreeing step `s` of `mc`: the payload a `DUMP key` answered stands for the key's
/// entry in `ks` (the model state after the step).
inline void remember_dump(model::Keyspace& ks, const ModelCommand& mc, const Step& s) {
  if (s.ok && mc.name == "DUMP" && s.server.is_string() && mc.argv.size() == 2)
    if (const model::Entry* e = ks.raw(mc.argv[1])) ks.remember_dump(s.server.str(), *e);
}

}  // namespace expirykit::state::detail
