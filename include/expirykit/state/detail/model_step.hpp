// expirykit/state/detail/model_step.hpp (internal to state::Twin): what the model executes for a
// command of state::Twin::run() (state/twin.hpp): the command itself, the queued commands of the
// transaction its EXEC closes, or the commands packed in the kit's sequence script (ModelCommand,
// plan_batch); and the command as the model runs it at one millisecond: its reply, the keyspace
// notifications it emits (model/effects.hpp) and the CLIENT TRACKING invalidations they send
// (model/tracking.hpp).
//
// A batch (the queued commands of an EXEC, the commands packed in the kit's sequence script:
// model/batch.hpp) runs command by command at the same millisecond (time is frozen in a
// transaction or a script: valkey-hfe.md §14, redis-hfe.md §6), its replies gathered in one
// array, and each command's invalidations judged on the key it changed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/detail/transaction.hpp>

namespace expirykit::state::detail {

/// What Twin::run() asks the model to run: the command, its upper-case name, what it executes
/// (one command, or `batch`) and where it stands in a transaction.
struct ModelCommand {
  Argv argv;
  std::string name;
  std::optional<std::vector<Argv>> batch;
  bool in_script = false;
  TransactionControl tx;
};

/// `argv` (its DUMP reference resolved: state/detail/dump_ref.hpp) with its upper-case name;
/// what it executes is planned by plan_batch().
inline ModelCommand model_command(Argv argv) {
  ModelCommand mc;
  mc.argv = std::move(argv);
  if (!mc.argv.empty()) mc.name = model::upper(mc.argv[0]);
  return mc;
}

/// Whether the command named `upper_name` ends a transaction (sent inside one, it is not queued).
inline bool ends_transaction(const std::string& upper_name) { return upper_name == "EXEC" || upper_name == "DISCARD"; }

/// What `mc` executes, given the twin's open transaction `tx`: the queued commands of the
/// transaction its EXEC closes (with whether one was refused or is unmodelled), the commands
/// packed in the kit's sequence script (EVAL / FCALL: model/batch.hpp, mc.in_script), or itself
/// (no batch).
inline void plan_batch(ModelCommand& mc, const std::optional<Transaction>& tx) {
  const std::string& u = mc.name;
  mc.tx.closes = ends_transaction(u) && tx;
  if (u == "EXEC" && tx) {
    mc.batch = tx->queued;
    mc.tx.aborted = tx->aborted;
    mc.tx.unmodelled = tx->unmodelled;
  } else if (u == "EVAL" || u == "FCALL") {
    mc.batch = model::sequence_eval_commands(mc.argv);
    mc.in_script = mc.batch.has_value();
  }
}

/// The entry the command's key names, for TrackingFacts::key_changed. An empty hash (only
/// valkey-copy-skips-expired-fields makes one) counts as missing: Valkey 9.1.2's HSETEX with a
/// past deadline deletes it (`del`) without invalidating it, as when it removes no stored field
/// (live 9.1.2).
inline std::optional<model::Entry> tracked_entry(const model::Keyspace& ks, const Argv& a) {
  const model::Entry* e = a.size() > 1 ? ks.raw(a[1]) : nullptr;
  if (e && e->is_hash() && e->hash().fields.empty()) e = nullptr;
  return e ? std::optional<model::Entry>(*e) : std::nullopt;
}

/// Runs `c` on `ks` under dialect `d` at `at_ms` (server clock, Unix ms): sets s.model,
/// s.model_events and (when `track`) s.model_invalidations, with `tm` advanced. Throws
/// model::Unmodelled for a command (or a batch holding one) outside the model.
inline void run_model(model::Keyspace& ks, const model::Dialect& d, const ModelCommand& c, int64_t at_ms, bool track,
                      model::TrackingModel& tm, Step& s) {
  s.model_invalidations.clear();
  if (c.batch && !(c.name == "EXEC" && (c.tx.aborted || c.tx.unmodelled))) {
    for (const auto& a : *c.batch)
      if (a.empty() || !model::is_modelled(a[0], d)) throw model::Unmodelled("batch with " + (a.empty() ? std::string("()") : a[0]));
    std::vector<Reply> replies;
    s.model_events.clear();
    for (const auto& a : *c.batch) {
      const auto before = track ? tracked_entry(ks, a) : std::nullopt;  // a copy: only when tracking asks
      Reply r = model::apply_batch(ks, d, {a}, at_ms, c.in_script)[0];
      auto ev = ks.take_events();
      if (track) {
        // A call refused for its arity (in a script: another text) registers nothing.
        const Reply as_seen = c.in_script && !model::arity_ok(a) ? Reply::error(d.arity_error(a[0])) : r;
        auto inv = tm.on_command(d, a, as_seen, ev, {true, before != tracked_entry(ks, a)});
        s.model_invalidations.insert(s.model_invalidations.end(), inv.begin(), inv.end());
      }
      s.model_events.insert(s.model_events.end(), ev.begin(), ev.end());
      replies.push_back(std::move(r));
    }
    s.model = Reply::array(std::move(replies));
    return;
  }
  const auto before = track ? tracked_entry(ks, c.argv) : std::nullopt;
  if (auto r = control_reply(c.name, c.tx)) s.model = std::move(*r);
  else if (c.batch) s.model = model::apply_batch(ks, d, *c.batch, at_ms, c.in_script);
  else s.model = model::apply(ks, d, c.argv, at_ms);
  s.model_events = ks.take_events();
  if (track) s.model_invalidations = tm.on_command(d, c.argv, s.model, s.model_events, {true, before != tracked_entry(ks, c.argv)});
}

}  // namespace expirykit::state::detail
