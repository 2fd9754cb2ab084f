// expirykit/state/detail/observe_known_issues.hpp (internal to state::Twin): the known issues of
// the server under test (Twin::Options::server, crash_servers) as a step meets them. Before a
// command is sent, a crash row that says it would kill the server holds it back (Twin::crashing:
// crash_row, state/known_divergence.hpp): the step is recorded as not sent. After the model's
// attempts over the window (state/detail/trial.hpp), settle_known_issues() hands the step to
// settle_known_divergence (state/known_divergence.hpp: replays with the rows' defects, reads the
// state back, asks the counters), which replays it through the trial. The events a row explains
// are excused when they are judged (state/detail/observe_events.hpp), the one encoding a row
// explains after the first attempt (state/detail/observe_encoding.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <string>

#include <expirykit/model/keyspace.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/detail/trial.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state::detail {

/// The step of `argv`, held back by the crash row `row_id`: not sent (the server's and the model's
/// reply say so: Twin::sent() leaves it out), ok, the row named in known_issue.
inline Step not_sent(const Argv& argv, const std::string& row_id) {
  Step s;
  s.argv = argv;
  s.server = s.model = Reply::status("(not sent: known issue " + row_id + ")");
  s.known_issue = row_id;
  s.ok = true;
  return s;
}

/// Whether step `s` went to the server: every step but one not_sent() made.
inline bool was_sent(const Step& s) { return !s.server.is_status() || s.server.str().rfind("(not sent", 0) != 0; }

/// When o.server is set: settle_known_divergence for step `s` (the twin's model `ks`, its dialect
/// `spec`), replaying through `t` (Trial::rerun), reading over `side()`; `counters_match(k)` tells
/// whether the server's INFO counters are those of model state `k` (nullopt: not observed);
/// `from_ms` the earliest millisecond of the window to replay at (0: all of it).
template <class Side>
void settle_known_issues(const TwinOptions& o, const model::Dialect& spec, Trial& t, model::Keyspace& ks, Step& s,
                         Side&& side, int64_t max_window_ms,
                         const std::function<std::optional<bool>(const model::Keyspace&)>& counters_match,
                         int64_t from_ms = 0) {
  if (!o.server) return;
  settle_known_divergence(
      *o.server, spec, s, ks, side, max_window_ms, [&t](const model::Dialect& d, int64_t at) { t.rerun(d, at); },
      counters_match, from_ms, [&t](const model::Dialect& d, int64_t at) { return t.probe(d, at); });
}

}  // namespace expirykit::state::detail
