// expirykit/state/detail/observe_counters.hpp (internal to state::Twin): the INFO counters as the
// twin observes them (Twin::observe_counters(), compare_counters()). The server's stats read when
// observing begins are the base the model's own counts (model::Counters, from zero then) are added
// to (observe/counters.hpp). The twin asks them at the end of a sequence (compare_counters), and a
// step asks them when only its counters tell a known issue's defect from the spec
// (state/known_divergence.hpp, `counters_match`); after a command outside the model they are
// re-based (its keys are re-read, its counts unknown), except after one that leaves the model
// alone (state/adopt.hpp: DEBUG SET-ACTIVE-EXPIRE, DEBUG SLEEP). Reads go over the read-back connection.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/keyspace.hpp>
#include <expirykit/observe/counters.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::state::detail {

class CounterObservation {
 public:
  /// Whether start() was called.
  bool on() const { return base_.has_value(); }
  /// From now on: the server's stats read over `side` are the base, the model's counts in `ks`
  /// start from zero.
  void start(resp::Client& side, const model::Dialect& d, model::Keyspace& ks) { start_from(observe::Counters::read(side, d), ks); }
  /// start() from counters the caller read (observe::Counters::requests() in a pipeline of its own).
  void start_from(const observe::Counters& server, model::Keyspace& ks) {
    base_ = server;
    ks.counters() = model::Counters{};
  }
  /// The server's counters (read now over `side`) against model state `ks`'s; one line per
  /// difference (observe::compare). Only when on().
  std::vector<std::string> compare(resp::Client& side, const model::Dialect& d, const model::Keyspace& ks) const {
    return compare_with(observe::Counters::read(side, d), d, ks);
  }
  /// compare() with the server's counters the caller read.
  std::vector<std::string> compare_with(const observe::Counters& server, const model::Dialect& d,
                                        const model::Keyspace& ks) const {
    return observe::compare(server, observe::Counters::of_model(ks, *base_), d);
  }

 private:
  std::optional<observe::Counters> base_;
};

}  // namespace expirykit::state::detail
