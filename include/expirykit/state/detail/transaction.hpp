// expirykit/state/detail/transaction.hpp (internal to state::Twin): a MULTI block as state::Twin (state/twin.hpp) keeps it, and the
// model's replies to what happens in one: a command queued ("QUEUED", or refused when queued,
// which aborts the transaction), and MULTI / EXEC / DISCARD themselves.
//
// A command refused when queued is one failing the command table's arity or an unknown command
// (model/batch.hpp: "ERR wrong number of arguments for '<cmd>' command", then EXEC answers
// EXECABORT; a nested MULTI is refused and the transaction goes on; live Valkey 9.1.2 and Redis
// 8.0.6). A queued command outside the model makes EXEC unmodelled (the twin adopts its outcome
// from the server: state/adopt.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state::detail {

/// A MULTI the twin sent: the server time then (Unix ms: the transaction's window opens there)
/// and what the server queued.
struct Transaction {
  int64_t before_ms = 0;
  std::vector<Argv> queued;  ///< every command the server queued (with `unmodelled`, some outside the model)
  bool aborted = false;     ///< a command was refused when queued: EXEC answers EXECABORT
  bool unmodelled = false;  ///< a queued command is outside the model: EXEC is adopted
};

/// The model's side of `s.argv` sent inside `tx` (whose server reply is `s.server`): sets s.model
/// (or s.unmodelled, copying the server's reply) and updates `tx`. Returns whether the command
/// is modelled.
inline bool queue_in(Transaction& tx, const model::Dialect& d, Step& s) {
  const Argv& argv = s.argv;
  const bool known = !argv.empty() && model::is_modelled(argv[0], d);
  if (!argv.empty() && model::upper(argv[0]) == "MULTI") {  // refused, the transaction goes on
    s.model = Reply::error("ERR MULTI calls can not be nested");
  } else if (known && !model::arity_ok(argv)) {
    s.model = Reply::error(d.arity_error(argv[0]));
    tx.aborted = true;
  } else if (known) {
    s.model = Reply::status("QUEUED");
    tx.queued.push_back(argv);
  } else {
    s.unmodelled = "queued command outside the model";
    s.model = s.server;
    if (s.server == Reply::status("QUEUED")) {
      tx.unmodelled = true;
      tx.queued.push_back(argv);  // not run by the model (the EXEC is adopted): its keys are re-read
    } else {
      tx.aborted = true;
    }
  }
  return known;
}

/// queue_in() for the transaction state alone: `argv` queued in `tx`, the server answering `server`.
inline void queue_into(Transaction& tx, const model::Dialect& d, const Argv& argv, const Reply& server) {
  Step s;
  s.argv = argv;
  s.server = server;
  queue_in(tx, d, s);
}

/// What a command does to the transaction state around it, as Twin::run() sees it.
struct TransactionControl {
  bool closes = false;      ///< this EXEC / DISCARD ends the twin's open transaction
  bool aborted = false;     ///< the EXEC's transaction had a command refused when queued
  bool unmodelled = false;  ///< the EXEC's transaction queued a command outside the model
};

/// The model's reply to MULTI, DISCARD or EXEC (`upper_name`) when it is not the EXEC of a
/// modelled transaction; std::nullopt for any other command and for that EXEC (the batch's
/// replies answer it). A MULTI reaching here is outside any transaction (inside one it is queued:
/// queue_in), so it opens one. Throws model::Unmodelled for the EXEC of a transaction with an
/// unmodelled command.
inline std::optional<Reply> control_reply(const std::string& upper_name, const TransactionControl& t) {
  if (upper_name == "MULTI") return Reply::ok();
  if (upper_name == "DISCARD") return t.closes ? Reply::ok() : Reply::error("ERR DISCARD without MULTI");
  if (upper_name == "EXEC" && !t.closes) return Reply::error("ERR EXEC without MULTI");
  if (upper_name == "EXEC" && t.aborted) return Reply::error("EXECABORT Transaction discarded because of previous errors.");
  if (upper_name == "EXEC" && t.unmodelled) throw model::Unmodelled("a transaction with an unmodelled command");
  return std::nullopt;
}

/// After the server answered a command of the twin (`t` its place in a transaction): a MULTI it
/// accepted (`opened`, at server time `before_ms`, Unix ms) opens `tx`; the EXEC / DISCARD that
/// closes `tx` (t.closes) ends it.
inline void follow_transaction(std::optional<Transaction>& tx, const TransactionControl& t, bool opened,
                               int64_t before_ms) {
  if (opened) tx = Transaction{before_ms, {}, false, false};
  if (t.closes) tx.reset();
}

}  // namespace expirykit::state::detail
