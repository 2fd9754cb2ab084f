// expirykit/state/replies.hpp: how a model reply is compared with a server reply.
//
//   if (!state::replies_match(argv, model_reply, server_reply, 1500)) ...
//
// Everything must be equal, except clock-dependent integers (HTTL, HPTTL, TTL, PTTL,
// HEXPIRETIME, HPEXPIRETIME, EXPIRETIME, PEXPIRETIME: time_reading()) and the unordered replies of
// HGETALL/HKEYS/HVALS (compared as sets, model/canonical.hpp).
#pragma once

#include <string>
#include <vector>

#include <expirykit/model/canonical.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::state {

using resp::Argv;
using resp::Reply;

/// Commands whose integer replies are times relative to "now" (ms or s) or absolute deadlines.
enum class TimeReading { none, relative_ms, relative_s, absolute_ms, absolute_s };
inline TimeReading time_reading(const Argv& argv) {
  if (argv.empty()) return TimeReading::none;
  const std::string u = model::upper(argv[0]);
  if (u == "HPTTL" || u == "PTTL") return TimeReading::relative_ms;
  if (u == "HTTL" || u == "TTL") return TimeReading::relative_s;
  if (u == "HPEXPIRETIME" || u == "PEXPIRETIME") return TimeReading::absolute_ms;
  if (u == "HEXPIRETIME" || u == "EXPIRETIME") return TimeReading::absolute_s;
  return TimeReading::none;
}

/// Model reply vs server reply for `argv`: equal, with unordered replies compared as sets, and
/// clock-dependent integers (time_reading()) allowed to differ by `tol_ms` milliseconds
/// (rounded up to whole seconds for second units; negative codes -1/-2 must match exactly).
/// `tol_ms` = 0 is exact. state::Twin compares exactly (it tries the model at every millisecond
/// the server may have run the command at); a tolerance is for replies of two servers
/// (differential.hpp) or of calls made at different times.
inline bool replies_match(const Argv& argv, const Reply& model, const Reply& server, int64_t tol_ms) {
  if (model::same_reply(argv, model, server)) return true;
  const TimeReading tr = time_reading(argv);
  if (tr == TimeReading::none || tol_ms <= 0) return false;
  const int64_t tol = (tr == TimeReading::relative_s || tr == TimeReading::absolute_s) ? (tol_ms + 999) / 1000 : tol_ms;
  auto near = [&](const Reply& a, const Reply& b) {
    if (!a.is_integer() || !b.is_integer()) return a == b;
    const long long x = a.as_integer(), y = b.as_integer();
    if (x < 0 || y < 0) return x == y;
    return (x > y ? x - y : y - x) <= tol;
  };
  if (model.is_array() && server.is_array()) {
    if (model.size() != server.size()) return false;
    for (std::size_t i = 0; i < model.size(); ++i)
      if (!near(model[i], server[i])) return false;
    return true;
  }
  return near(model, server);
}

/// The known server issue (known_issues/table.hpp id) that makes `argv`'s keyspace
/// notifications differ from the model's, or "" (the id's row says which servers it covers).
inline std::string events_known_issue(const Argv& argv) {
  if (argv.size() > 2 && model::upper(argv[0]) == "HSETEX") {
    const std::string k = model::upper(argv[1]);
    if (k == "NX" || k == "XX" || k == "FNX" || k == "FXX") return "valkey-hsetex-flag-named-key";
  }
  return {};
}

/// A batch reply (EXEC, the sequence script) element by element, each with its command's rules
/// (replies_match); false unless both are arrays of cmds.size() elements.
inline bool batch_match(const std::vector<Argv>& cmds, const Reply& model, const Reply& server, int64_t tol) {
  if (!server.is_array() || !model.is_array() || server.size() != model.size() || model.size() != cmds.size())
    return false;
  for (std::size_t i = 0; i < cmds.size(); ++i)
    if (!replies_match(cmds[i], model[i], server[i], tol)) return false;
  return true;
}

}  // namespace expirykit::state
