// expirykit/state/detail/run_all.hpp (internal to state::Twin, included by state/twin.hpp):
// Twin::run_all, run() of a whole sequence with its commands sent in pipelined runs, and the DUMP
// a run sends ahead for the `RESTORE ... @dump:` after it (Twin::resolve_dump_ref, drop_dump_ahead).
//
// Each run (state/detail/pipeline.hpp: chunk_end, RunSend) goes to the server in one round
// trip, its first commands already while chunk_end decides where it ends (from
// Twin::kStreamAfter decided on: the server runs them while the client lays out the rest); then
// each of its steps is checked as run() checks one (Twin::check), in order, from the record of
// what the server showed for it. A step checked before the last of its run cannot read
// the server back, which has run the commands after it since: when its TIME window spans more
// than one millisecond and it changed a deadline, the model chose the first millisecond of the
// window that agrees with what the step showed (state/detail/trial.hpp), where run() would have
// read the deadline the server computed (state/detail/observe_deadlines.hpp); a step that set a
// deadline a later millisecond of its window would set otherwise counts as one that changed it
// (detail::without_moving). Such a step is a choice point: the model state before it is kept, and when a later step of the run disagrees, or
// the keys the run touched from there on differ from the server's after the run
// (Twin::compare_state of those keys), the other milliseconds of its window are tried, each with
// the steps after it checked again from their records (no command is sent again); the first with
// every step agreeing and the same state is kept. When none is, the first choice stands and
// the steps report what differs, as run() would have. The checks stay exact: every step agrees
// with the model at one millisecond of its own window, as the server ran it.
//
// A `RESTORE ... @dump:<src>` (state/detail/dump_ref.hpp) ends the run before it; when it then
// starts a run outside a transaction its payload is read there (DUMP over the read-back
// connection), where run() would read it, and it is sent in that run like any other command.
//
// A transaction in a run (MULTI, its queued commands, EXEC or DISCARD: chunk_end takes it whole)
// is checked as run() checks one sent command by command: each queued command's step from the
// server's QUEUED or refusal (Twin::queued), the EXEC with the batch they made, its window from
// the MULTI's TIME to the TIME after it. After a MULTI the server refuses (that step fails), the
// commands of its run that follow were run by the server without a window of their own: they
// are recorded as outside the model, their keys re-read (Options::adopt_unmodelled).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <expirykit/state/detail/pipeline.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::state {

namespace detail {
/// The keys the commands of `mcs` from `from` on name (a command's key, RENAME / COPY's
/// destination, every key of DEL / UNLINK / EXISTS; the commands of a batch too).
inline std::set<std::string> keys_named(const std::vector<ModelCommand>& mcs, std::size_t from) {
  std::set<std::string> out;
  auto add = [&](const Argv& a) {
    if (a.size() < 2) return;
    const std::string u = model::upper(a[0]);
    if (u == "DEL" || u == "UNLINK" || u == "EXISTS") {
      out.insert(a.begin() + 1, a.end());
      return;
    }
    out.insert(a[1]);
    if ((u == "RENAME" || u == "RENAMENX" || u == "COPY") && a.size() > 2) out.insert(a[2]);
  };
  for (std::size_t i = from; i < mcs.size(); ++i) {
    if (mcs[i].batch)
      for (const auto& a : *mcs[i].batch) add(a);
    else
      add(mcs[i].argv);
  }
  return out;
}
/// Whether a command of `mcs` from `from` on can put a key in another database (MOVE, COPY ...
/// DB, SWAPDB; the commands of a batch too).
inline bool names_other_db(const std::vector<ModelCommand>& mcs, std::size_t from) {
  auto one = [](const Argv& a) {
    if (a.empty()) return false;
    const std::string u = model::upper(a[0]);
    return u == "MOVE" || u == "SWAPDB" || (u == "COPY" && a.size() > 3);
  };
  for (std::size_t i = from; i < mcs.size(); ++i) {
    if (mcs[i].batch && std::any_of(mcs[i].batch->begin(), mcs[i].batch->end(), one)) return true;
    if (one(mcs[i].argv)) return true;
  }
  return false;
}
}  // namespace detail

inline Argv Twin::resolve_dump_ref(const Argv& a) {
  if (!detail::names_dump_ref(a, dump_ref)) return a;  // no reference: no read-back connection needed
  if (dump_ahead_) {
    const detail::DumpAhead d = std::move(*dump_ahead_);
    dump_ahead_.reset();
    const bool same = d.c == c_ && c_->commands_appended() == d.c_sent && d.side->commands_appended() == d.side_sent &&
                      d.src == detail::dump_ref_source(a, dump_ref);
    // (Still a read-back connection of the twin: side() and flushes read it before they replace one.)
    if (std::any_of(sides_.begin(), sides_.end(), [&d](const auto& e) { return e.second.c.get() == d.side; })) try {
      const Reply p = d.side->read();
      if (same) {
        ++run_stats_.dumps_ahead;
        return detail::with_dump_payload(p, ks_, a, dump_ref);
      }
    } catch (const resp::ConnectionError&) {  // side() opens another
    }
  }
  return detail::resolve_dump_ref(side(), ks_, a, dump_ref);
}

inline void Twin::drop_dump_ahead() {
  if (!dump_ahead_) return;
  resp::Client* s = dump_ahead_->side;
  dump_ahead_.reset();
  try {
    (void)s->read();
  } catch (const resp::ConnectionError&) {
  }
}

inline std::vector<Step> Twin::run_all(const std::vector<Argv>& cmds_in, bool stop_at_first, std::size_t max_run) {
  // compare_all_follows(): the pipeline of the compare_all() that follows goes right after the
  // last run's replies, its reads planned from the speculative model after that run.
  const bool compare_follows = std::exchange(compare_all_follows_, false);
  finish_begin();  // a begin sent ahead read, use_protocol()'s protocol on: none changes during the runs
  // `@stale:` payloads are known before sending (state/stale_templates.hpp): resolved up front,
  // their RESTOREs go in pipelined runs like any other command.
  std::vector<Argv> resolved;  // cmds_in with the references resolved so far (empty: none yet)
  auto resolve = [&](std::size_t i, Argv a) {
    if (resolved.empty()) resolved = cmds_in;
    resolved[i] = std::move(a);
  };
  for (std::size_t i = 0; i < cmds_in.size(); ++i)
    if (stale_fields(cmds_in[i])) {
      if (resolved.empty()) stale_.prepare(side(), cmds_in);
      resolve(i, stale_.resolve(side(), ks_, cmds_in[i]));
    }
  if (!resolved.empty()) saw_server_time(stale_.waited_until_ms());  // a new template's wait moved the clock on
  std::optional<model::Keyspace> after_last;
  std::vector<Step> out;
  for (std::size_t i = 0; i < cmds_in.size();) {
    // A `RESTORE ... @dump:<src>` that starts a run (chunk_end ends the run before one) takes its
    // payload here, as run() would right before sending it: the runs before it are checked, so the
    // server and the model are where the payload's DUMP reads them; the run then holds it.
    if (const Argv& a = resolved.empty() ? cmds_in[i] : resolved[i]; !tx_ && detail::names_dump_ref(a, dump_ref))
      resolve(i, resolve_dump_ref(a));
    const std::vector<Argv>& cmds = resolved.empty() ? cmds_in : resolved;
    std::size_t end = i;
    // The run's first commands go out while chunk_end still decides where it ends: the server
    // runs them meanwhile. A part once kStreamAfter commands are decided, then each time as many
    // more are decided as went before (8, 16, 32 ...): each write wakes the server, about 19 us
    // of the client's time here (bench/RESULTS.md 9.13), so parts are few. (A run that ends up
    // with one command goes alone, by run(): kStreamAfter is at least 2.)
    std::optional<detail::RunSend> started;
    auto send_decided = [&](std::size_t j) {
      const std::size_t went = started ? started->size() : 0;
      if (j - i < kStreamAfter || j - i < 2 * went) return;
      if (!started) started.emplace();
      for (std::size_t k = i + started->size(); k < j; ++k) add_to_run(*started, cmds[k]);
      started->send(*c_);
      ++run_stats_.parts_early;
    };
    // The kit's sequence function, before anything of the run goes (a FUNCTION LOAD on the
    // read-back connection that fails must not leave the run's replies unread): loaded when an
    // FCALL is anywhere ahead (once per connection; run() loads it so too).
    if (std::any_of(cmds.begin() + static_cast<std::ptrdiff_t>(i), cmds.end(),
                    [](const Argv& a) { return !a.empty() && model::upper(a[0]) == "FCALL"; }))
      load_sequence_function();
    if (!tx_) {
      try {
        end = detail::chunk_end(cmds, i, ks_, d_, opt_, server_time_estimate(), counters_.on(), dump_ref,
                                std::max<std::size_t>(max_run, 1), compare_follows ? &after_last : nullptr, send_decided);
      } catch (...) {
        // What went out is read, so that the connection stays in step; sent() still lists it
        // (the server ran it, the model did not).
        if (started) try {
            (void)started->finish(*c_, listeners_);
          } catch (const std::exception&) {
          }
        throw;
      }
    }
    if (end <= i + 1) {
      ++run_stats_.alone;
      out.push_back(run(cmds[i]));
      ++i;
    } else {
      // A `RESTORE ... @dump:<src>` right after the run (chunk_end ends a run before one): its
      // DUMP goes as soon as the run's replies are in (detail::DumpAhead).
      const std::string dump_next = end < cmds.size() ? detail::dump_ref_source(cmds[end], dump_ref) : std::string();
      auto steps = run_chunk(std::vector<Argv>(cmds.begin() + static_cast<std::ptrdiff_t>(i),
                                               cmds.begin() + static_cast<std::ptrdiff_t>(end)),
                             stop_at_first, after_last ? &*after_last : nullptr, dump_next, started ? &*started : nullptr);
      out.insert(out.end(), std::make_move_iterator(steps.begin()), std::make_move_iterator(steps.end()));
      i = end;
    }
    if (stop_at_first && !out.empty() && !out.back().ok) break;
  }
  drop_dump_ahead();  // one a failing step left unused: the read-back connection in step again
  return out;
}

inline void Twin::add_to_run(detail::RunSend& run, const Argv& a) {
  if (run.size() == 0) {
    inflight_run_.clear();
    run_history_start_ = history_.size();
  }
  inflight_run_.push_back(a);
  run.add(*c_, listeners_, marker_seq_, detail::model_command(a));
  // The batch (the layout uses only the name and the arguments); an EXEC's is planned from the
  // server's replies.
  if (run.layouts().back() == detail::Layout::single) detail::plan_batch(run.commands().back(), std::nullopt);
}

inline std::vector<Step> Twin::run_chunk(const std::vector<Argv>& cmds, bool stop_at_first, const model::Keyspace* compare_plan,
                                        const std::string& dump_next, detail::RunSend* started) {
  using detail::Layout;
  detail::RunSend own;
  detail::RunSend& run = started ? *started : own;
  for (std::size_t k = run.size(); k < cmds.size(); ++k) add_to_run(run, cmds[k]);
  const std::vector<detail::Sent> sents = run.finish(*c_, listeners_);
  std::vector<detail::ModelCommand>& mcs = run.commands();
  const std::vector<Layout>& ls = run.layouts();  // a MULTI opens a transaction, EXEC / DISCARD closes it
  for (const auto& sent : sents) {
    saw_server_time(sent.after_ms);
    saw_reply(sent.reply);
  }
  // The server reads for the compare_all() that follows while the client checks the run.
  // Only a speed-up: when it cannot go (the read-back connection cannot be opened, say), the
  // steps are checked as ever and compare_all() sends its own.
  if (compare_plan && !sents.empty()) try {
      compare_ahead_ = send_compare_all(*compare_plan, sents.back().after_ms);
    } catch (const std::exception&) {
      compare_ahead_.reset();
    }
  std::size_t n = mcs.size();
  ++run_stats_.runs;
  run_stats_.run_commands += n;

  // The transaction before each step (txs[k]) and after the last, as the server's replies make
  // it: what it queued or refused, an EXEC's batch. Steps after a MULTI the server refused were
  // laid out as queued while the server ran them: only the MULTI's is checked (it fails; n ends
  // there), the rest are recorded after the checks (below).
  std::vector<std::optional<detail::Transaction>> txs{tx_};
  for (std::size_t k = 0; k < n; ++k) {
    std::optional<detail::Transaction> t = txs.back();
    if (ls[k] == Layout::queued) {
      detail::queue_into(*t, d_, mcs[k].argv, sents[k].reply);
    } else {
      if (ls[k] == Layout::close) detail::plan_batch(mcs[k], t);
      detail::follow_transaction(t, mcs[k].tx, sents[k].opened_transaction, sents[k].before_ms);
    }
    txs.push_back(std::move(t));
    if (ls[k] == Layout::multi && !sents[k].opened_transaction) {
      n = k + 1;
      break;
    }
  }
  // The DUMP of the `RESTORE ... @dump:` after the run, read while the client checks the run
  // (resolve_dump_ref takes it when nothing went out since). Only a speed-up, as above.
  if (!dump_next.empty() && n == mcs.size() && !txs.back()) try {
      dump_ahead_ = detail::send_dump(side(), *c_, dump_next);
    } catch (const std::exception&) {
      dump_ahead_.reset();
    }

  struct Choice {
    std::size_t k;    ///< the step
    ModelSide before;  ///< the model side before it
    int64_t at;       ///< the millisecond chosen
  };
  std::vector<Choice> choices;
  std::vector<Step> steps;
  // Checks the steps from k0 on (k0 from the millisecond `from_ms`); the index of the first that
  // is not ok, or n.
  auto check_from = [&](std::size_t k0, int64_t from_ms) {
    steps.resize(k0);
    tx_ = txs[k0];
    std::size_t first_bad = n;
    for (std::size_t k = k0; k < n; ++k) {
      const bool last = k + 1 == n;
      Step s;
      if (ls[k] == Layout::queued) {
        s = queued(mcs[k].argv, sents[k].reply);
      } else {
        std::optional<ModelSide> kept;
        if (!last && sents[k].after_ms > sents[k].before_ms) kept = model_side();
        const auto before = detail::deadlines_before(ks_, mcs[k]);
        s = check(mcs[k], sents[k], CheckMode{last, k == k0 ? from_ms : 0});
        // A choice point: the step changed a deadline, or one it set would differ at a later
        // millisecond of its window (detail::without_moving).
        if (kept && s.ok && s.unmodelled.empty() &&
            (before != detail::deadlines_before(ks_, mcs[k]) ||
             detail::without_moving(before, kept->ks, d_, mcs[k], sents[k].after_ms, ks_) != before)) {
          choices.push_back({k, std::move(*kept), s.model_at_ms});
          ++run_stats_.choice_points;
        }
      }
      tx_ = txs[k + 1];
      const bool ok = s.ok;
      steps.push_back(std::move(s));
      if (!ok && first_bad == n) {
        first_bad = k;
        if (stop_at_first) break;
      }
    }
    return first_bad;
  };
  std::size_t bad = check_from(0, 0);
  if (!choices.empty()) {
    auto agrees = [&] {
      if (bad < n) return false;
      const auto keys = detail::keys_named(mcs, choices.front().k);
      // Other databases too: a key copied or moved there keeps the deadline the choice set.
      return compare_state([&keys](const std::string& key) { return keys.count(key) > 0; }).empty() &&
             (!detail::names_other_db(mcs, choices.front().k) || compare_other_dbs().empty());
    };
    if (!agrees()) {
      const std::vector<Choice> first = choices;
      bool found = false;
      for (std::size_t p = first.size(); p-- > 0 && !found;) {
        for (int64_t at = first[p].at + 1; at <= sents[first[p].k].after_ms && !found; ++at) {
          restore(first[p].before);
          choices.assign(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(p));
          bad = check_from(first[p].k, at);
          ++run_stats_.tried;
          found = steps[first[p].k].ok && steps[first[p].k].model_at_ms >= at && agrees();
          if (found) ++run_stats_.changed;
        }
      }
      if (!found) {  // the first choices stand: the steps say what differs, as run() would
        restore(first.front().before);
        choices.clear();
        bad = check_from(first.front().k, 0);
      }
    }
  }
  // After a MULTI the server refused, it ran the commands laid out as queued as ordinary ones,
  // with no TIME window of their own: each is recorded as a command outside the model (as run()
  // records one), its keys re-read from the server as the run left it, the counters re-based, so
  // that the steps stay one per command and the model follows the server.
  if (n < mcs.size() && steps.size() == n) {
    for (std::size_t k = n; k < mcs.size(); ++k) {
      Step s;
      s.argv = mcs[k].argv;
      s.server = s.model = sents[k].reply;
      s.before_ms = s.after_ms = sents[n - 1].before_ms;
      s.unmodelled = "sent after a MULTI the server refused (laid out as queued: no TIME window of its own)";
      s.protocol = c_->protocol();
      adopt({mcs[k].argv}, s);
      count(s.argv, false);
      history_.push_back(s);
      steps.push_back(std::move(s));
    }
  }
  inflight_run_.clear();
  tx_ = txs.back();  // the server's, whichever step checking stopped at
  if (stop_at_first && bad < n) steps.resize(bad + 1);
  return steps;
}

}  // namespace expirykit::state
