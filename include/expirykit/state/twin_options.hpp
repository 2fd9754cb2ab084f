// expirykit/state/twin_options.hpp: what a state::Twin (state/twin.hpp) checks beyond the replies,
// how it treats a command outside the model or a known issue of the server under test, and the
// test hooks that plant a model bug (checks/state: the harness must catch and shrink it).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <expirykit/model/effects.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/identity.hpp>

namespace expirykit::state {

/// Twin::Options.
struct TwinOptions {
  /// Extra allowed difference (ms) on clock-dependent replies and read-back deadlines, beyond
  /// the command's TIME window. 0 (the default): exact (state/twin.hpp, "Time").
  int64_t time_tolerance_ms = 0;
  /// compare_state() compares OBJECT ENCODING of every hash with the model's prediction (when
  /// the listpack limits could be read with CONFIG GET).
  bool check_encoding = true;
  /// Test hook for the harness itself: applied to every model reply before comparing
  /// (e.g. to plant a model bug and check that it is caught and shrunk). Empty: none.
  std::function<void(const resp::Argv&, resp::Reply&)> mutate_model_reply;
  /// Test hook: applied to the model's tracking invalidations of every command before comparing.
  std::function<void(const resp::Argv&, model::Invalidations&)> mutate_model_invalidations;
  /// Test hook: applied to the model's events of every command before comparing.
  std::function<void(const resp::Argv&, std::vector<model::Event>&)> mutate_model_events;
  /// The server under test: a divergence it has as a known issue (known_issues/table.hpp)
  /// is excused and named in Step::known_issue instead of failing. Empty: nothing excused.
  std::optional<server::Identity> server;
  /// More servers whose crash rows (KnownIssue::crashes) hold a command back: the replicas of a
  /// mixed-version pair, which apply what the primary accepts (the primary's are in `server`).
  std::vector<server::Identity> crash_servers{};
  /// A command the model does not cover (model::Unmodelled): true runs it on the server only,
  /// re-reads the keys it names (COMMAND GETKEYS) into the model and counts it in coverage()
  /// as unmodelled, so the step is ok; false makes the step fail.
  bool adopt_unmodelled = true;
};

}  // namespace expirykit::state
