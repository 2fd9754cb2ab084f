// expirykit/state/keyspace_diff.hpp: the whole keyspace of a live server against the model's, as
// state::Twin::compare_state() reports it (state/twin.hpp), and the listpack limits the model's
// encoding predictions need.
//
//   auto diffs = state::keyspace_diff(side, ks, server::time_ms(side("TIME")), {});
//
// Every key either side holds is compared: TYPE, the key's absolute expiry (PEXPIRETIME, Unix
// ms, -1 for none: within the tolerance, as the fields'), a string's GET, a hash's HLEN (stored fields, expired included), HGETALL (live fields, as a set: model/canonical.hpp),
// each field's HPEXPIRETIME (-2 for a field past its deadline, within the tolerance) and OBJECT
// ENCODING (listpack or hashtable, when the limits were read); other databases with
// keyspace_diff_db (state::Twin compares every database either side holds keys in). Only
// read-only commands that never delete a field lazily are sent (a key past its key TTL goes on
// any read of a primary; the model no longer holds it then), over the connection given (the
// twin's read-back connection).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/model/canonical.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/state/replies.hpp>

namespace expirykit::state {

/// A reply on one line: arrays as [a, b, ...].
inline std::string oneline(const resp::Reply& r) { return r.oneline(); }

struct KeyspaceDiffOptions {
  int64_t time_tolerance_ms = 0;  ///< allowed difference (ms) of PEXPIRETIME / HPEXPIRETIME read back
  bool check_encoding = true;     ///< compare OBJECT ENCODING with the model's prediction
  const std::set<std::string>* hlen_unknown = nullptr;  ///< keys whose HLEN is not compared
  std::function<bool(const std::string&)> owns;         ///< only these keys (empty: all)
};

/// The differences between the server behind `side` and the model `ks` at server time `now_ms`
/// (Unix ms): one line per difference ("h: HLEN server 3, model 2"); empty means equal.
/// `then`: a command sent last in the reads' pipeline (keyspace_diff_db's SELECT 0), its reply
/// not looked at; `before`: one sent first (its SELECT <db>), whose reply must be OK (else
/// std::runtime_error).
inline std::vector<std::string> keyspace_diff(resp::Client& side, const model::Keyspace& ks, int64_t now_ms,
                                              const KeyspaceDiffOptions& o, const resp::Reply* keys_read = nullptr,
                                              const Argv* then = nullptr, const Argv* before = nullptr);

/// keyspace_diff() at the server's time now: TIME and KEYS * read in one round trip (the twin's
/// compare_state: two round trips in all). Throws what resp::Client throws.
inline std::vector<std::string> keyspace_diff(resp::Client& side, const model::Keyspace& ks, const KeyspaceDiffOptions& o) {
  const std::vector<resp::Reply> r = side.pipeline({{"TIME"}, {"KEYS", "*"}});
  return keyspace_diff(side, ks, server::time_ms(r[0]), o, &r[1]);
}

namespace detail {
/// Throws std::runtime_error naming `side` and `cmd` (a SELECT of the reads) unless `reply` is OK.
inline void require_ok(const resp::Client& side, const Argv& cmd, const resp::Reply& reply) {
  if (!(reply == resp::Reply::ok()))
    throw std::runtime_error(side.address() + ": " + resp::cli_line(cmd) + " refused: " + reply.to_string());
}

/// Where the replies to one key's reads are (indexes into the pipeline's replies), planned from
/// the model's entry `e` of the key (nullptr: the model has no such key, TYPE only). What is read
/// depends on the entry only (its type and stored fields), not on the time it is judged at.
struct KeyReads {
  const model::Entry* e = nullptr;
  std::size_t type = 0, pexpiretime = 0, get = 0, hlen = 0, getall = 0, enc = 0, times = 0;
  Argv times_argv;
};

/// Appends the reads of `key` (model entry `e`) to `reads`.
inline KeyReads plan_key(std::vector<Argv>& reads, const std::string& key, const model::Entry* e, bool check_encoding) {
  auto read = [&reads](Argv a) {
    reads.push_back(std::move(a));
    return reads.size() - 1;
  };
  KeyReads p;
  p.e = e;
  p.type = read({"TYPE", key});
  if (!e) return p;
  // The key's deadline itself, not its PTTL: a pipelined run's choice point whose only trace is a
  // key TTL (SET EX in a transaction) is told apart by it (state/detail/run_all.hpp).
  p.pexpiretime = read({"PEXPIRETIME", key});
  if (e->is_string()) {
    p.get = read({"GET", key});
    return p;
  }
  const model::Hash& h = e->hash();
  p.hlen = read({"HLEN", key});
  p.times_argv = {"HPEXPIRETIME", key, "FIELDS", std::to_string(h.fields.size())};
  for (const auto& kv : h.fields) p.times_argv.push_back(kv.first);
  p.getall = read({"HGETALL", key});
  if (check_encoding) p.enc = read({"OBJECT", "ENCODING", key});
  if (!h.fields.empty()) p.times = read(p.times_argv);
  return p;
}

/// The differences of `key` (planned as `p`, replies in `r`) at server time `now` (Unix ms),
/// appended to `diffs`.
inline void judge_key(std::vector<std::string>& diffs, const std::string& key, const KeyReads& p,
                      const std::vector<Reply>& r, int64_t now, const KeyspaceDiffOptions& o) {
  const std::string shown = resp::cli_quote(key);  // a binary key stays on one line
  const model::Entry* e = p.e;
  const Reply& type = r[p.type];
  const std::string mt = e ? e->type_name() : "none";
  if (!type.is_status() || type.str() != mt) {
    diffs.push_back(shown + ": TYPE server " + type.to_string() + ", model " + mt);
    return;
  }
  if (!e) return;
  const Reply& at = r[p.pexpiretime];
  const long long want = e->expire_ms ? *e->expire_ms : -1;
  const bool key_ttl_ok =
      at.is_integer() && (e->expire_ms ? at.as_integer() >= 0 && std::llabs(at.as_integer() - want) <= o.time_tolerance_ms
                                       : at.as_integer() == -1);
  if (!key_ttl_ok)
    diffs.push_back(shown + ": key PEXPIRETIME server " + at.to_string() + ", model " + std::to_string(want));
  if (e->is_string()) {
    const Reply& v = r[p.get];
    if (v != Reply::string(e->string()))
      diffs.push_back(shown + ": GET server " + v.to_string() + ", model " + resp::quoted(e->string()));
    return;
  }
  const model::Hash& h = e->hash();
  std::vector<Reply> pairs;
  std::vector<long long> expected;
  for (const auto& [f, fld] : h.fields) {
    if (!fld.expired(now)) {
      pairs.push_back(Reply::string(f));
      pairs.push_back(Reply::string(fld.value));
    }
    expected.push_back(fld.expired(now) ? -2 : fld.expire_ms ? *fld.expire_ms : -1);
  }
  const Reply& len = r[p.hlen];
  if (!(o.hlen_unknown && o.hlen_unknown->count(key)) &&
      len != Reply::integer(static_cast<long long>(h.stored_count())))
    diffs.push_back(shown + ": HLEN server " + len.to_string() + ", model " + std::to_string(h.stored_count()));
  const Argv getall{"HGETALL", key};
  const Reply& all_fields = r[p.getall];
  if (!model::same_reply(getall, Reply::array(pairs), all_fields))
    diffs.push_back(shown + ": HGETALL server " + oneline(all_fields) + ", model " + oneline(Reply::array(pairs)));
  if (o.check_encoding) {
    const Reply& enc = r[p.enc];
    if (!enc.is_string() || enc.str() != model::to_string(h.encoding))
      diffs.push_back(shown + ": OBJECT ENCODING server " + enc.to_string() + ", model " + model::to_string(h.encoding));
  }
  if (!h.fields.empty()) {
    const Reply& t = r[p.times];
    if (!replies_match(p.times_argv, Reply::ints(expected), t, o.time_tolerance_ms))
      diffs.push_back(shown + ": " + resp::cli_line(p.times_argv) + " server " + oneline(t) + ", model " +
                      oneline(Reply::ints(expected)));
  }
}

/// The keys compared at `now`: every key the model holds then and every key in `keys_read` (the
/// server's KEYS * reply), those `o.owns` takes.
inline std::set<std::string> keys_compared(const model::Keyspace& ks, int64_t now, const KeyspaceDiffOptions& o,
                                           const resp::Reply& keys_read) {
  std::set<std::string> keys;
  for (const auto& k : ks.key_names())
    if (ks.peek(k, now) && (!o.owns || o.owns(k))) keys.insert(k);
  if (keys_read.is_array())
    for (const auto& k : keys_read.elements())
      if (!o.owns || o.owns(k.str())) keys.insert(k.str());
  return keys;
}
}  // namespace detail

/// (`keys_read`: the server's reply to KEYS *, when read already.)
inline std::vector<std::string> keyspace_diff(resp::Client& side, const model::Keyspace& ks, int64_t now_ms,
                                              const KeyspaceDiffOptions& o, const resp::Reply* keys_read,
                                              const Argv* then, const Argv* before) {
  const resp::Reply all = keys_read ? *keys_read : side("KEYS", "*");
  const std::set<std::string> keys = detail::keys_compared(ks, now_ms, o, all);
  // Every read of every key in one pipeline, planned from the model's side of each key (a read
  // the server's type makes pointless is sent anyway and its reply not looked at): two round
  // trips in all (KEYS, then this), whatever the number of keys.
  std::vector<Argv> reads;
  if (before) reads.push_back(*before);  // the plans' indexes count it
  std::vector<detail::KeyReads> plans;
  for (const auto& key : keys) plans.push_back(detail::plan_key(reads, key, ks.peek(key, now_ms), o.check_encoding));
  if (then) reads.push_back(*then);
  // (With `before` and no key: nothing to read, and `before`, `then` would undo each other.)
  const std::vector<Reply> r = reads.empty() || (before && keys.empty()) ? std::vector<Reply>{} : side.pipeline(reads);
  if (before && !r.empty()) detail::require_ok(side, *before, r[0]);
  std::vector<std::string> diffs;
  std::size_t i = 0;
  for (const auto& key : keys) detail::judge_key(diffs, key, plans[i++], r, now_ms, o);
  return diffs;
}

namespace detail {
/// Whether every key of `ks` at `estimate_ms` (Unix ms) that `o` takes keeps its key TTL past
/// estimate + `margin_ms`: then its reads may be planned before the TIME is read.
inline bool reads_can_go_early(const model::Keyspace& ks, int64_t estimate_ms, int64_t margin_ms, const KeyspaceDiffOptions& o) {
  for (const auto& k : ks.key_names()) {
    const model::Entry* e = ks.peek(k, estimate_ms);
    if (!e || (o.owns && !o.owns(k))) continue;
    if (e->expire_ms && *e->expire_ms <= estimate_ms + margin_ms) return false;
  }
  return true;
}
}  // namespace detail

/// keyspace_diff_pipelined()'s pipeline sent (keyspace_diff_send), its replies not yet read.
struct DiffAhead {
  resp::Client* side = nullptr;  ///< the connection it went on
  std::vector<Argv> sent;        ///< the caller's commands, TIME, KEYS * and the planned reads
  std::size_t first = 0;         ///< how many of `sent` are the caller's own (their replies come first)
  int db = 0;                    ///< the database read (not 0: SELECT <db> after the caller's, SELECT 0 last)
  bool early = false;            ///< the reads were planned (else TIME and KEYS * only)
  int64_t estimate_ms = 0, margin_ms = 0;
  struct Planned {
    detail::KeyReads reads;        ///< where its replies are (no entry: the judged model's is taken then)
    std::size_t from = 0, to = 0;  ///< its reads in `sent`
  };
  std::map<std::string, Planned> planned;
};

/// Sends keyspace_diff_pipelined()'s pipeline on `side` (`first`, TIME, KEYS * and, when every
/// key of `plan` keeps its key TTL past `estimate_ms` + `margin_ms`, the reads of each key of
/// `plan` at `estimate_ms`) without reading it; keyspace_diff_finish() reads and judges it, maybe
/// against another model than `plan`. `db` > 0: database `db` is read (SELECT <db> after
/// `first`, SELECT 0 last; `plan` and the model judged hold its keys in database 0's place, as
/// model::Keyspace::swap_db makes them). Throws what resp::Client throws.
inline DiffAhead keyspace_diff_send(resp::Client& side, const model::Keyspace& plan, int64_t estimate_ms,
                                    const KeyspaceDiffOptions& o, std::vector<Argv> first, int64_t margin_ms = 2000,
                                    int db = 0) {
  DiffAhead a;
  a.side = &side;
  a.first = first.size();
  a.db = db;
  a.estimate_ms = estimate_ms;
  a.margin_ms = margin_ms;
  if (db) first.push_back({"SELECT", std::to_string(db)});
  first.push_back({"TIME"});
  first.push_back({"KEYS", "*"});
  a.early = detail::reads_can_go_early(plan, estimate_ms, margin_ms, o);
  if (a.early)
    for (const auto& k : plan.key_names())
      if (const model::Entry* e = plan.peek(k, estimate_ms); e && (!o.owns || o.owns(k))) {
        DiffAhead::Planned p;
        p.from = first.size();
        p.reads = detail::plan_key(first, k, e, o.check_encoding);
        p.reads.e = nullptr;  // `plan` may be gone by keyspace_diff_finish (run_all's speculation is)
        p.to = first.size();
        a.planned.emplace(k, std::move(p));
      }
  if (db) first.push_back({"SELECT", "0"});
  for (const auto& c : first) side.append(c);
  side.send();
  a.sent = std::move(first);
  return a;
}

/// The replies to what `a` sent, read in order. Throws what resp::Client throws.
inline std::vector<Reply> keyspace_diff_read(const DiffAhead& a) {
  std::vector<Reply> r;
  r.reserve(a.sent.size());
  for (std::size_t i = 0; i < a.sent.size(); ++i) r.push_back(a.side->read());
  return r;
}

/// keyspace_diff() of the server as `a`'s pipeline read it (its replies `r`: keyspace_diff_read)
/// against the model `ks`, at the server's TIME in it. A key planned from another entry than the
/// one `ks` holds at that TIME (other reads: another type, other stored fields) is read again
/// with the keys KEYS * lists that `a` did not plan, in a second round trip; so are all of them
/// when `ks` holds a key TTL due within the margin (the reads then wait for the TIME, as in
/// keyspace_diff()). The replies to the caller's commands go to `first_replies`. Throws what
/// resp::Client throws, std::runtime_error when the server refused `a`'s SELECT.
inline std::vector<std::string> keyspace_diff_finish(const DiffAhead& a, const std::vector<Reply>& r,
                                                     const model::Keyspace& ks, const KeyspaceDiffOptions& o,
                                                     std::vector<Reply>& first_replies) {
  first_replies.assign(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(a.first));
  const std::size_t at = a.first + (a.db ? 1 : 0);  // TIME
  const Argv select{"SELECT", std::to_string(a.db)}, back{"SELECT", "0"};
  // (A refused SELECT: the planned reads went to database 0, where a TYPE may have deleted a key
  // past its key TTL lazily; the compare fails here anyway.)
  if (a.db) detail::require_ok(*a.side, select, r[a.first]);
  const int64_t now = server::time_ms(r[at]);
  if (!a.early || !detail::reads_can_go_early(ks, a.estimate_ms, a.margin_ms, o))
    return keyspace_diff(*a.side, ks, now, o, &r[at + 1], a.db ? &back : nullptr, a.db ? &select : nullptr);
  // The model's keys at `now` are the planned ones unless `now` passed estimate + margin (a
  // stalled machine): a planned key the model holds no more at `now` is judged as absent there
  // (its TYPE reply, read before anything else of it, says whether the server still holds it).
  // The server's other keys are read in a second round trip.
  std::vector<std::string> diffs;
  std::vector<Argv> more, scratch;
  if (a.db) more.push_back(select);  // the plans' indexes count it
  std::map<std::string, detail::KeyReads> extra;
  std::map<std::string, detail::KeyReads> from_first;
  const std::set<std::string> keys = detail::keys_compared(ks, now, o, r[at + 1]);
  for (const auto& key : keys) {
    const model::Entry* e = ks.peek(key, now);
    if (const auto p = a.planned.find(key); p != a.planned.end()) {
      scratch.clear();
      if (e) (void)detail::plan_key(scratch, key, e, o.check_encoding);
      // Read as `ks` would plan them (no entry: its TYPE alone is judged, read first of all).
      if (!e || std::equal(scratch.begin(), scratch.end(), a.sent.begin() + static_cast<std::ptrdiff_t>(p->second.from),
                           a.sent.begin() + static_cast<std::ptrdiff_t>(p->second.to))) {
        detail::KeyReads q = p->second.reads;
        q.e = e;
        from_first.emplace(key, q);
        continue;
      }
    }
    extra.emplace(key, detail::plan_key(more, key, e, o.check_encoding));
  }
  if (a.db) more.push_back(back);
  const std::vector<Reply> r2 = extra.empty() ? std::vector<Reply>{} : a.side->pipeline(more);
  if (a.db && !r2.empty()) detail::require_ok(*a.side, select, r2[0]);
  for (const auto& key : keys) {
    if (const auto p = from_first.find(key); p != from_first.end())
      detail::judge_key(diffs, key, p->second, r, now, o);
    else
      detail::judge_key(diffs, key, extra.at(key), r2, now, o);
  }
  return diffs;
}

/// keyspace_diff() in one round trip when it can: `first` (the caller's own commands), TIME,
/// KEYS * and the reads of every key the model holds at `estimate_ms` in one pipeline over
/// `side`, judged at the TIME read. `estimate_ms` is a server time no later than the server's now
/// (Unix ms; Twin::server_time_estimate). When a key of the model has its key TTL within
/// `margin_ms` after the estimate (its reads could meet it expired: TYPE and PEXPIRETIME would delete it
/// lazily), the reads wait for the TIME as in keyspace_diff(); keys KEYS * lists that the model
/// lacks are read in a second round trip. A planned key the model holds no more at the TIME read
/// (the server's clock ran past estimate + margin) is judged as absent from the model. The
/// replies to `first` go to `first_replies`. Throws what resp::Client throws.
inline std::vector<std::string> keyspace_diff_pipelined(resp::Client& side, const model::Keyspace& ks,
                                                        int64_t estimate_ms, const KeyspaceDiffOptions& o,
                                                        std::vector<Argv> first, std::vector<Reply>& first_replies,
                                                        int64_t margin_ms = 2000) {
  const DiffAhead a = keyspace_diff_send(side, ks, estimate_ms, o, std::move(first), margin_ms);
  return keyspace_diff_finish(a, keyspace_diff_read(a), ks, o, first_replies);
}

/// The databases INFO keyspace (`keyspace_info`, its text) lists ("db<N>:keys=..."), database 0
/// included: those that hold a key.
inline std::set<int> dbs_listed(std::string_view keyspace_info) {
  std::set<int> out;
  while (!keyspace_info.empty()) {
    const auto nl = keyspace_info.find('\n');
    const std::string_view line = keyspace_info.substr(0, nl);
    keyspace_info = nl == std::string_view::npos ? std::string_view{} : keyspace_info.substr(nl + 1);
    if (line.rfind("db", 0) != 0) continue;
    const auto colon = line.find(':');
    int n = 0;
    bool digits = colon != std::string_view::npos && colon > 2;
    for (std::size_t i = 2; digits && i < colon; ++i) {
      if (line[i] < '0' || line[i] > '9') digits = false;
      else n = n * 10 + (line[i] - '0');
    }
    if (digits) out.insert(n);
  }
  return out;
}

/// The databases other than 0 to compare: those the model holds keys in (MOVE, COPY ... DB,
/// SWAPDB put them there) and those INFO keyspace (`keyspace_info`, its text) lists, ascending.
inline std::set<int> other_dbs_to_compare(const model::Keyspace& ks, std::string_view keyspace_info) {
  std::set<int> out = dbs_listed(keyspace_info);
  out.erase(0);
  for (const auto& [n, m] : ks.other_dbs())
    if (!m.empty()) out.insert(n);
  return out;
}

/// keyspace_diff() of database `db` (> 0) against the model's database `db`; each line starts
/// "db<N> ". HLEN is compared for every key (o.hlen_unknown names db 0's). Without
/// `estimate_ms`, in two round trips: SELECT `db`, TIME and KEYS * on `side`, then the reads and
/// SELECT 0. With it (a server time no later than the server's now, Unix ms:
/// Twin::server_time_estimate), in one when it can, as keyspace_diff_pipelined(): SELECT `db`,
/// TIME, KEYS *, the reads of the keys the model's database `db` holds at the estimate, SELECT 0.
/// Throws what resp::Client throws (std::runtime_error when the server refuses the SELECT).
inline std::vector<std::string> keyspace_diff_db(resp::Client& side, const model::Keyspace& ks, int db,
                                                 KeyspaceDiffOptions o, std::optional<int64_t> estimate_ms = std::nullopt) {
  model::Keyspace view = ks;  // database `db` in db 0's place
  view.swap_db(0, db);
  o.hlen_unknown = nullptr;
  if (estimate_ms) {
    const DiffAhead a = keyspace_diff_send(side, view, *estimate_ms, o, {}, 2000, db);
    std::vector<Reply> none;
    auto out = keyspace_diff_finish(a, keyspace_diff_read(a), view, o, none);
    for (auto& line : out) line = "db" + std::to_string(db) + " " + line;
    return out;
  }
  const std::vector<resp::Reply> r = side.pipeline({{"SELECT", std::to_string(db)}, {"TIME"}, {"KEYS", "*"}});
  if (!(r[0] == resp::Reply::ok())) side("SELECT", "0");
  detail::require_ok(side, {"SELECT", std::to_string(db)}, r[0]);
  const Argv back{"SELECT", "0"};
  auto out = keyspace_diff(side, view, server::time_ms(r[1]), o, &r[2], &back);
  for (auto& line : out) line = "db" + std::to_string(db) + " " + line;
  return out;
}

/// hash-max-listpack-entries and hash-max-listpack-value read with CONFIG GET into the model's
/// limits (model/keyspace.hpp), which decide its listpack / hashtable predictions. False (limits
/// untouched) when the server refuses CONFIG GET or answers otherwise: encoding checks stay off.
inline bool read_listpack_limits(resp::Client& c, model::Keyspace& ks) {
  try {
    const Reply e = c("CONFIG", "GET", "hash-max-listpack-entries");
    const Reply v = c("CONFIG", "GET", "hash-max-listpack-value");
    if (e.is_array() && e.size() == 2 && v.is_array() && v.size() == 2) {
      ks.limits().entries = std::stoull(e[1].str());
      ks.limits().value = std::stoull(v[1].str());
      return true;
    }
  } catch (const std::exception&) {
  }
  return false;
}

}  // namespace expirykit::state
