// expirykit/state/known_divergence.hpp: per step, tell a known server defect (a row of
// known_issues/table.hpp covering the server under test) from a new divergence, and notice when
// a server in a row's range no longer shows it.
//
// state::Twin runs each command against the specification (the model of the server's dialect).
// For a step whose command a covering row names (KnownIssue::commands), settle_known_divergence()
// then decides, replaying the step from the state before it with the defects of those rows
// switched on in the model (KnownIssue::reproduce, model::Defects; all together, as the server
// has them all; the row named is the first whose defect alone changes the step):
//
//   the spec disagreed with the server and the replay agrees             -> excused: the replay's
//       outcome is kept (reply, events, invalidations, model state), Step::known_issue = id
//   the spec disagreed, no replay agrees, a row's `matches` accepts the divergence
//                                                                         -> excused, spec state kept
//   the spec agreed and the replay disagrees with what the step observed (reply, the events the
//       flags deliver, invalidations)                                      -> Step::fixed_issue = id
//   the spec agreed, the replay too, and it differs in the model state (COPY leaving expired fields
//       out, HSETEX KEEPTTL keeping a past deadline): the keys that differ are read back from the
//       server (TYPE, HLEN, HPEXPIRETIME of each field, a deadline within the step's TIME window;
//       read-only on both servers) and the state the server has wins: the defect's (Step::known_issue = id) or the spec's
//       (Step::fixed_issue = id); neither: the spec's, and compare_state() reports the difference
//   the spec agreed, the replay too, same state, different INFO counters  -> the server's counters
//       (counters_match, when the twin observes them) decide the same way
//
// So the model keeps following a server that has a known defect, a fixed release is reported as
// FIXED (record it in known_issues/table.hpp) rather than failing or passing silently, and any
// other divergence still fails. Rows that cover the server but that no step can show (replicas,
// persistence, memory) are the suites' business (catch2/known_issue.hpp).
//
// Wiring (state::Twin's check of a step, after the spec's attempts over the TIME window:
// state/detail/observe_known_issues.hpp; `trial` holds the model state before the step and
// Trial::rerun runs the step from it under dialect `d` at `at`: state/detail/trial.hpp):
//
//   settle_known_divergence(*opt_.server, d_, s, ks_, side(), max_window_ms,
//                           [&trial](const model::Dialect& d, int64_t at) { trial.rerun(d, at); },
//                           [this](const model::Keyspace& k) { return counters_match(k); });
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/state/replies.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state {

/// The crash row (known_issues/table.hpp, KnownIssue::crashes) that says `argv` would crash
/// `server` or one of `more`, given the model's state `ks` at `now_ms` (Unix ms); nullptr when
/// none does. The kit's sequence script (model/batch.hpp) counts when one of its commands would
/// crash; an EXEC is never held back (its commands were looked at when queued).
inline const known_issues::KnownIssue* crash_row(const std::optional<server::Identity>& server,
                                           const std::vector<server::Identity>& more, const model::Keyspace& ks,
                                           const Argv& argv, int64_t now_ms) {
  if ((!server && more.empty()) || argv.empty()) return nullptr;
  auto covered = [&](const known_issues::KnownIssue& k) {
    if (server && k.covers(*server)) return true;
    for (const auto& id : more)
      if (k.covers(id)) return true;
    return false;
  };
  // Asked for every command a run may hold: the script's commands are read out only when a
  // crash row covers the server.
  bool read = false;
  std::optional<std::vector<Argv>> inner;
  for (const auto& k : known_issues::table()) {
    if (!k.crashes || !covered(k)) continue;
    if (!read) inner = model::sequence_eval_commands(argv), read = true;
    if (!inner && k.crashes(ks, argv, now_ms)) return &k;
    if (inner)
      for (const auto& a : *inner)
        if (k.crashes(ks, a, now_ms)) return &k;
  }
  return nullptr;
}

/// The row that excuses a step's differing keyspace notifications on `server`: the one
/// events_known_issue() (state/replies.hpp) names for the command, or for the first command of
/// `batch` it names one for, when that row covers `server`; "" otherwise.
inline std::string events_excuse(const server::Identity& server, const Argv& argv,
                                 const std::optional<std::vector<Argv>>& batch) {
  std::string id = events_known_issue(argv);
  for (std::size_t i = 0; batch && id.empty() && i < batch->size(); ++i) id = events_known_issue((*batch)[i]);
  const auto* k = known_issues::find(id);
  return k && k->covers(server) ? k->id : std::string();
}

/// valkey-script-string-not-int-encoded (known_issues/table.hpp): OBJECT ENCODING answering
/// embstr where the model says int, once a script wrote a string (`script_wrote_strings`). The
/// row's id when step `s` is that and the row covers `server`; "" otherwise.
inline std::string script_string_excuse(const server::Identity& server, const Step& s, bool script_wrote_strings) {
  if (!script_wrote_strings || s.argv.empty() || model::upper(s.argv[0]) != "OBJECT" ||
      s.model != Reply::string("int") || s.server != Reply::string("embstr"))
    return {};
  const auto* k = known_issues::find("valkey-script-string-not-int-encoded");
  return k && k->covers(server) ? k->id : std::string();
}

/// `d` with the defect of row `k` switched on.
inline model::Dialect with_defect(const model::Dialect& d, const known_issues::KnownIssue& k) {
  model::Dialect out = d;
  out.defects = out.defects | k.reproduce;
  return out;
}

namespace detail {
/// known_issues::recognisable_issues(server), kept for the last flavor and version asked: a
/// twin asks for every step, up to three times (the table is fixed, a row covers a server by
/// flavor and version only).
inline const std::vector<const known_issues::KnownIssue*>& recognisable_rows(const server::Identity& server) {
  thread_local struct {
    bool set = false;
    server::Flavor flavor = server::Flavor::valkey;
    server::Version version;
    std::vector<const known_issues::KnownIssue*> rows;
  } last;
  if (!last.set || last.flavor != server.flavor || last.version != server.version) {
    last.rows = known_issues::recognisable_issues(server);
    last.flavor = server.flavor;
    last.version = server.version;
    last.set = true;
  }
  return last.rows;
}
}  // namespace detail

/// The rows of known_issues/table.hpp covering `server` that can show in a step running `argv`
/// (or the commands of `batch`), in table order: those whose KnownIssue::concerns() holds.
inline std::vector<const known_issues::KnownIssue*> known_issues_for_step(const server::Identity& server, const Argv& argv,
                                                                    const std::vector<Argv>& batch) {
  std::vector<const known_issues::KnownIssue*> out;
  const auto& rows = detail::recognisable_rows(server);
  if (rows.empty()) return out;
  std::vector<std::string> names;  // upper-cased once, not once per row
  names.reserve(1 + batch.size());
  if (!argv.empty()) names.push_back(model::upper(argv[0]));
  for (const auto& a : batch)
    if (!a.empty()) names.push_back(model::upper(a[0]));
  for (const auto* k : rows)
    for (const auto& n : names)
      if (std::find(k->commands.begin(), k->commands.end(), n) != k->commands.end()) {
        out.push_back(k);
        break;
      }
  return out;
}

namespace detail {

/// What the state check reads of one key: TYPE, HLEN (stored fields, expired included) and the
/// HPEXPIRETIME of each named field (-2 missing or logically expired, -1 persistent).
struct KeyShape {
  std::string type = "none";
  long long hlen = -1;
  std::vector<long long> times;
  friend bool operator==(const KeyShape&, const KeyShape&) = default;
};

/// Whether `got` (read from the server) is `want` (the model's), a deadline (> 0, Unix ms) allowed
/// to differ by `slack_ms`: a relative TTL (HPEXPIRE, HGETEX EX, ...) is set at the server's own
/// millisecond, which lies anywhere in the step's TIME window, while the model replays the step
/// at one chosen millisecond of it (state/adopt.hpp then adopts the server's deadlines). The
/// deadlines compare as replies_match() compares HPEXPIRETIME replies: -1/-2 exactly.
inline bool same_shape(const KeyShape& got, const KeyShape& want, int64_t slack_ms) {
  return got.type == want.type && got.hlen == want.hlen &&
         replies_match({"HPEXPIRETIME"}, Reply::ints(want.times), Reply::ints(got.times), slack_ms);
}

inline KeyShape model_shape(const model::Entry* e, const std::vector<std::string>& fields, int64_t now) {
  KeyShape k;
  if (!e || (e->expire_ms && model::deadline_passed(*e->expire_ms, now))) return k;
  k.type = e->type_name();
  if (!e->is_hash()) return k;
  const auto& h = e->hash();
  k.hlen = static_cast<long long>(h.stored_count());
  for (const auto& f : fields) {
    auto it = h.fields.find(f);
    if (it == h.fields.end() || it->second.expired(now)) k.times.push_back(-2);
    else k.times.push_back(it->second.expire_ms ? *it->second.expire_ms : -1);
  }
  return k;
}

inline KeyShape server_shape(resp::Client& c, const std::string& key, const std::vector<std::string>& fields) {
  KeyShape k;
  const Reply type = c("TYPE", key);
  k.type = type.is_status() ? type.str() : type.to_string();
  if (k.type != "hash") return k;
  const Reply len = c("HLEN", key);
  k.hlen = len.is_integer() ? len.as_integer() : -1;
  if (fields.empty()) return k;
  Argv a{"HPEXPIRETIME", key, "FIELDS", std::to_string(fields.size())};
  a.insert(a.end(), fields.begin(), fields.end());
  const Reply t = c.call(a);
  if (t.is_array())
    for (std::size_t i = 0; i < t.size(); ++i) k.times.push_back(t[i].is_integer() ? t[i].as_integer() : -3);
  return k;
}

/// The keys (database, name) whose entries differ between `a` and `b`.
inline std::vector<std::pair<int, std::string>> differing_keys(const model::Keyspace& a, const model::Keyspace& b) {
  std::vector<std::pair<int, std::string>> out;
  auto diff = [&](int db, const model::Keyspace::Map& x, const model::Keyspace::Map& y) {
    std::set<std::string> names;
    for (const auto& [k, e] : x) names.insert(k);
    for (const auto& [k, e] : y) names.insert(k);
    for (const auto& k : names) {
      auto i = x.find(k), j = y.find(k);
      const bool same = (i == x.end()) == (j == y.end()) && (i == x.end() || i->second == j->second);
      if (!same) out.emplace_back(db, k);
    }
  };
  diff(0, a.entries(), b.entries());
  std::set<int> dbs;
  for (const auto& [n, m] : a.other_dbs()) dbs.insert(n);
  for (const auto& [n, m] : b.other_dbs()) dbs.insert(n);
  static const model::Keyspace::Map none;
  for (int n : dbs) {
    auto i = a.other_dbs().find(n), j = b.other_dbs().find(n);
    diff(n, i == a.other_dbs().end() ? none : i->second, j == b.other_dbs().end() ? none : j->second);
  }
  return out;
}

inline const model::Entry* entry_in(const model::Keyspace& ks, int db, const std::string& key) {
  const auto& m = db == 0 ? ks.entries() : [&]() -> const model::Keyspace::Map& {
    static const model::Keyspace::Map none;
    auto it = ks.other_dbs().find(db);
    return it == ks.other_dbs().end() ? none : it->second;
  }();
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

enum class StateSide { spec, defect, neither };

/// Which of two model states the server holds for the keys where they differ, deadlines compared
/// within `slack_ms` (same_shape). Reads over `c` (SELECTs another database and back to 0 for
/// keys outside db 0).
inline StateSide server_state_side(resp::Client& c, const model::Keyspace& spec, const model::Keyspace& defect,
                                   int64_t slack_ms) {
  const auto keys = differing_keys(spec, defect);
  if (keys.empty()) return StateSide::neither;
  bool spec_ok = true, defect_ok = true;
  int selected = 0;
  for (const auto& [db, key] : keys) {
    if (db != selected) {
      c("SELECT", std::to_string(db));
      selected = db;
    }
    const model::Entry* es = entry_in(spec, db, key);
    const model::Entry* ed = entry_in(defect, db, key);
    std::set<std::string> names;
    for (const auto* e : {es, ed})
      if (e && e->is_hash())
        for (const auto& [f, v] : e->hash().fields) names.insert(f);
    const std::vector<std::string> fields(names.begin(), names.end());
    const KeyShape got = server_shape(c, key, fields);
    const int64_t now = server::time_ms(c("TIME"));
    spec_ok = spec_ok && same_shape(got, model_shape(es, fields, now), slack_ms);
    defect_ok = defect_ok && same_shape(got, model_shape(ed, fields, now), slack_ms);
  }
  if (selected != 0) c("SELECT", "0");
  if (spec_ok == defect_ok) return StateSide::neither;
  return defect_ok ? StateSide::defect : StateSide::spec;
}

/// `side` itself, or the connection it returns when it is a callable that returns one (a getter
/// called only when a read is due: Twin::side() completes what was sent ahead first).
template <class Side>
resp::Client& connection(Side&& side) {
  if constexpr (std::is_invocable_r_v<resp::Client&, Side&>)
    return side();
  else
    return side;
}
}  // namespace detail

/// Decides a step against the known issues of `server` (see the file comment). `s` is the step
/// as the spec attempts left it (s.model_at_ms: the millisecond of its outcome), `ks` the twin's
/// model state that `rerun` updates, `side` a connection to the same server that tracks nothing
/// (Twin::side()), or a callable that returns one, called only when the state is read back.
/// `rerun(d, at)` must restore the model state from before the step, run the
/// step against dialect `d` at server time `at` (Unix ms), and fill `s` as Twin::run does
/// (model reply, events, invalidations, diffs, ok). A covered server has all its known defects at
/// once, so the step is replayed with every replayable row's defect on (a transaction may meet
/// two); the row named is the first whose defect alone changes the step. On return `s` and `ks`
/// hold the outcome kept: the spec's, or the defects' when the step is excused. Sets
/// s.known_issue / s.fixed_issue to a row id. `counters_match(k)`: whether the server's INFO
/// counters are those of model state `k` (nullopt: counters not observed); asked only when the
/// spec and the defects agree on everything else but their counters (a COPY that left out an
/// expired field that a later write of the same transaction recreates: the spec counts its
/// expiry, the defect does not). `from_ms`: the earliest millisecond of the window to replay at
/// (a pipelined run trying a later one for a step it checks again: state/detail/run_all.hpp);
/// 0 for the whole window. `probe(d, at)`, when given: the step under `d` at `at` from the state
/// before it, without touching `s` or `ks` (detail::Trial::probe): whether it agreed and the
/// model state it left; a step the server agreed with whose defects' replay agrees too and
/// leaves the same state and counters keeps its outcome without the two reruns (the same
/// outcome: the spec's at s.model_at_ms). Throws what `rerun`, `probe`, `side` or
/// `counters_match` throw.
template <class Rerun, class Side>
void settle_known_divergence(
    const server::Identity& server, const model::Dialect& spec, Step& s, const model::Keyspace& ks, Side&& side,
    int64_t max_window_ms, Rerun rerun,
    const std::function<std::optional<bool>(const model::Keyspace&)>& counters_match = {}, int64_t from_ms = 0,
    const std::function<std::pair<bool, model::Keyspace>(const model::Dialect&, int64_t)>& probe = {}) {
  const auto rows = known_issues_for_step(server, s.argv, s.batch);
  if (rows.empty()) return;
  std::vector<const known_issues::KnownIssue*> replayable;
  model::Dialect all = spec;
  for (const auto* k : rows)
    if (k->reproduce.any()) {
      replayable.push_back(k);
      all.defects = all.defects | k->reproduce;
    }
  // The spec's outcome at `at` (rerun first), then the first row whose defect alone changes
  // the reply, events, invalidations or state; `observable`: only what the step observed counts
  // (the defect alone disagrees with the server). Leaves `s`/`ks` at the last replay.
  auto first_changing = [&](int64_t at, bool observable) -> const known_issues::KnownIssue* {
    rerun(spec, at);
    const Step base = s;
    const model::Keyspace base_state = ks;
    for (const auto* k : replayable) {
      rerun(with_defect(spec, *k), at);
      const bool changed = observable ? !s.ok
                                      : !(s.model == base.model && s.model_events == base.model_events &&
                                          s.model_invalidations == base.model_invalidations && ks == base_state &&
                                          ks.counters() == base_state.counters());
      if (changed) return k;
    }
    return nullptr;
  };
  if (s.ok) {
    if (replayable.empty()) return;
    const int64_t at = s.model_at_ms;
    if (probe) {
      const auto [agreed, defect_state] = probe(all, at);
      if (agreed && defect_state == ks && (!counters_match || defect_state.counters() == ks.counters())) return;
    }
    const model::Keyspace spec_state = ks;
    rerun(all, at);
    if (!s.ok) {
      // A defect would have shown in what this step observed (reply, the events the flags
      // deliver, invalidations); the server agreed with the spec: evidence of a fix.
      const auto* k = first_changing(at, true);
      rerun(spec, at);
      if (k) s.fixed_issue = k->id;
      return;
    }
    if (ks == spec_state) {  // nothing observed or stored tells them apart, but the counters may
      std::optional<bool> defect_counts, spec_counts;
      if (counters_match && !(ks.counters() == spec_state.counters())) {
        defect_counts = counters_match(ks);
        spec_counts = counters_match(spec_state);
      }
      if (defect_counts && spec_counts && *defect_counts != *spec_counts) {
        const auto* k = first_changing(at, false);
        if (*defect_counts) {
          rerun(all, at);
          s.known_issue = k ? k->id : replayable.front()->id;
        } else {
          rerun(spec, at);
          if (k) s.fixed_issue = k->id;
        }
        return;
      }
      rerun(spec, at);
      return;
    }
    const auto side_of =
        detail::server_state_side(detail::connection(side), spec_state, ks, std::max<int64_t>(0, s.after_ms - s.before_ms));
    if (side_of == detail::StateSide::neither) {
      rerun(spec, at);  // compare_state() reports what the server holds
      return;
    }
    const auto* k = first_changing(at, false);
    if (side_of == detail::StateSide::defect) {
      rerun(all, at);  // keep the defects' outcome (same replies, their state)
      s.known_issue = k ? k->id : replayable.front()->id;
    } else {
      rerun(spec, at);
      if (k) s.fixed_issue = k->id;
    }
    return;
  }
  const int64_t first = std::max(s.before_ms, from_ms);
  const int64_t last = std::min(s.after_ms, s.before_ms + max_window_ms);
  if (!replayable.empty()) {
    for (int64_t at = first; at <= last; ++at) {
      rerun(all, at);
      if (!s.ok) continue;
      const auto* k = first_changing(at, false);
      rerun(all, at);
      s.known_issue = k ? k->id : replayable.front()->id;
      return;
    }
    rerun(spec, first);  // report (and keep) the spec's outcome at the window's (first) start
  }
  known_issues::Divergence dv{s.argv, s.batch, s.model, s.server, s.events_diff, s.tracking_diff};
  for (const auto* k : rows) {
    if (k->matches && k->matches(dv)) {
      s.known_issue = k->id;
      s.ok = true;
      return;
    }
  }
}

}  // namespace expirykit::state
