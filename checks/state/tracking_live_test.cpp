// CLIENT TRACKING against the live server (the provisioned default or EXPIRYKIT_SERVER):
// observe::Tracking's invalidations compared, command by command, with model::TrackingModel's
// predictions driven by model::apply on a model::Keyspace at the server's TIME. The tracked
// connection is the fixture's client() ("B"); a second connection ("C") writes as another client.
// A planted fault (one invalidation dropped from the prediction) must be caught by the same
// comparison.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/observe/tracking.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/identity.hpp>

using namespace expirykit;
using model::Invalidations;
using resp::Argv;
using resp::Reply;

namespace {

bool reads_clock(const Argv& a) {
  const std::string u = model::upper(a[0]);
  return u == "HTTL" || u == "HPTTL" || u == "TTL" || u == "PTTL" || u == "HEXPIRETIME" || u == "HPEXPIRETIME" ||
         u == "EXPIRETIME" || u == "PEXPIRETIME";
}

/// Drives the server and the model side by side and compares invalidations per step.
class Harness {
 public:
  enum Who { B, C };
  struct Step {
    std::string line;
    Invalidations seen, predicted;
    std::string diff;
  };

  Harness(resp::Client& tracked, model::Dialect d)
      : b_(tracked), c_(tracked.host(), tracked.port()), d_(std::move(d)), trk_(tracked) {}

  /// Test hook: applied to each step's predicted invalidations before comparing.
  std::function<void(const std::vector<Argv>&, Invalidations&)> mutate;

  /// Runs `cmds` pipelined on one connection, [marker, TIME, cmds..., marker], and on the model at
  /// that TIME; compares the invalidations between the markers. Invalidations before the first
  /// marker (between steps) are kept for background().
  Step pipeline(Who who, const std::vector<Argv>& cmds) {
    resp::Client& conn = who == B ? b_ : c_;
    const std::string n = std::to_string(++seq_);
    std::vector<Argv> p{trk_.marker("b" + n), {"TIME"}};
    p.insert(p.end(), cmds.begin(), cmds.end());
    p.push_back(trk_.marker("e" + n));
    const auto r = conn.pipeline(p);
    const int64_t now = server::time_ms(r[1]);
    const auto before = trk_.read_until("b" + n);
    stray_.insert(stray_.end(), before.begin(), before.end());
    Step s;
    s.seen = trk_.read_until("e" + n);
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      const Argv& a = cmds[i];
      const Reply& server = r[2 + i];
      s.line += (i ? " ; " : std::string(who == B ? "B: " : "C: ")) + resp::cli_line(a);
      auto pending = ks_.take_events();  // e.g. nothing; kept apart from this command's
      bg_model_.insert(bg_model_.end(), pending.begin(), pending.end());
      const model::Entry* e0 = a.size() > 1 ? ks_.raw(a[1]) : nullptr;
      const std::optional<model::Entry> key_before = e0 ? std::optional<model::Entry>(*e0) : std::nullopt;
      Reply mine;
      bool modelled = true;
      if (model::TrackingModel::is_flush(a)) {
        ks_.clear();
        modelled = false;
      } else {
        try {
          mine = model::apply(ks_, d_, a, now);
        } catch (const model::Unmodelled&) {
          modelled = false;  // a pure read here (OBJECT, HSCAN, DEBUG ...): no events
        }
      }
      const auto events = ks_.take_events();
      const model::Entry* e1 = a.size() > 1 ? ks_.raw(a[1]) : nullptr;
      const std::optional<model::Entry> key_after = e1 ? std::optional<model::Entry>(*e1) : std::nullopt;
      auto inv = tm_.on_command(d_, a, mine, events, {.by_tracked = who == B, .key_changed = key_before != key_after});
      s.predicted.insert(s.predicted.end(), inv.begin(), inv.end());
      if (modelled && !reads_clock(a) && !model::same_reply(a, mine, server))
        s.diff += "reply of " + resp::cli_line(a) + ": server " + server.to_string() + ", model " + mine.to_string() + "; ";
    }
    if (mutate) mutate(cmds, s.predicted);
    s.diff += observe::compare_invalidations(s.predicted, s.seen);
    record(s);
    return s;
  }
  Step run(Who who, const Argv& cmd) { return pipeline(who, std::vector<Argv>{cmd}); }

  /// Active expiry: waits until `done()` (a check on C that the server reclaimed what is due,
  /// e.g. HLEN dropped) while collecting invalidations with markers, then models active expiry at
  /// the server's time and compares (as multisets: the order between keys is the server's).
  Step background(const std::string& what, const std::function<bool()>& done,
                  std::chrono::milliseconds bound = std::chrono::seconds(10)) {
    Step s;
    s.line = "(active expiry: " + what + ")";
    const auto until = std::chrono::steady_clock::now() + bound;
    for (;;) {
      const bool finished = done();
      const std::string tok = "bg" + std::to_string(++seq_);
      c_.call(trk_.marker(tok));
      const auto got = trk_.read_until(tok);
      stray_.insert(stray_.end(), got.begin(), got.end());
      if (finished) break;
      if (std::chrono::steady_clock::now() > until) {
        s.diff = "active expiry did not happen within " + std::to_string(bound.count()) + " ms; ";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    s.seen.swap(stray_);
    ks_.reclaim(server::now_ms(c_), d_.hexpired_class);
    auto events = ks_.take_events();
    bg_model_.insert(bg_model_.end(), events.begin(), events.end());
    s.predicted = tm_.on_background(bg_model_);
    bg_model_.clear();
    if (mutate) mutate({}, s.predicted);
    s.diff += observe::compare_invalidations_unordered(s.predicted, s.seen);
    record(s);
    return s;
  }

  /// Adopts the server's deadline for `field` of `key` (or the key TTL when field is empty) into
  /// the model: a relative TTL lands on the server's own "now" (as state::Twin does).
  int64_t adopt_deadline(const std::string& key, const std::string& field = {}) {
    model::Entry* e = ks_.raw(key);
    REQUIRE(e);
    if (field.empty()) {
      const auto t = c_("PEXPIRETIME", key).as_integer();
      e->expire_ms = t;
      return t;
    }
    const auto t = c_("HPEXPIRETIME", key, "FIELDS", 1, field)[0].as_integer();
    e->hash().fields.at(field).expire_ms = t;
    return t;
  }

  resp::Client& other() { return c_; }
  const model::TrackingModel& tracking_model() const { return tm_; }
  const std::vector<std::string>& mismatches() const { return mismatches_; }
  std::string transcript() const { return log_.str(); }

 private:
  void record(const Step& s) {
    log_ << s.line << "\n    server " << model::to_string(s.seen) << ", model " << model::to_string(s.predicted)
         << (s.diff.empty() ? "" : "   <-- MISMATCH " + s.diff) << "\n";
    if (!s.diff.empty()) mismatches_.push_back(s.line + ": " + s.diff);
  }

  resp::Client& b_;
  resp::Client c_;
  model::Dialect d_;
  observe::Tracking trk_;
  model::Keyspace ks_;
  model::TrackingModel tm_;
  uint64_t seq_ = 0;
  Invalidations stray_;
  std::vector<model::Event> bg_model_;
  std::vector<std::string> mismatches_;
  std::ostringstream log_;
};

model::Dialect dialect_of(const server::Identity& id) {
  auto d = model::Dialect::for_server(server::to_string(id.flavor), id.version.major, id.version.minor);
  if (!d) SKIP("not supported by " << id.to_string() << ": no model dialect (no hash field TTLs)");
  if (!d->has_hsetex || !d->has_hgetdel) SKIP("needs HSETEX/HGETEX/HGETDEL: " << id.to_string());
  return *d;
}

const Harness::Who B = Harness::B;
const Harness::Who C = Harness::C;
const Invalidations none{};
Invalidations inv(std::initializer_list<const char*> keys) {
  Invalidations out;
  for (const char* k : keys) out.push_back(std::string(k));
  return out;
}

}  // namespace

TEST_CASE_METHOD(catch2::ServerFixture, "Tracking: registration, invalidation and no-op writes match the model",
                 "[state][tracking]") {
  require_field_ttl();
  const auto d = dialect_of(identity());
  const bool valkey = d.flavor == "valkey";
  Harness h(client(), d);
  auto step = [&](Harness::Who w, const Argv& a) { return h.run(w, a).seen; };

  // Registration by a read, one invalidation, then nothing until read again.
  CHECK(step(C, {"HSET", "h", "a", "1", "b", "2"}) == none);
  CHECK(step(B, {"HGET", "h", "a"}) == none);
  CHECK(step(C, {"HSET", "h", "c", "3"}) == inv({"h"}));
  CHECK(step(C, {"HSET", "h", "c", "4"}) == none);

  // Every read command registers; a same-value write (HINCRBY 0, HSET 0) still invalidates.
  const std::vector<Argv> reads = {
      {"HGET", "h", "a"},         {"HMGET", "h", "a", "x"},   {"HGETALL", "h"},
      {"HKEYS", "h"},             {"HVALS", "h"},             {"HLEN", "h"},
      {"HEXISTS", "h", "a"},      {"HSTRLEN", "h", "a"},      {"HTTL", "h", "FIELDS", "1", "a"},
      {"HPTTL", "h", "FIELDS", "1", "a"}, {"HEXPIRETIME", "h", "FIELDS", "1", "a"},
      {"HPEXPIRETIME", "h", "FIELDS", "1", "a"}, {"TYPE", "h"}, {"EXISTS", "h"},
      {"TTL", "h"},               {"PTTL", "h"},
      // Reads model::apply may not cover (DUMP): no events (nothing expired here), and the
      // tracking model registers them all the same.
      {"OBJECT", "ENCODING", "h"}, {"HSCAN", "h", "0"},       {"HRANDFIELD", "h"},
      {"DUMP", "h"}};
  for (std::size_t i = 0; i < reads.size(); ++i) {
    INFO(resp::cli_line(reads[i]));
    CHECK(step(B, reads[i]) == none);
    CHECK(step(C, i % 2 ? Argv{"HINCRBY", "h", "c", "0"} : Argv{"HSET", "h", "a", "1"}) == inv({"h"}));
  }
  // HGETEX is a write: it never registers (model/tracking.hpp: redis/redis#13839, closed).
  CHECK(step(B, {"HGETEX", "h", "FIELDS", "1", "a"}) == none);
  CHECK(step(C, {"HSET", "h", "a", "1"}) == none);

  // Missing keys register too; EXISTS registers every key it names.
  CHECK(step(B, {"HGET", "nokey", "a"}) == none);
  CHECK(step(C, {"HSET", "nokey", "a", "1"}) == inv({"nokey"}));
  CHECK(step(B, {"EXISTS", "x", "y"}) == none);
  CHECK(step(C, {"SET", "y", "1"}) == inv({"y"}));
  CHECK(step(C, {"SET", "x", "1"}) == inv({"x"}));
  // A read that ran and failed (WRONGTYPE) registers; one refused for its arity does not.
  CHECK(step(B, {"HGET", "x", "a"}) == none);
  CHECK(step(C, {"SET", "x", "2"}) == inv({"x"}));
  CHECK(step(B, {"HGET", "arity"}) == none);
  CHECK(step(C, {"SET", "arity", "1"}) == none);

  // Writes that change nothing send nothing (h stays tracked).
  CHECK(step(B, {"HGET", "h", "a"}) == none);
  for (const Argv& a : std::vector<Argv>{{"HEXPIRE", "h", "100", "FIELDS", "1", "zz"},
                                         {"HEXPIRE", "h", "100", "XX", "FIELDS", "1", "a"},
                                         {"HEXPIRE", "h", "0", "FIELDS", "1", "zz"},
                                         {"HPERSIST", "h", "FIELDS", "1", "a"},
                                         {"HSETEX", "h", "FNX", "FIELDS", "1", "a", "9"},
                                         {"HSETNX", "h", "a", "9"},
                                         {"HDEL", "h", "zz"},
                                         {"PERSIST", "h"},
                                         {"HGETEX", "h", "PERSIST", "FIELDS", "1", "a"},
                                         {"HGETEX", "h", "EX", "100", "FIELDS", "1", "zz"},
                                         {"HGETDEL", "h", "FIELDS", "1", "zz"}}) {
    INFO(resp::cli_line(a));
    CHECK(step(C, a) == none);
  }
  CHECK(step(C, {"HSET", "h", "a", "1"}) == inv({"h"}));

  // Writes that change the key invalidate it.
  for (const Argv& a : std::vector<Argv>{{"HEXPIRE", "h", "100", "FIELDS", "1", "a"},
                                         {"HPERSIST", "h", "FIELDS", "1", "a"},
                                         {"HSETEX", "h", "KEEPTTL", "FIELDS", "1", "a", "1"},
                                         {"HGETEX", "h", "EX", "100", "FIELDS", "1", "a"},
                                         {"HGETEX", "h", "PX", "0", "FIELDS", "1", "b"},
                                         {"HGETDEL", "h", "FIELDS", "1", "c"},
                                         {"HPEXPIREAT", "h", "1000", "FIELDS", "1", "a"},  // h goes
                                         {"HSET", "h", "a", "1", "b", "2"},
                                         {"HSETEX", "h", "PX", "0", "FIELDS", "1", "a", "1"},
                                         {"EXPIRE", "h", "1000"},
                                         {"HSETEX", "h", "EX", "100", "FIELDS", "1", "b", "3"}}) {
    INFO(resp::cli_line(a));
    CHECK(step(B, {"HGET", "h", "a"}) == none);
    CHECK(step(C, a) == inv({"h"}));
  }
  // HSETEX with a past deadline and a brand-new field: Redis invalidates, Valkey does not (and
  // the key stays tracked).
  CHECK(step(B, {"HGET", "h", "a"}) == none);
  CHECK(step(C, {"HSETEX", "h", "PX", "0", "FIELDS", "1", "z", "2"}) == (valkey ? none : inv({"h"})));
  CHECK(step(C, {"HSET", "h", "q", "1"}) == (valkey ? inv({"h"}) : none));
  // ... and on a missing key.
  CHECK(step(B, {"HGET", "gone", "a"}) == none);
  CHECK(step(C, {"HSETEX", "gone", "PX", "0", "FIELDS", "1", "z", "2"}) == (valkey ? none : inv({"gone"})));
  CHECK(step(C, {"HSET", "gone", "q", "1"}) == (valkey ? inv({"gone"}) : none));

  // Own writes invalidate (no NOLOOP) and do not register.
  CHECK(step(B, {"HGET", "h", "a"}) == none);
  CHECK(step(B, {"HSET", "h", "a", "5"}) == inv({"h"}));
  CHECK(step(C, {"HSET", "h", "a", "6"}) == none);
  CHECK(step(B, {"HGET", "h", "a"}) == none);
  CHECK(step(C, {"DEL", "h", "nokey", "missing"}) == inv({"h"}));

  // RENAME invalidates source and destination, in that order; RENAME k k nothing.
  CHECK(step(C, {"HSET", "r1", "a", "1"}) == none);
  CHECK(step(C, {"HSET", "r2", "a", "1"}) == none);
  CHECK(h.pipeline(B, {{"HGET", "r1", "a"}, {"HGET", "r2", "a"}}).seen == none);
  CHECK(step(C, {"RENAME", "r1", "r2"}) == inv({"r1", "r2"}));
  CHECK(step(B, {"HGET", "r2", "a"}) == none);
  CHECK(step(C, {"RENAME", "r2", "r2"}) == none);
  CHECK(step(C, {"HSET", "r2", "b", "1"}) == inv({"r2"}));

  // COPY invalidates the destination only (also a new one); a refused COPY nothing.
  CHECK(step(C, {"HSET", "s1", "a", "1"}) == none);
  CHECK(h.pipeline(B, {{"HGET", "s1", "a"}, {"HGET", "s2", "a"}}).seen == none);
  CHECK(step(C, {"COPY", "s1", "s2"}) == inv({"s2"}));
  CHECK(step(B, {"HGET", "s2", "a"}) == none);
  CHECK(step(C, {"COPY", "s1", "s2"}) == none);
  CHECK(step(C, {"COPY", "s1", "s2", "REPLACE"}) == inv({"s2"}));
  CHECK(step(C, {"HSET", "s1", "b", "1"}) == inv({"s1"}));

  // FLUSHALL: one null message, and every key is forgotten.
  CHECK(step(B, {"HGET", "s1", "a"}) == none);
  CHECK(step(C, {"FLUSHALL"}) == Invalidations{std::nullopt});
  CHECK(step(C, {"HSET", "s1", "a", "1"}) == none);

  INFO(h.transcript());
  CHECK(h.mismatches().empty());
}

TEST_CASE_METHOD(catch2::ServerFixture, "Tracking: active expiry of a field, of a last field and of a key invalidates",
                 "[state][tracking]") {
  require_field_ttl();
  const auto d = dialect_of(identity());
  Harness h(client(), d);
  auto& c = h.other();

  // One field of two. B's own HPEXPIRE and its read in one pipeline: active expiry cannot run
  // between them, so the key is tracked when the field expires.
  h.run(C, {"HSET", "f", "a", "1", "b", "2"});
  h.pipeline(B, {{"HPEXPIRE", "f", "50", "FIELDS", "1", "b"}, {"HGET", "f", "a"}});
  server::wait_until_past(c, h.adopt_deadline("f", "b"), 1);
  CHECK(h.background("f loses b", [&] { return c("HLEN", "f") == Reply::integer(1); }).seen == inv({"f"}));
  CHECK(h.run(C, {"HSET", "f", "z", "1"}).seen == none);

  // The last field: the key goes.
  h.run(C, {"HSET", "g", "a", "1"});
  h.pipeline(B, {{"HPEXPIRE", "g", "50", "FIELDS", "1", "a"}, {"HGET", "g", "a"}});
  server::wait_until_past(c, h.adopt_deadline("g", "a"), 1);
  CHECK(h.background("g loses its last field", [&] { return c("EXISTS", "g") == Reply::integer(0); }).seen ==
        inv({"g"}));

  // A key TTL (DBSIZE does not expire keys lazily; f is the only other key).
  h.run(C, {"HSET", "k", "a", "1"});
  h.pipeline(B, {{"PEXPIRE", "k", "50"}, {"HGET", "k", "a"}});
  server::wait_until_past(c, h.adopt_deadline("k"), 1);
  CHECK(h.background("k expires", [&] { return c("DBSIZE") == Reply::integer(1); }).seen == inv({"k"}));

  INFO(h.transcript());
  CHECK(h.mismatches().empty());
}

TEST_CASE_METHOD(catch2::ServerFixture, "Tracking: lazy expiry with active expiry off (Redis deletes fields lazily)",
                 "[state][tracking]") {
  require_field_ttl();
  require_debug("DEBUG SET-ACTIVE-EXPIRE");
  const auto d = dialect_of(identity());
  const bool redis = d.flavor == "redis";
  Harness h(client(), d);
  auto& c = h.other();
  REQUIRE(c("DEBUG", "SET-ACTIVE-EXPIRE", "0") == Reply::ok());

  h.run(C, {"HSET", "g", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6"});
  h.run(C, {"HPEXPIRE", "g", "50", "FIELDS", "5", "b", "c", "d", "e", "f"});
  int64_t deadline = 0;
  for (const char* f : {"b", "c", "d", "e", "f"}) deadline = std::max(deadline, h.adopt_deadline("g", f));
  h.run(C, {"HSET", "k", "a", "1"});
  h.run(C, {"PEXPIRE", "k", "50"});
  deadline = std::max(deadline, h.adopt_deadline("k"));
  h.pipeline(B, {{"HGET", "g", "a"}, {"HGET", "k", "a"}});
  server::wait_until_past(c, deadline, 1);

  // Reads that do not delete: nothing on either server.
  CHECK(h.run(C, {"HGETALL", "g"}).seen == none);
  CHECK(h.run(C, {"HTTL", "g", "FIELDS", "1", "b"}).seen == none);
  CHECK(h.run(C, {"HLEN", "g"}).seen == none);
  // Another client's read of an expired field: Redis deletes it and invalidates.
  CHECK(h.run(C, {"HGET", "g", "b"}).seen == (redis ? inv({"g"}) : none));
  // B's own read of an expired field: invalidation first, then B tracks g again.
  CHECK(h.run(B, {"HGET", "g", "a"}).seen == none);
  CHECK(h.run(B, {"HEXISTS", "g", "c"}).seen == (redis ? inv({"g"}) : none));
  CHECK(h.run(C, {"HDEL", "g", "d"}).seen == (redis ? inv({"g"}) : none));
  CHECK(h.run(B, {"HGET", "g", "a"}).seen == none);
  // A write over an expired field invalidates on both.
  CHECK(h.run(C, {"HSET", "g", "e", "9"}).seen == inv({"g"}));
  // Redis HRANDFIELD first deletes every expired field of the key (f here); Valkey nothing.
  CHECK(h.run(B, {"HGET", "g", "a"}).seen == none);
  CHECK(h.run(C, {"HRANDFIELD", "g", "-5"}).seen == (redis ? inv({"g"}) : none));
  // Lazy expiry of a key (both servers).
  CHECK(h.run(C, {"HGET", "k", "a"}).seen == inv({"k"}));
  CHECK(h.run(C, {"HSET", "k", "a", "1"}).seen == none);

  // Nothing expired is left for active expiry to find once it is back on.
  CHECK(h.run(C, {"FLUSHALL"}).seen == Invalidations{std::nullopt});
  REQUIRE(c("DEBUG", "SET-ACTIVE-EXPIRE", "1") == Reply::ok());
  INFO(h.transcript());
  CHECK(h.mismatches().empty());
}

TEST_CASE_METHOD(catch2::ServerFixture, "Tracking: a planted fault (one invalidation dropped) is a mismatch",
                 "[state][tracking]") {
  require_field_ttl();
  const auto d = dialect_of(identity());
  auto scenario = [](Harness& h) {
    h.run(Harness::C, {"HSET", "h", "a", "1"});
    h.pipeline(Harness::B, {{"HGET", "h", "a"}, {"EXISTS", "h", "n"}});
    h.run(Harness::C, {"RENAME", "h", "n"});
    h.run(Harness::C, {"HSET", "n", "a", "2"});
  };
  {
    Harness good(client(), d);
    scenario(good);
    INFO(good.transcript());
    CHECK(good.mismatches().empty());
  }
  // Tracking went off with `good`; FLUSHALL also empties the server's table of tracked keys
  // (keys registered before CLIENT TRACKING OFF would otherwise still be reported).
  REQUIRE(client()("FLUSHALL") == Reply::ok());
  Harness bad(client(), d);
  bool dropped = false;
  bad.mutate = [&](const std::vector<Argv>&, Invalidations& p) {
    if (!dropped && p.size() > 1) {
      p.pop_back();  // RENAME h n: predict only h
      dropped = true;
    }
  };
  scenario(bad);
  INFO(bad.transcript());
  CHECK(dropped);
  REQUIRE(bad.mismatches().size() == 1);
  CHECK(bad.mismatches()[0].find("RENAME h n") != std::string::npos);
  CHECK(bad.mismatches()[0].find("invalidations: server [h, n], model [h]") != std::string::npos);
}
