// expirykit/fault/session.hpp: what the fault proxy does to one client connection's two byte
// streams, without the sockets: requests paired with replies, hooks applied.
//
//   fault::Session s(hooks);
//   std::string up, down;
//   s.from_client(bytes_from_client, up);      // send `up` to the server
//   s.from_upstream(bytes_from_server, down);  // send `down` to the client
//
// Pairing (RESP2, redis.io/docs/latest/develop/reference/protocol-spec "Pipelining" and
// "Pub/Sub"): a server answers the requests of one connection in order, so replies are paired
// with requests first in, first out. Exceptions handled here:
//   * subscribed mode: once a SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE reply says the connection has
//     subscriptions, arrays whose first element is "message", "pmessage" or "smessage" are pushes
//     (keyspace notifications, CLIENT TRACKING invalidations sent with REDIRECT, PUBLISHed
//     messages), not replies; (un)subscribe commands get one reply per channel (UNSUBSCRIBE
//     without arguments: one per channel then subscribed, or one if none);
//   * MULTI ... EXEC: each queued command is answered QUEUED; EXEC's array carries the real
//     replies, which go through the reply hook element by element with their requests;
//   * a reply that arrives with no request pending is forwarded as is.
// Pass-through: after HELLO with a protocol other than 2 (RESP3 pushes and types), MONITOR,
// CLIENT REPLY (replies no longer one per request), SYNC / PSYNC (a replication stream), or bytes
// that are not RESP (an inline command), the session stops parsing: every later byte is
// forwarded unchanged in both directions and no hook runs (passthrough() says why). Replies to
// requests sent before that point are still paired and hooked.
//
// Hooks run on the thread that feeds the session (the proxy: one thread per connection); a hook
// that throws propagates out of from_client() / from_upstream() (the proxy then closes the
// connection). A Session is not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <expirykit/fault/detail/wire.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::fault {

/// What to send upstream instead of one client request.
struct Rewrite {
  /// Sent in this order in place of the request (at least one; an empty list sends the request
  /// unchanged).
  std::vector<resp::Argv> commands;
  /// Which command's reply the client gets; default: the last one.
  std::optional<std::size_t> answer;
  /// If set, builds the client's reply from the replies to every command (same order as
  /// `commands`); `answer` is then unused. The reply hook still runs on the result.
  std::function<resp::Reply(const std::vector<resp::Reply>&)> combine;
};

/// The three places a fault can act. Any of them may be empty.
struct Hooks {
  /// A request as the client sent it (argv[0] as typed: compare case-insensitively).
  /// std::nullopt: forward it unchanged.
  std::function<std::optional<Rewrite>(const resp::Argv& request)> request;
  /// The reply the client is about to get, with the request as the client sent it (before any
  /// rewrite); also called for each element of an EXEC reply. std::nullopt: unchanged.
  std::function<std::optional<resp::Reply>(const resp::Argv& request, const resp::Reply& reply)> reply;
  /// A pushed message on a subscribed connection (["message", channel, payload] or
  /// ["pmessage", pattern, channel, payload]). std::nullopt: forward unchanged; an empty vector:
  /// drop it; otherwise these messages are sent instead.
  std::function<std::optional<std::vector<resp::Reply>>(const resp::Reply& message)> push;
};

/// Makes the hooks of one connection (called once per accepted client connection, so hooks
/// can keep per-connection state; state shared between connections must be synchronised).
using HookFactory = std::function<Hooks()>;

class Session {
 public:
  explicit Session(Hooks hooks = {}) : hooks_(std::move(hooks)) {}

  /// Bytes the client sent; appends what to send to the server to `to_upstream`.
  void from_client(std::string_view bytes, std::string& to_upstream) {
    if (client_raw_) {
      to_upstream.append(bytes);
      return;
    }
    try {
      client_.feed(bytes);
      while (auto m = client_.next()) {
        on_request(std::move(*m), to_upstream);
        if (client_raw_) break;
      }
    } catch (const detail::ProtocolError& e) {
      client_goes_raw(std::string("client sent bytes that are not RESP (") + e.what() + ")", to_upstream);
    }
  }

  /// Bytes the server sent; appends what to send to the client to `to_client`.
  void from_upstream(std::string_view bytes, std::string& to_client) {
    if (upstream_raw_) {
      to_client.append(bytes);
      return;
    }
    try {
      upstream_.feed(bytes);
      for (;;) {
        if (!pending_.empty() && pending_.front().kind == Kind::raw_after) {
          pending_.pop_front();
          upstream_raw_ = true;
          to_client += upstream_.take_unparsed();
          return;
        }
        auto m = upstream_.next();
        if (!m) return;
        on_upstream(std::move(*m), to_client);
      }
    } catch (const detail::ProtocolError& e) {
      // A server does not send non-RESP bytes on a RESP2 connection; give up pairing.
      upstream_raw_ = client_raw_ = true;
      if (reason_.empty()) reason_ = std::string("server sent bytes that are not RESP2 (") + e.what() + ")";
      to_client += upstream_.take_unparsed();
    }
  }

  /// Non-empty once the session stopped parsing: why (e.g. "HELLO 3: RESP3").
  const std::string& passthrough() const { return reason_; }
  /// Requests whose replies have not all arrived yet.
  std::size_t pending() const { return pending_.size(); }

 private:
  enum class Kind { plain, queued, exec, subscribe, raw_after };
  /// One client request as forwarded.
  struct Exchange {
    resp::Argv request;
    std::size_t count = 1;   ///< upstream replies that belong to it
    std::size_t answer = 0;  ///< index of the reply the client gets
    std::function<resp::Reply(const std::vector<resp::Reply>&)> combine;
  };
  /// The commands queued after MULTI: their exchanges and how many of each were QUEUED.
  struct Txn {
    std::vector<Exchange> queued;
    std::vector<std::size_t> accepted;
  };
  struct Pending {
    Kind kind = Kind::plain;
    Exchange ex;
    std::shared_ptr<Txn> txn;
    std::size_t txn_index = 0;
    std::string sub_cmd;                  ///< SUBSCRIBE, PUNSUBSCRIBE, ...
    std::optional<std::size_t> sub_left;  ///< replies still due (unknown until the first)
    std::vector<detail::Message> got;
  };

  static bool one_of(const std::string& s, std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (s == n) return true;
    return false;
  }

  void client_goes_raw(const std::string& why, std::string& to_upstream) {
    if (reason_.empty()) reason_ = why;
    client_raw_ = true;
    to_upstream += client_.take_unparsed();
    Pending p;
    p.kind = Kind::raw_after;
    pending_.push_back(std::move(p));
  }

  void on_request(detail::Message m, std::string& to_upstream) {
    auto argv = detail::as_argv(m.value);
    if (!argv) {
      to_upstream += m.raw;
      client_goes_raw("client sent a request that is not an array of bulk strings", to_upstream);
      return;
    }
    const std::string name = detail::upper((*argv)[0]);
    const std::string sub = argv->size() > 1 ? detail::upper((*argv)[1]) : "";
    if ((name == "HELLO" && argv->size() > 1 && (*argv)[1] != "2") || name == "MONITOR" || name == "SYNC" ||
        name == "PSYNC" || (name == "CLIENT" && sub == "REPLY")) {
      to_upstream += m.raw;
      client_goes_raw(resp::cli_line(*argv) + ": the connection leaves plain RESP2 request/reply", to_upstream);
      return;
    }
    Pending p;
    if (!in_multi_ && one_of(name, {"SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"})) {
      p.kind = Kind::subscribe;
      p.sub_cmd = name;
      if (argv->size() > 1) p.sub_left = argv->size() - 1;
      to_upstream += m.raw;
      pending_.push_back(std::move(p));
      return;
    }
    Exchange ex;
    ex.request = *argv;
    std::optional<Rewrite> rw = hooks_.request ? hooks_.request(*argv) : std::nullopt;
    if (rw && !rw->commands.empty()) {
      for (const auto& c : rw->commands) detail::write_command(to_upstream, c);
      ex.count = rw->commands.size();
      ex.answer = rw->answer.value_or(ex.count - 1);
      if (ex.answer >= ex.count) ex.answer = ex.count - 1;
      ex.combine = std::move(rw->combine);
    } else {
      to_upstream += m.raw;
    }
    if (in_multi_ && name == "EXEC") {
      p.kind = Kind::exec;
      p.txn = std::move(txn_);
      in_multi_ = false;
    } else if (in_multi_ && name == "DISCARD") {
      txn_.reset();
      in_multi_ = false;
    } else if (in_multi_ && !one_of(name, {"MULTI", "WATCH", "RESET"})) {
      p.kind = Kind::queued;
      p.txn = txn_;
      p.txn_index = txn_->queued.size();
      txn_->queued.push_back(ex);
      txn_->accepted.push_back(0);
    } else if (name == "MULTI" && !in_multi_) {
      in_multi_ = true;
      txn_ = std::make_shared<Txn>();
    }
    if (name == "RESET") {
      in_multi_ = false;
      txn_.reset();
    }
    p.ex = std::move(ex);
    pending_.push_back(std::move(p));
  }

  bool is_push(const resp::Reply& r) const {
    if (!subscribed() || !r.is_array() || r.size() < 3 || !r[0].is_string()) return false;
    const std::string& k = r[0].str();
    return k == "message" || k == "pmessage" || k == "smessage";
  }
  bool subscribed() const { return !channels_.empty() || !patterns_.empty() || !shard_.empty(); }

  void on_upstream(detail::Message m, std::string& to_client) {
    if (is_push(m.value)) {
      auto out = hooks_.push ? hooks_.push(m.value) : std::nullopt;
      if (!out) to_client += m.raw;
      else
        for (const auto& r : *out) detail::write_reply(to_client, r);
      return;
    }
    if (pending_.empty()) {  // unsolicited (an error before the server closes the connection)
      to_client += m.raw;
      return;
    }
    Pending& p = pending_.front();
    switch (p.kind) {
      case Kind::subscribe: on_subscribe_reply(p, std::move(m), to_client); return;
      case Kind::exec: {
        on_exec_reply(p, m, to_client);
        pending_.pop_front();
        return;
      }
      case Kind::plain:
      case Kind::queued:
        p.got.push_back(std::move(m));
        if (p.got.size() < p.ex.count) return;
        if (p.kind == Kind::plain) {
          deliver(p.ex, p.got, to_client);
          if (detail::upper(p.ex.request[0]) == "RESET") channels_.clear(), patterns_.clear(), shard_.clear();
        } else {
          // QUEUED per command; the client sees the first refusal, else the answer's QUEUED.
          std::size_t ok = 0;
          const detail::Message* refusal = nullptr;
          for (const auto& g : p.got) {
            if (g.value.is_status() && g.value.str() == "QUEUED") ++ok;
            else if (!refusal) refusal = &g;
          }
          p.txn->accepted[p.txn_index] = ok;
          to_client += refusal ? refusal->raw : p.got[p.ex.answer].raw;
        }
        pending_.pop_front();
        return;
      case Kind::raw_after: return;  // handled before parsing
    }
  }

  /// The client's reply for one exchange from its upstream replies; std::nullopt when it is
  /// the answer's reply unchanged (forwarded byte for byte).
  std::optional<resp::Reply> produce(const Exchange& ex, const std::vector<resp::Reply>& replies) const {
    bool changed = false;
    resp::Reply value;
    if (ex.combine) {
      value = ex.combine(replies);
      changed = true;
    } else {
      value = replies[ex.answer];
    }
    if (hooks_.reply) {
      if (auto r = hooks_.reply(ex.request, value); r && !(*r == value)) {
        value = std::move(*r);
        changed = true;
      }
    }
    if (!changed) return std::nullopt;
    return value;
  }

  void deliver(const Exchange& ex, const std::vector<detail::Message>& got, std::string& to_client) const {
    std::vector<resp::Reply> values;
    values.reserve(got.size());
    for (const auto& g : got) values.push_back(g.value);
    if (auto r = produce(ex, values)) detail::write_reply(to_client, *r);
    else to_client += got[ex.answer].raw;
  }

  void on_exec_reply(const Pending& p, const detail::Message& m, std::string& to_client) const {
    const Txn* t = p.txn.get();
    std::size_t total = 0;
    bool whole = t != nullptr;
    if (t)
      for (std::size_t i = 0; i < t->queued.size(); ++i) {
        total += t->accepted[i];
        whole = whole && t->accepted[i] == t->queued[i].count;
      }
    // EXECABORT, a WATCHed key changed (nil), or commands the server refused: as is.
    if (!whole || !m.value.is_array() || m.value.size() != total) {
      to_client += m.raw;
      return;
    }
    std::vector<resp::Reply> out;
    bool changed = false;
    std::size_t at = 0;
    for (const auto& ex : t->queued) {
      std::vector<resp::Reply> slice(m.value.elements().begin() + static_cast<std::ptrdiff_t>(at),
                                     m.value.elements().begin() + static_cast<std::ptrdiff_t>(at + ex.count));
      at += ex.count;
      if (auto r = produce(ex, slice)) {
        out.push_back(std::move(*r));
        changed = true;
      } else {
        out.push_back(slice[ex.answer]);
      }
      if (ex.count != 1) changed = true;
    }
    if (!changed) to_client += m.raw;
    else detail::write_reply(to_client, resp::Reply::array(std::move(out)));
  }

  void on_subscribe_reply(Pending& p, detail::Message m, std::string& to_client) {
    const resp::Reply& v = m.value;
    if (!v.is_array() || v.size() != 3 || !v[0].is_string()) {  // an error: one reply only
      to_client += m.raw;
      pending_.pop_front();
      return;
    }
    const std::string& kind = v[0].str();
    std::set<std::string>* set = one_of(kind, {"psubscribe", "punsubscribe"})   ? &patterns_
                                 : one_of(kind, {"ssubscribe", "sunsubscribe"}) ? &shard_
                                                                                : &channels_;
    if (!p.sub_left) {  // UNSUBSCRIBE with no arguments: one reply per subscription, at least one
      std::size_t n = set->size();
      p.sub_left = n ? n : 1;
    }
    if (v[1].is_string()) {
      if (one_of(kind, {"unsubscribe", "punsubscribe", "sunsubscribe"})) set->erase(v[1].str());
      else set->insert(v[1].str());
    }
    to_client += m.raw;
    if (--*p.sub_left == 0) pending_.pop_front();
  }

  Hooks hooks_;
  detail::MessageReader client_, upstream_;
  std::deque<Pending> pending_;
  bool in_multi_ = false;
  std::shared_ptr<Txn> txn_;
  std::set<std::string> channels_, patterns_, shard_;
  bool client_raw_ = false, upstream_raw_ = false;
  std::string reason_;
};

}  // namespace expirykit::fault
