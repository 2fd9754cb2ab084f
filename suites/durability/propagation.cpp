// What a field-TTL command writes to the AOF and sends its replicas (redis-hfe.md §11): each case
// runs a command on a fresh AOF server beside the model (state::Twin, so reply and state are
// checked as everywhere), then reads the commands the AOF increment gained (observe::AofTail) and
// those the replication stream carried up to the primary's master_repl_offset (the kit connected
// as a replica: observe::ReplicationStream), and compares both with the model's prediction
// (model::propagated, the dialect's Propagation rules). A server that writes a relative time,
// keeps a condition it should drop, names fields it did not change, or writes nothing where it
// changed data fails here, even when a reload of the file would still end in the same state.
// Every absolute deadline written must be the one the primary holds, to the millisecond.
// Timing: TTLs are 100 s or more, or already past; nothing waits. The second case waits for
// active expiry (fields with 100 ms TTLs, up to 10 s), and for 20 ms deadlines to pass before a
// read with active expiry paused, and reads what the server's own deletions wrote
// (model::expiry_propagated).
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/model/apply.hpp>
#include <expirykit/model/propagation.hpp>
#include <expirykit/observe/aof.hpp>
#include <expirykit/observe/replication_stream.hpp>
#include <expirykit/server/info.hpp>
#include <expirykit/server/persistence.hpp>
#include <expirykit/state/twin.hpp>

using namespace expirykit;
using catch2::ServerFixture;
using resp::Argv;

namespace {

/// One case: the lines that set the hash up, then the command whose propagation is checked.
struct Case {
  std::vector<std::string> setup;
  std::string command;
  /// "hsetex", "hgetex", "hgetdel": skipped on a dialect without it; "order_free": on a dialect
  /// whose keywords may follow the FIELDS block (Dialect::keyword_order_free); "key_nx_xx": with
  /// HSETEX's key conditions (Dialect::hsetex_key_nx_xx).
  const char* needs = "";
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // HEXPIRE family: future (the set fields, or the list as given), past (HDELs), nothing set.
      {{"HSET h a 1 b 2 c 3"}, "HEXPIRE h 100 FIELDS 3 a b z"},
      {{"HSET h a 1 b 2 c 3", "HEXPIRE h 50 FIELDS 1 a"}, "HEXPIRE h 100 NX FIELDS 3 a b z"},
      {{"HSET h a 1 b 2 c 3", "HEXPIRE h 500 FIELDS 1 a"}, "HPEXPIRE h 100000 GT FIELDS 2 a b"},
      {{"HSET h a 1 b 2"}, "HEXPIRE h 100 XX FIELDS 2 a b"},
      {{"HSET h a 1 b 2"}, "HPEXPIREAT h 4000000000000 FIELDS 2 a a"},
      {{"HSET h a 1 b 2"}, "hpexpireat h 4000000000000 nx fields 1 a"},
      {{"HSET h a 1 b 2 c 3"}, "HEXPIREAT h 1 FIELDS 3 a b z"},
      {{"HSET h a 1 b 2"}, "HEXPIRE h 0 FIELDS 1 a"},
      {{"HSET h a 1 b 2"}, "HEXPIRE h 0 FIELDS 2 a b"},
      // HPERSIST: as given when it removed a deadline.
      {{"HSET h a 1 b 2 c 3", "HEXPIRE h 100 FIELDS 1 a"}, "HPERSIST h FIELDS 3 a b z"},
      {{"HSET h a 1 b 2"}, "HPERSIST h FIELDS 2 a b"},
      // HSETEX: relative and second times become PXAT; FNX/FXX kept or dropped; past times.
      {{"HSET h a 1"}, "HSETEX h EX 100 FIELDS 2 a 9 n 8", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h FXX EX 100 FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h FNX PX 100000 FIELDS 1 n 9", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h EXAT 4000000000 FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1", "HEXPIRE h 100 FIELDS 1 a"}, "HSETEX h FXX KEEPTTL FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h FNX FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1 b 2"}, "HSETEX h PXAT 1 FIELDS 2 a 9 b 8", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 2 a 9 n 8", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 1 n 8", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 2 a 1 a 2", "hsetex"},
      {{"HSET h b 1"}, "HSETEX h PXAT 1 FIELDS 2 a 1 a 2", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h FXX PXAT 1 FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h FNX PXAT 1 FIELDS 1 n 9", "hsetex"},
      {{"HSET x y 1"}, "HSETEX h PXAT 1 FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h FXX PXAT 4000000000000 FIELDS 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "hsetex h fxx ex 100 fields 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "hsetex h keepttl fields 1 a 9", "hsetex"},
      {{"HSET h a 1"}, "HSETEX h XX EX 100 FIELDS 1 a 9", "key_nx_xx"},
      // Key-level NX (valkey-hfe.md checklist 30): dropped from what is written, or nothing when
      // the key exists.
      {{"HSET x y 1"}, "HSETEX h NX EX 100 FIELDS 1 a 9", "key_nx_xx"},
      {{"HSET x y 1"}, "HSETEX h NX FNX PX 100000 FIELDS 2 a 9 b 8", "key_nx_xx"},
      {{"HSET h a 1"}, "HSETEX h NX EX 100 FIELDS 1 a 9", "key_nx_xx"},
      // HGETEX: a time (HPEXPIREAT or HDELs), PERSIST (HPERSIST), no option (nothing).
      {{"HSET h a 1 b 2"}, "HGETEX h EX 100 FIELDS 3 a b z", "hgetex"},
      {{"HSET h a 1 b 2"}, "HGETEX h PXAT 4000000000000 FIELDS 2 a a", "hgetex"},
      {{"HSET h a 1 b 2"}, "HGETEX h EX 100 FIELDS 1 z", "hgetex"},
      {{"HSET h a 1 b 2", "HEXPIRE h 100 FIELDS 1 a"}, "HGETEX h PERSIST FIELDS 3 a b z", "hgetex"},
      {{"HSET h a 1 b 2"}, "HGETEX h PERSIST FIELDS 2 a b", "hgetex"},
      {{"HSET h a 1 b 2"}, "HGETEX h FIELDS 2 a b", "hgetex"},
      {{"HSET h a 1 b 2 c 3"}, "HGETEX h PXAT 1 FIELDS 3 a b z", "hgetex"},
      {{"HSET h a 1 b 2"}, "HGETEX h PXAT 1 FIELDS 2 a a", "hgetex"},
      {{"HSET h a 1 b 2", "HEXPIRE h 100 FIELDS 1 a"}, "HGETEX h PERSIST FIELDS 2 a a", "hgetex"},
      // HGETDEL: HDEL as given, or itself; nothing when no field was there.
      {{"HSET h a 1 b 2 c 3"}, "HGETDEL h FIELDS 3 a b z", "hgetdel"},
      {{"HSET h a 1 b 2"}, "HGETDEL h FIELDS 2 a b", "hgetdel"},
      {{"HSET h a 1 b 2"}, "HGETDEL h FIELDS 1 z", "hgetdel"},
      // Keywords after the FIELDS block (Redis 8.6's grammar): rewritten where they stand.
      {{"HSET h a 1 b 2"}, "HEXPIRE h 100 FIELDS 2 a z NX", "order_free"},
      {{"HSET h a 1"}, "HSETEX h FIELDS 1 a 9 EX 100", "order_free"},
      {{"HSET h a 1 b 2"}, "HGETEX h FIELDS 2 a z PX 100000", "order_free"},
      // HINCRBY and HINCRBYFLOAT, with and without a deadline on the field.
      {{"HSET h a 1", "HEXPIRE h 100 FIELDS 1 a"}, "HINCRBY h a 5"},
      {{"HSET h a 1"}, "HINCRBY h a 5"},
      {{"HSET h a 1"}, "HINCRBYFLOAT h a 1.5"},
      {{"HSET h a 1", "HEXPIRE h 100 FIELDS 1 a"}, "HINCRBYFLOAT h a 1.5"},
      // HSET, HMSET, HDEL as given; HSETNX as given, or HSET in a hash with a deadline (Valkey).
      {{"HSET h a 1", "HEXPIRE h 100 FIELDS 1 a"}, "HSET h a 9 n 8"},
      {{"HSET h a 1"}, "HMSET h a 9 n 8"},
      {{"HSET h a 1 b 2"}, "HDEL h a z"},
      {{"HSET h a 1"}, "HDEL h z"},
      {{"HSET h a 1"}, "HSETNX h n 9"},
      {{"HSET h a 1"}, "HSETNX h a 9"},
      {{"HSET h a 1", "HEXPIRE h 100 FIELDS 1 a"}, "HSETNX h n 9"},
      // A field without a deadline in a hash that stores one (Valkey: HSET), and after HPERSIST.
      {{"HSET h a 1 b 2", "HEXPIRE h 100 FIELDS 1 a"}, "HINCRBY h b 5"},
      {{"HSET h a 1", "HEXPIRE h 100 FIELDS 1 a"}, "HINCRBY h n 5"},
      {{"HSET h a 1 b 2", "HEXPIRE h 100 FIELDS 1 a", "HPERSIST h FIELDS 1 a"}, "HINCRBY h b 5"},
  };
  return all;
}

std::string text(const std::vector<Argv>& cmds) {
  if (cmds.empty()) return "(nothing)";
  std::string out;
  for (const auto& a : cmds) {
    out += "\n    " + resp::cli_line(a);
  }
  return out;
}

/// The same commands, word by word, case-insensitively: which case a server gives the words it
/// copies from the command is not specified (model/propagation.hpp); the cases' keys, fields and
/// values are lower-case letters and digits, so nothing else is lost.
bool same(const std::vector<Argv>& a, const std::vector<Argv>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (std::size_t j = 0; j < a[i].size(); ++j)
      if (!model::iequals(a[i][j], b[i][j])) return false;
  }
  return true;
}

/// A fresh AOF server beside its model (state::Twin), with what its AOF increment gained
/// (observe::AofTail) and what its replication stream carried (observe::ReplicationStream, the
/// kit connected as a replica) read as the commands that change data.
class PropagationFixture : public ServerFixture {
 protected:
  /// Spawns the server (SKIPs where fresh_server() does, and without field TTLs) and connects
  /// the twin, the AOF's tail and the stream. A stream that fails is one failure; the AOF's
  /// checks go on without it.
  void start() {
    require_field_ttl();
    d_ = require_dialect();
    process::ServerOptions o;
    o.persistence = process::Persistence::aof;  // appendfsync always: written before the reply
    srv_ = fresh_server(o, "reads the server's AOF increment from its directory");
    c_.emplace(srv_->client());
    state::Twin::Options topt;
    topt.server = identity();  // known issues of this server are excused per step, as everywhere
    t_.emplace(*c_, d_, topt);
    aof_.emplace(srv_->dir() / "appendonlydir");
    REQUIRE(c()("CONFIG", "SET", "repl-diskless-sync-delay", "0") == resp::Reply::ok());  // the sync at once
    try {
      stream_.emplace(srv_->host(), srv_->port());
      // The snapshot's end mark comes before the primary's child exits, and a FLUSHALL then (the
      // twin's first command) ends the child and drops the replica ("SYNC failed. BGSAVE child
      // returned an error", live 9.1.2): wait until no child runs.
      server::wait_idle(c());
    } catch (const std::exception& e) {
      FAIL_CHECK(e.what());
      stream_.reset();
    }
  }

  const model::Dialect& d() const { return d_; }
  resp::Client& c() { return *c_; }
  state::Twin& t() { return *t_; }
  /// Marks the AOF's end and reads the stream up to the primary's offset (what came before).
  void mark() {
    aof_->mark();
    (void)stream_read();
  }
  /// The commands the AOF increment gained since the mark.
  std::vector<Argv> aof_read() { return data(aof_->since_mark()); }
  /// What the stream carried up to the primary's offset now; a stream that fails is one failure.
  std::optional<std::vector<Argv>> stream_read() {
    if (!stream_) return std::nullopt;
    try {
      return data(stream_->read_until(server::Info::fetch(c(), "replication").get_int("master_repl_offset")));
    } catch (const std::exception& e) {
      FAIL_CHECK(e.what());
      stream_.reset();
      return std::nullopt;
    }
  }

 private:
  /// The commands that change data: the file's and the stream's own bookkeeping left out.
  static std::vector<Argv> data(std::vector<Argv> cmds) {
    std::vector<Argv> out;
    for (auto& a : cmds) {
      const std::string n = model::upper(a[0]);
      if (n != "SELECT" && n != "PING" && n != "REPLCONF") out.push_back(std::move(a));
    }
    return out;
  }

  model::Dialect d_;
  std::unique_ptr<process::Server> srv_;  // members end in reverse order: the server last
  std::optional<resp::Client> c_;
  std::optional<state::Twin> t_;
  std::optional<observe::AofTail> aof_;
  std::optional<observe::ReplicationStream> stream_;
};

}  // namespace

TEST_CASE_METHOD(PropagationFixture, "Propagation: the AOF and the replication stream carry each field-TTL command in the dialect's form",
                 "[durability][propagation]") {
  start();
  const model::Dialect& d = this->d();
  state::Twin& t = this->t();
  int checked = 0, written = 0;
  for (const Case& k : cases()) {
    const std::string needs = k.needs;
    if ((needs == "hsetex" && !d.has_hsetex) || (needs == "hgetex" && !d.has_hgetex) ||
        (needs == "hgetdel" && !d.has_hgetdel) || (needs == "order_free" && !d.keyword_order_free) ||
        (needs == "key_nx_xx" && !d.hsetex_key_nx_xx))
      continue;
    CAPTURE(k.command);
    t.flushall();
    for (const auto& line : k.setup) REQUIRE(t.run(line).ok);
    mark();  // after the set-up's commands
    const model::Keyspace before = t.model();
    const state::Step s = t.run(k.command);
    INFO("server reply " << s.server.oneline() << ", model " << s.model.oneline());
    // Reply and state as the model says (else the twin's report says why): the propagated form
    // is predicted from the model's state, so it is checked only then.
    CHECK(s.ok);
    if (!s.ok) continue;
    const auto want = model::propagated(d, s.argv, s.model, before, t.model(), s.model_at_ms);
    CHECK(want.has_value());
    if (!want) continue;
    const std::vector<Argv> got = aof_read();
    const auto sent = stream_read();
    INFO("the AOF got:" << text(got) << "\nthe replication stream carried:" << (sent ? text(*sent) : "(not read)")
                        << "\nthe model (" << d.name << ") says:" << text(*want));
    CHECK(same(got, *want));
    if (sent) CHECK(same(*sent, *want));
    ++checked;
    written += !want->empty();
  }
  // Most cases write something, some nothing: a model that predicted nothing everywhere (and a
  // server that wrote nothing) would pass every case above.
  INFO(checked << " cases checked, " << written << " of them expecting a write");
  CHECK(written >= checked / 2);
}

TEST_CASE_METHOD(PropagationFixture, "Propagation: fields reclaimed past their deadline reach the AOF and the replication stream in the dialect's form",
                 "[durability][propagation]") {
  // Active expiry of some and of all fields of a hash, and a read of an expired field with active
  // expiry paused (Redis deletes it lazily and writes that; Valkey only hides it and writes
  // nothing), each checked against model::expiry_propagated of the model before and after.
  require_debug("DEBUG SET-ACTIVE-EXPIRE");
  start();
  const model::Dialect& d = this->d();
  state::Twin& t = this->t();
  resp::Client& c = this->c();
  // Compares what the AOF and the stream got since the mark with the model's deletions.
  auto check_written = [&](const std::vector<Argv>& want_raw) {
    const auto want = model::canonical_deletions(want_raw);
    const std::vector<Argv> got = aof_read();
    const auto sent = stream_read();
    INFO("the AOF got:" << text(got) << "\nthe replication stream carried:" << (sent ? text(*sent) : "(not read)")
                        << "\nthe model (" << d.name << ") says:" << text(want_raw));
    CHECK(model::canonical_deletions(got) == want);
    if (sent) CHECK(model::canonical_deletions(*sent) == want);
  };
  // Waits (up to 10 s) until `done` holds on the server.
  auto wait_for = [&](const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return done();
  };

  SECTION("active expiry") {
    for (const bool all : {false, true}) {
      CAPTURE(all);
      // Active expiry paused until the marks are set: the deletions must come after them.
      REQUIRE(t.set_active_expire(false) == resp::Reply::ok());
      t.flushall();
      REQUIRE(t.run(all ? "HSET h a 1 b 2" : "HSET h a 1 b 2 c 3").ok);
      // A missing field named too: only the fields that existed are deleted (valkey-hfe.md
      // checklist 100).
      REQUIRE(t.run("HPEXPIRE h 100 FIELDS 3 a zz b").ok);
      mark();
      const model::Keyspace before = t.model();
      REQUIRE(t.set_active_expire(true) == resp::Reply::ok());
      // HLEN counts stored fields, expired ones included, and deletes nothing (both servers).
      REQUIRE(wait_for([&] { return c("HLEN", "h").as_integer() == (all ? 0 : 1); }));
      t.reclaim_model();
      const auto want = model::expiry_propagated(d, before, t.model(), "h");
      REQUIRE(!want.empty());
      check_written(want);
      CHECK(t.compare_state().empty());
    }
  }
  SECTION("a read of expired fields, active expiry paused") {
    REQUIRE(t.set_active_expire(false) == resp::Reply::ok());
    // One expired field of two, the only field, and two of three read by one command (Redis
    // wraps that command's HDELs in MULTI/EXEC); HRANDFIELD and HGETEX meeting expired fields
    // (redis-hfe.md checklist 83, 86: their lazy deletions as written).
    struct Read {
      const char* hset;
      const char* hpexpire;
      const char* read;
    };
    for (const Read& k : {Read{"HSET h a 1 b 2", "HPEXPIRE h 20 FIELDS 1 a", "HGET h a"},
                          Read{"HSET h a 1", "HPEXPIRE h 20 FIELDS 1 a", "HGET h a"},
                          Read{"HSET h a 1 b 2 c 3", "HPEXPIRE h 20 FIELDS 2 a b", "HMGET h a b"},
                          Read{"HSET h a 1 b 2 c 3", "HPEXPIRE h 20 FIELDS 2 a b", "HRANDFIELD h -5"},
                          Read{"HSET h a 1 b 2", "HPEXPIRE h 20 FIELDS 1 a", "HRANDFIELD h -3"},
                          Read{"HSET h a 1 b 2 c 3", "HPEXPIRE h 20 FIELDS 2 a b", "HRANDFIELD h 2 WITHVALUES"},
                          Read{"HSET h a 1 b 2", "HPEXPIRE h 20 FIELDS 2 a b", "HRANDFIELD h"},
                          Read{"HSET h a 1 b 2 c 3", "HPEXPIRE h 20 FIELDS 2 a b", "HGETEX h PERSIST FIELDS 2 a b"},
                          Read{"HSET h a 1 b 2 c 3", "HPEXPIRE h 20 FIELDS 1 a", "HGETEX h FIELDS 2 a c"}}) {
      CAPTURE(k.hset, k.read);
      if (std::string_view(k.read).substr(0, 6) == "HGETEX" && !d.has_hgetex) continue;
      t.flushall();
      REQUIRE(t.run(k.hset).ok);
      REQUIRE(t.run(k.hpexpire).ok);
      // Past the 20 ms deadlines on the server's clock (the read must meet them expired).
      t.wait_until_past(t.model().raw("h")->hash().fields.at("a").expire_ms.value_or(0), 20);
      mark();
      const model::Keyspace before = t.model();
      const state::Step s = t.run(k.read);
      INFO(s.describe());
      CHECK(s.ok);
      const auto want = model::expiry_propagated(d, before, t.model(), "h", true);
      CHECK(want.empty() == !d.lazy_delete_on_read);
      check_written(want);
    }
    t.set_active_expire(true);
  }
  SECTION("a write over an expired field, active expiry paused") {
    // What a write writes when a field it names has logically expired (model::written: its lazy
    // deletions, then its own form). Found by the replica's notifications (replica.cpp): Valkey
    // 9.1.2 writes HSETEX KEEPTTL over an expired field as MULTI, HDEL, HSETEX, EXEC, and HDEL
    // for a past time over one. Redis deletes each field it looks up that has expired and wraps
    // those HDELs and the command's own form in one MULTI / EXEC (live 8.0.6 and 8.6.3: MULTI,
    // HDEL h a, HINCRBY h a 5, EXEC; a past HSETEX PXAT over it writes its own HDEL only; HSET,
    // HMSET and HSETEX without FNX/FXX look nothing up first).
    REQUIRE(t.set_active_expire(false) == resp::Reply::ok());
    std::vector<std::string> writes = {"HINCRBY h a 5", "HINCRBYFLOAT h a 1.5"};
    if (d.has_hsetex)
      writes.insert(writes.end(), {"HSETEX h KEEPTTL FIELDS 1 a 9", "HSETEX h PXAT 1 FIELDS 1 a 9", "HSETEX h FIELDS 1 a 9",
                                   "HSETEX h EX 100 FIELDS 2 a 9 b 8", "HSETEX h KEEPTTL FIELDS 2 a 9 b 8"});
    if (d.lazy_delete_on_read) {  // the lookups that delete lazily, and writes that look up nothing
      writes.insert(writes.end(), {"HSETNX h a 7", "HSET h a 5", "HMSET h a 5 c 6", "HMGET h a b", "HGET h a",
                                   "HEXISTS h a", "HSTRLEN h a"});
      if (d.has_hsetex)
        writes.insert(writes.end(), {"HSETEX h FNX FIELDS 1 a 9", "HSETEX h FXX FIELDS 1 a 9", "HSETEX h FNX PXAT 1 FIELDS 1 a 9"});
      if (d.has_hgetex) writes.insert(writes.end(), {"HGETEX h PX 100000 FIELDS 2 a b", "HGETEX h FIELDS 2 a b"});
      if (d.has_hgetdel) writes.insert(writes.end(), {"HGETDEL h FIELDS 2 a b"});
    }
    for (const auto& w : writes) {
      CAPTURE(w);
      t.flushall();
      REQUIRE(t.run("HSET h a 1 b 2").ok);
      REQUIRE(t.run("HPEXPIRE h 20 FIELDS 1 a").ok);
      t.wait_until_past(t.model().raw("h")->hash().fields.at("a").expire_ms.value_or(0), 20);
      mark();
      const model::Keyspace before = t.model();
      const state::Step s = t.run(w);
      INFO(s.describe());
      CHECK(s.ok);
      if (!s.ok) continue;
      const auto own = model::written(d, s.argv, s.model, before, t.model(), s.model_at_ms);
      REQUIRE(own);
      const std::vector<Argv>& want = *own;
      const std::vector<Argv> got = aof_read();
      const auto sent = stream_read();
      INFO("the AOF got:" << text(got) << "\nthe replication stream carried:" << (sent ? text(*sent) : "(not read)")
                          << "\nthe model (" << d.name << ") says:" << text(want));
      CHECK(same(got, want));
      if (sent) CHECK(same(*sent, want));
    }
    t.set_active_expire(true);
  }
}
