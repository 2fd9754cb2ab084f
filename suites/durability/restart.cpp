// Field TTLs across persistence and restarts: RDB (BGSAVE, SAVE, DEBUG RELOAD), AOF (the
// incremental file, BGREWRITEAOF with and without the RDB preamble), DUMP/RESTORE, COPY and
// RENAME. A field TTL is an absolute expiry in Unix ms: every way of writing the data out and
// reading it back must keep it to the millisecond, and a deadline that passes while the server
// is down must be honoured at load (docs/guide/model.md, "Checking a server against the
// reference model"; model/keyspace.hpp Keyspace::loaded). Each case takes its own server
// (fresh_server) except DUMP/RESTORE, which needs no restart.
//
// The main assertion is a Snapshot of every key (type, key TTL, fields, values, HPEXPIRETIME
// per field, HLEN) before and after, compared with state::diff (state/snapshot.hpp).
// What the AOF holds (checked live, Valkey 9.1.2 and Redis 8.0.6): relative TTL commands are
// propagated as HPEXPIREAT / HSETEX PXAT with absolute ms; a rewrite without the RDB preamble
// writes Valkey `HSETEX key PXAT <ms> FIELDS 1 f v`, Redis `HMSET` + `HPEXPIREAT`
// (process/options.hpp). Loading: Valkey 9.1.2 skips fields already due, Redis 8.0.6 loads them
// and active expiry removes them at once (model/keyspace.hpp); either way the reclaimed state is
// what is checked, polled with a bound.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/persistence.hpp>
#include <expirykit/state/snapshot.hpp>

#include "aof_base_deadlines.hpp"

using expirykit::catch2::ServerFixture;
using expirykit::process::Persistence;
using expirykit::process::ServerOptions;
using expirykit::process::Shutdown;
using expirykit::resp::Argv;
using expirykit::resp::Client;
using expirykit::resp::Reply;
using expirykit::state::DiffOptions;
using expirykit::state::Snapshot;
namespace server = expirykit::server;
namespace model = expirykit::model;
namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

constexpr int64_t kMinute = 60000;

/// Commands sent in one pipeline, each with the reply it must get. run() FAILs (REQUIRE) with
/// every mismatch: the data a test sets up must be what it thinks it is.
struct Batch {
  std::vector<Argv> cmds;
  std::vector<Reply> want;
  Batch& add(Argv cmd, Reply reply) {
    cmds.push_back(std::move(cmd));
    want.push_back(std::move(reply));
    return *this;
  }
  void run(Client& c) {
    auto got = c.pipeline(cmds);
    std::ostringstream bad;
    for (std::size_t i = 0; i < cmds.size(); ++i)
      if (!(got[i] == want[i]))
        bad << "sent: " << expirykit::resp::cli_line(cmds[i]) << "\n  got: " << got[i] << "\n  expected: " << want[i] << "\n";
    cmds.clear();
    want.clear();
    INFO(bad.str());
    REQUIRE(bad.str().empty());
  }
};

std::string S(int64_t v) { return std::to_string(v); }

/// A varied keyspace with far deadlines (10 min to 1 h from the server's `t0`): small hashes
/// (listpack / listpackex sized), hashes of 15, 16 and 17 volatile fields, a 300-field hash, large values (> hash-max-listpack-value),
/// a key TTL over field TTLs, and every command that sets, keeps or drops a field TTL
/// (HPEXPIREAT, HEXPIRE, HSETEX PXAT/PX/KEEPTTL, HGETEX PXAT/EX, HPERSIST, HPEXPIRE 0, HGETDEL).
void fill_rich(Client& c, int64_t t0, bool hgetdel) {
  Batch b;
  for (int i = 0; i < 40; ++i) {
    const std::string k = "user:" + S(i);
    b.add({"HSET", k, "name", "n" + S(i), "token", "t" + S(i), "sess", "s" + S(i)}, Reply::integer(3));
    b.add({"HPEXPIREAT", k, S(t0 + 20 * kMinute + i * 7), "FIELDS", "1", "token"}, Reply::ints({1}));
    b.add({"HEXPIRE", k, S(1800 + i), "FIELDS", "1", "sess"}, Reply::ints({1}));
  }
  Argv big{"HSET", "big"};
  for (int i = 0; i < 300; ++i) big.insert(big.end(), {"f" + S(1000 + i), "v" + S(i)});
  b.add(big, Reply::integer(300));
  for (int i = 0; i < 300; ++i)
    if (i % 3) b.add({"HPEXPIREAT", "big", S(t0 + 25 * kMinute + i * 13), "FIELDS", "1", "f" + S(1000 + i)}, Reply::ints({1}));
  b.add({"HSETEX", "wide", "PXAT", S(t0 + 30 * kMinute), "FIELDS", "2", "w0", std::string(100, 'a'), "w1",
         std::string(200, 'b')},
        Reply::integer(1));
  b.add({"HSET", "wide", "nottl", std::string(80, 'c')}, Reply::integer(1));
  b.add({"HSET", "keyttl", "a", "1", "b", "2"}, Reply::integer(2));
  b.add({"PEXPIREAT", "keyttl", S(t0 + 40 * kMinute)}, Reply::integer(1));
  b.add({"HPEXPIREAT", "keyttl", S(t0 + 35 * kMinute), "FIELDS", "1", "a"}, Reply::ints({1}));
  b.add({"HSETEX", "persisted", "PX", S(10 * kMinute), "FIELDS", "2", "a", "1", "b", "2"}, Reply::integer(1));
  b.add({"HPERSIST", "persisted", "FIELDS", "1", "a"}, Reply::ints({1}));
  b.add({"HSET", "hgetex", "a", "1", "b", "2"}, Reply::integer(2));
  b.add({"HGETEX", "hgetex", "PXAT", S(t0 + 45 * kMinute), "FIELDS", "1", "a"}, Reply::strings({"1"}));
  b.add({"HGETEX", "hgetex", "EX", "3000", "FIELDS", "1", "b"}, Reply::strings({"2"}));
  b.add({"HSETEX", "keepttl", "PXAT", S(t0 + 50 * kMinute), "FIELDS", "1", "a", "1"}, Reply::integer(1));
  b.add({"HSETEX", "keepttl", "KEEPTTL", "FIELDS", "1", "a", "2"}, Reply::integer(1));
  b.add({"HSET", "deleted", "a", "1", "b", "2"}, Reply::integer(2));
  b.add({"HPEXPIRE", "deleted", "0", "FIELDS", "1", "a"}, Reply::ints({2}));  // a zero TTL deletes
  if (hgetdel) {
    b.add({"HSETEX", "hgetdel", "PXAT", S(t0 + 55 * kMinute), "FIELDS", "2", "a", "1", "b", "2"}, Reply::integer(1));
    b.add({"HGETDEL", "hgetdel", "FIELDS", "1", "a"}, Reply::strings({"1"}));
  }
  b.add({"HSET", "plain", "x", "1", "y", "2"}, Reply::integer(2));
  b.add({"SET", "str", "v", "PX", S(60 * kMinute)}, Reply::ok());
  // 15, 16 and 17 volatile fields: both sides of Redis's 16-item boundary where a hashtable's
  // deadlines go from a list to a rax (EB_LIST_MAX_ITEMS; redis-hfe.md checklist 92). A value
  // longer than hash-max-listpack-value makes each a hashtable (a listpackex keeps no such list).
  for (int n : {15, 16, 17}) {
    Argv h{"HSETEX", "edge" + S(n), "PXAT", S(t0 + 15 * kMinute), "FIELDS", S(n)};
    for (int i = 0; i < n; ++i) h.insert(h.end(), {"e" + S(i), i == 0 ? std::string(100, 'v') : "v" + S(i)});
    b.add(h, Reply::integer(1));
    for (int i = 0; i < n; i += 2)  // deadlines of their own for half of them
      b.add({"HPEXPIREAT", "edge" + S(n), S(t0 + 16 * kMinute + n * 100 + i), "FIELDS", "1", "e" + S(i)}, Reply::ints({1}));
  }
  b.run(c);
}

/// Takes a snapshot and REQUIREs it holds what fill_rich wrote (no vacuous comparison).
Snapshot take_rich(Client& c, const std::string& source) {
  Snapshot s = Snapshot::take(c, source);
  INFO(source << ": " << s.keys.size() << " keys; big: " << s.describe("big").substr(0, 200));
  REQUIRE(s.keys.size() >= 50);
  REQUIRE(s.keys.count("big"));
  REQUIRE(s.keys.at("big").fields.size() == 300);
  return s;
}

std::string join(const std::vector<std::string>& lines, std::size_t max = 40) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < max; ++i) out += lines[i] + "\n";
  if (lines.size() > max) out += "... and " + S(static_cast<int64_t>(lines.size() - max)) + " more\n";
  return out;
}

/// CHECKs that two snapshots agree exactly (values, HPEXPIRETIME to the ms, HLEN).
void check_same(const Snapshot& before, const Snapshot& after, DiffOptions opt = {}) {
  auto d = expirykit::state::diff(before, after, opt);
  INFO(d.size() << " differences between \"" << before.source << "\" and \"" << after.source << "\":\n" << join(d));
  CHECK(d.empty());
}

/// Two keys of one snapshot compared as if they were the same key (a copy and its source).
std::vector<std::string> same_key(const Snapshot& s, const std::string& a, const std::string& b) {
  Snapshot sa, sb;
  sa.source = a;
  sb.source = b;
  if (s.keys.count(a)) sa.keys[a + "|" + b] = s.keys.at(a);
  if (s.keys.count(b)) sb.keys[a + "|" + b] = s.keys.at(b);
  return expirykit::state::diff(sa, sb);
}

/// Polls `done()` every 10 ms up to `bound`; returns whether it became true.
bool poll(milliseconds bound, const std::function<bool()>& done) {
  const auto until = clk::now() + bound;
  for (;;) {
    if (done()) return true;
    if (clk::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
}

/// The model keyspace holding what a snapshot shows (visible fields only).
model::Keyspace to_model(const Snapshot& s) {
  model::Keyspace ks;
  for (const auto& [name, k] : s.keys) {
    if (k.type == "string") {
      ks.put(name, model::Entry{k.value, k.expire_ms});
    } else if (k.type == "hash") {
      model::Hash h;
      for (const auto& [f, v] : k.fields) h.fields[f] = model::Field{v.value, v.expire_ms};
      ks.put(name, model::Entry{std::move(h), k.expire_ms});
    }
  }
  return ks;
}

/// The text of the AOF base file named by the manifest in `dir`/appendonlydir, and its name.
std::pair<std::string, std::string> aof_base(const fs::path& dir) {
  std::ifstream manifest(dir / "appendonlydir" / "appendonly.aof.manifest");
  for (std::string line; std::getline(manifest, line);) {
    std::istringstream in(line);
    std::string word, file, type;
    while (in >> word) {
      if (word == "file") in >> file;
      if (word == "type") in >> type;
    }
    if (type == "b") {
      std::ifstream f(dir / "appendonlydir" / file, std::ios::binary);
      std::stringstream text;
      text << f.rdbuf();
      return {file, text.str()};
    }
  }
  return {"", ""};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// How a test writes its data out before the restart.
enum class Mode { bgsave, aof, aof_rewrite, aof_rewrite_no_preamble };
const char* name(Mode m) {
  switch (m) {
    case Mode::bgsave: return "RDB (BGSAVE)";
    case Mode::aof: return "AOF (incremental file)";
    case Mode::aof_rewrite: return "AOF rewritten with the RDB preamble";
    case Mode::aof_rewrite_no_preamble: return "AOF rewritten without the RDB preamble";
  }
  return "?";
}
ServerOptions options(Mode m) {
  ServerOptions o;
  o.persistence = m == Mode::bgsave ? Persistence::rdb : Persistence::aof;
  o.aof_rdb_preamble = m != Mode::aof_rewrite_no_preamble;
  return o;
}
/// Makes what the server holds durable in the way `m` says (appendfsync always: the AOF
/// increments are on disk when a write returns).
void persist(Client& c, Mode m) {
  if (m == Mode::bgsave) server::bgsave(c);
  if (m == Mode::aof_rewrite || m == Mode::aof_rewrite_no_preamble) server::bgrewriteaof(c);
}

}  // namespace

TEST_CASE_METHOD(ServerFixture, "Every field, value and absolute field expiry survives BGSAVE and a restart from it",
                 "[durability]") {
  require_field_ttl();
  auto srv = fresh_server(options(Mode::bgsave), "restart from RDB");
  auto c = srv->client();
  fill_rich(c, server::now_ms(c), identity().caps.hgetdel);
  const Snapshot before = take_rich(c, "before BGSAVE");
  server::bgsave(c);
  // Changes after the BGSAVE must not come back: SHUTDOWN NOSAVE leaves only the BGSAVE's file.
  Batch()
      .add({"HPERSIST", "user:0", "FIELDS", "1", "token"}, Reply::ints({1}))
      .add({"HSET", "late", "a", "1"}, Reply::integer(1))
      .run(c);
  srv->stop(Shutdown::nosave);
  srv->start();
  auto c2 = srv->client();
  check_same(before, take_rich(c2, "after restart from the BGSAVE"));
}

TEST_CASE_METHOD(ServerFixture, "Every field, value and absolute field expiry survives SAVE and a restart from it",
                 "[durability]") {
  require_field_ttl();
  auto srv = fresh_server(options(Mode::bgsave), "restart from RDB");
  auto c = srv->client();
  fill_rich(c, server::now_ms(c), identity().caps.hgetdel);
  const Snapshot before = take_rich(c, "before SAVE");
  server::save(c);
  Batch()
      .add({"HPEXPIRE", "plain", "600000", "FIELDS", "1", "x"}, Reply::ints({1}))
      .add({"DEL", "big"}, Reply::integer(1))
      .run(c);
  srv->stop(Shutdown::nosave);
  srv->start();
  auto c2 = srv->client();
  check_same(before, take_rich(c2, "after restart from the SAVE"));
}

TEST_CASE_METHOD(ServerFixture, "Every field, value and absolute field expiry survives DEBUG RELOAD", "[durability]") {
  require_field_ttl();
  require_debug("DEBUG RELOAD");
  auto srv = fresh_server({}, "DEBUG RELOAD writes dump.rdb into the server's directory");
  auto c = srv->client();
  fill_rich(c, server::now_ms(c), identity().caps.hgetdel);
  const Snapshot before = take_rich(c, "before DEBUG RELOAD");
  server::debug_reload(c);
  check_same(before, take_rich(c, "after DEBUG RELOAD"));
}

TEST_CASE_METHOD(ServerFixture, "Every field, value and absolute field expiry survives a restart from the AOF alone",
                 "[durability]") {
  require_field_ttl();
  auto srv = fresh_server(options(Mode::aof), "restart from AOF");
  auto c = srv->client();
  fill_rich(c, server::now_ms(c), identity().caps.hgetdel);
  const Snapshot before = take_rich(c, "before restart");
  srv->stop(Shutdown::nosave);
  // With appendonly yes the server loads the AOF; no RDB exists that it could come from instead.
  CHECK_FALSE(fs::exists(srv->dir() / "dump.rdb"));
  srv->start();
  auto c2 = srv->client();
  check_same(before, take_rich(c2, "after restart from the AOF"));
}

TEST_CASE_METHOD(ServerFixture, "BGREWRITEAOF neither resets nor drops a field TTL, with or without the RDB preamble",
                 "[durability]") {
  require_field_ttl();
  const Mode mode = GENERATE(Mode::aof_rewrite, Mode::aof_rewrite_no_preamble);
  DYNAMIC_SECTION(name(mode)) {
    auto srv = fresh_server(options(mode), "AOF rewrite and restart");
    auto c = srv->client();
    const int64_t t0 = server::now_ms(c);
    fill_rich(c, t0, identity().caps.hgetdel);
    server::bgrewriteaof(c);
    const auto [base_name, base] = aof_base(srv->dir());
    INFO("AOF base file after BGREWRITEAOF: " << base_name << " (" << base.size() << " bytes)");
    if (mode == Mode::aof_rewrite) {
      CHECK(ends_with(base_name, ".base.rdb"));
    } else {
      REQUIRE(ends_with(base_name, ".base.aof"));
      // Field TTLs are written as absolute ms (Valkey HSETEX ... PXAT, Redis HPEXPIREAT), never
      // relative: a relative TTL would restart its countdown at every load.
      CHECK((base.find("PXAT") != std::string::npos || base.find("HPEXPIREAT") != std::string::npos));
      CHECK(base.find("HPEXPIRE\r\n") == std::string::npos);
      CHECK(base.find("HEXPIRE\r\n") == std::string::npos);
      // One absolute deadline per volatile field, the server's to the millisecond, and no HDEL
      // (valkey-hfe.md checklist 80).
      const auto w = base_deadlines(base, base_name);
      const Snapshot at_rewrite = Snapshot::take(c, "at the rewrite");
      int volatile_fields = 0;
      std::vector<std::string> wrong;
      for (const auto& [k, ks] : at_rewrite.keys)
        for (const auto& [f, fs] : ks.fields) {
          if (!fs.expire_ms) continue;
          ++volatile_fields;
          const auto it = w.at.find(k + " " + f);
          if (it == w.at.end() || it->second != *fs.expire_ms)
            wrong.push_back(k + " " + f + ": server " + S(*fs.expire_ms) + ", base " +
                            (it == w.at.end() ? std::string("none") : S(it->second)));
        }
      INFO("deadlines the base writes that differ from the server's:\n" << join(wrong));
      CHECK(wrong.empty());
      CHECK(w.deadlines == volatile_fields);  // one each, none twice
      CHECK(volatile_fields > 300);
      CHECK(w.hdels == 0);
    }
    // Writes after the rewrite go to the new increment, replayed on top of the base.
    Batch()
        .add({"HPEXPIREAT", "big", S(t0 + 33 * kMinute), "FIELDS", "2", "f1000", "f1001"}, Reply::ints({1, 1}))
        .add({"HPERSIST", "user:3", "FIELDS", "1", "token"}, Reply::ints({1}))
        .add({"HSETEX", "user:4", "PX", S(15 * kMinute), "FIELDS", "1", "extra", "e"}, Reply::integer(1))
        .run(c);
    const Snapshot before = take_rich(c, "before restart");
    srv->stop(Shutdown::nosave);
    srv->start();
    auto c2 = srv->client();
    check_same(before, take_rich(c2, std::string("after restart from the ") + name(mode)));
    // The same files replayed in place (DEBUG LOADAOF) give the same data again.
    server::debug_loadaof(c2);
    check_same(before, take_rich(c2, std::string("after DEBUG LOADAOF of the ") + name(mode)));
  }
}

TEST_CASE_METHOD(ServerFixture,
                 "Fields whose deadline passes while the server is down are gone after the load, and so are hashes left "
                 "without a field",
                 "[durability]") {
  require_field_ttl();
  const Mode mode = GENERATE(Mode::bgsave, Mode::aof, Mode::aof_rewrite_no_preamble);
  DYNAMIC_SECTION(name(mode)) {
    auto srv = fresh_server(options(mode), "restart after deadlines passed");
    auto c = srv->client();
    const int64_t t0 = server::now_ms(c);
    // Short deadlines: well after the save (1.2 s leaves room on a loaded machine), deliberately
    // passed while the server is down. Far ones: an hour away.
    const int64_t soon = t0 + 1200, far = t0 + 60 * kMinute;
    Batch b;
    // "mixed": first 24 small short-lived fields (a listpack-sized hash), then small long-lived
    // ones, one without TTL, and last two values > hash-max-listpack-value (64 bytes): the load
    // (above all the AOF replay, which runs the commands in this order) converts the hash from
    // listpack to hashtable midway, after the due fields were seen.
    for (int i = 0; i < 24; ++i)
      b.add({"HSETEX", "mixed", "PXAT", S(soon + i), "FIELDS", "1", "s" + S(i), "v" + S(i)}, Reply::integer(1));
    b.add({"HSETEX", "mixed", "PXAT", S(far), "FIELDS", "2", "k0", "keep0", "k1", "keep1"}, Reply::integer(1));
    b.add({"HSET", "mixed", "p", "persistent"}, Reply::integer(1));
    b.add({"HSETEX", "mixed", "PXAT", S(far + 1), "FIELDS", "2", "L0", std::string(200, 'L'), "L1", std::string(100, 'M')},
          Reply::integer(1));
    // Hashes whose every field is due: they must not come back, not even as an empty hash.
    b.add({"HSETEX", "allgone", "PXAT", S(soon + 50), "FIELDS", "3", "a", "1", "b", "2", "c", "3"}, Reply::integer(1));
    b.add({"HSETEX", "allgone-big", "PXAT", S(soon + 60), "FIELDS", "2", "a", "1", "b", "2"}, Reply::integer(1));
    b.add({"HSETEX", "allgone-big", "PXAT", S(soon + 61), "FIELDS", "1", "z", std::string(300, 'z')}, Reply::integer(1));
    // A small hash that keeps one field.
    b.add({"HSET", "half", "a", "1", "b", "2", "c", "3"}, Reply::integer(3));
    b.add({"HPEXPIREAT", "half", S(soon + 70), "FIELDS", "2", "a", "b"}, Reply::ints({1, 1}));
    b.add({"HSET", "plain", "x", "1"}, Reply::integer(1));
    b.run(c);
    persist(c, mode);
    const Snapshot before = Snapshot::take(c, "before restart");
    {
      INFO("the save must finish before the short deadlines (" << soon << ") so the file holds those fields; "
           "server time after it: " << before.at_ms << " (machine too slow?)");
      REQUIRE(before.at_ms < soon);
    }
    REQUIRE(before.keys.at("mixed").fields.size() == 29);
    srv->stop(Shutdown::nosave);
    server::wait_until_past(client(), soon + 100);  // the shared server reads the same host clock
    srv->start();
    auto c2 = srv->client();
    const int64_t load_ms = server::now_ms(c2);
    const Snapshot expected = Snapshot::of_model(to_model(before).loaded(load_ms), load_ms, "expected after load");

    // Right after the load, reads show exactly the survivors. A hash with only due fields may
    // still be stored for a moment (Redis 8.0.6 loads due fields and reclaims them by active
    // expiry), but shows no field.
    Snapshot first = Snapshot::take(c2, "right after the load");
    for (auto it = first.keys.begin(); it != first.keys.end();)
      it = it->second.type == "hash" && it->second.fields.empty() && it->second.hidden() > 0 ? first.keys.erase(it)
                                                                                             : std::next(it);
    check_same(expected, first, DiffOptions{.stored_counts = false});

    // Then every due field is reclaimed (HLEN counts only survivors) and emptied hashes are gone.
    std::vector<std::string> last;
    const bool settled = poll(milliseconds(10000), [&] {
      last = expirykit::state::diff(expected, Snapshot::take(c2, "after reclaiming"));
      return last.empty();
    });
    INFO("waited 10 s for the due fields to be reclaimed after the load; still different:\n" << join(last));
    CHECK(settled);
    CHECK(c2("EXISTS", "allgone", "allgone-big") == Reply::integer(0));
    CHECK(c2("HLEN", "mixed") == Reply::integer(5));
    CHECK(c2("HMGET", "mixed", "k0", "k1", "p", "L0", "L1", "s0") ==
          Reply::array({Reply::string("keep0"), Reply::string("keep1"), Reply::string("persistent"),
                        Reply::string(std::string(200, 'L')), Reply::string(std::string(100, 'M')), Reply::nil()}));
    // Values longer than hash-max-listpack-value force the hashtable encoding.
    CHECK(c2("OBJECT", "ENCODING", "mixed") == Reply::string("hashtable"));
    const Reply enc = c2("OBJECT", "ENCODING", "half");
    INFO("OBJECT ENCODING half: " << enc);
    CHECK((enc == Reply::string("listpack") || enc == Reply::string("listpackex") || enc == Reply::string("hashtable")));
  }
}

TEST_CASE_METHOD(ServerFixture, "Field TTLs keep counting down across a restart from the AOF, rewritten or not",
                 "[durability]") {
  require_field_ttl();
  const Mode mode = GENERATE(Mode::aof, Mode::aof_rewrite, Mode::aof_rewrite_no_preamble);
  DYNAMIC_SECTION(name(mode)) {
    auto srv = fresh_server(options(mode), "restart from AOF");
    auto c = srv->client();
    // 4 hashes x 60 fields, each TTL set RELATIVE (HPEXPIRE / HEXPIRE): a replay that turned
    // them back into relative TTLs would restart their countdown at the load.
    Batch b;
    for (int k = 0; k < 4; ++k) {
      const std::string key = "cd:" + S(k);
      Argv hset{"HSET", key}, fields;
      for (int i = 0; i < 60; ++i) {
        hset.insert(hset.end(), {"f" + S(i), "v" + S(i)});
        b.add(k % 2 ? Argv{"HEXPIRE", key, S(600 + k * 60 + i), "FIELDS", "1", "f" + S(i)}
                    : Argv{"HPEXPIRE", key, S(600000 + k * 1000 + i * 17), "FIELDS", "1", "f" + S(i)},
              Reply::ints({1}));
      }
      b.cmds.insert(b.cmds.begin(), hset);
      b.want.insert(b.want.begin(), Reply::integer(60));
    }
    b.run(c);
    persist(c, mode);
    const Snapshot before = Snapshot::take(c, "before restart");
    auto hpttl = [](Client& cl) {
      std::vector<Argv> cmds;
      for (int k = 0; k < 4; ++k) {
        Argv a{"HPTTL", "cd:" + S(k), "FIELDS", "60"};
        for (int i = 0; i < 60; ++i) a.push_back("f" + S(i));
        cmds.push_back(a);
      }
      return cl.pipeline(cmds);
    };
    const auto ttl_before = hpttl(c);
    const auto t1 = clk::now();
    const int64_t stopped_at = server::now_ms(c);
    srv->stop(Shutdown::nosave);
    server::wait_until_past(client(), stopped_at + 300);  // a downtime long enough to see a reset
    srv->start();
    auto c2 = srv->client();
    const auto t2 = clk::now();
    const auto ttl_after = hpttl(c2);
    const int64_t down_ms = std::chrono::duration_cast<milliseconds>(t2 - t1).count();

    std::vector<std::string> bad;
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 60; ++i) {
        const long long b4 = ttl_before[k][i].as_integer(), af = ttl_after[k][i].as_integer();
        if (!(af > 0 && af <= b4 - down_ms))
          bad.push_back("HPTTL cd:" + S(k) + " FIELDS 1 f" + S(i) + ": " + S(b4) + " before, " + S(af) + " after");
      }
    INFO("downtime measured: " << down_ms << " ms; fields whose TTL did not go down by at least that much:\n" << join(bad));
    CHECK(bad.empty());
    check_same(before, Snapshot::take(c2, std::string("after restart from the ") + name(mode)));
  }
}

TEST_CASE_METHOD(ServerFixture, "DUMP and RESTORE keep every absolute field expiry, and RESTORE of due fields lets them expire",
                 "[durability]") {
  require_field_ttl();
  require_debug("DEBUG SET-ACTIVE-EXPIRE");
  auto& c = client();
  const int64_t t0 = server::now_ms(c);
  fill_rich(c, t0, false);
  Batch b;
  for (const std::string k : {"big", "user:7", "wide", "keyttl", "hgetex"}) {
    const Reply payload = c("DUMP", k);
    REQUIRE(payload.is_string());
    b.add({"RESTORE", "r:" + k, "0", payload.str()}, Reply::ok());
  }
  // RESTORE onto an existing key: BUSYKEY without REPLACE, the payload's fields and TTLs with it.
  const Reply payload = c("DUMP", "user:8");
  b.add({"HSETEX", "r:replaced", "PX", "900000", "FIELDS", "2", "token", "other", "x", "1"}, Reply::integer(1));
  b.run(c);
  const Reply busy = c("RESTORE", "r:replaced", "0", payload.str());
  INFO("RESTORE onto an existing key without REPLACE replied " << busy);
  CHECK(busy.is_error_starting("BUSYKEY"));
  CHECK(c("RESTORE", "r:replaced", "0", payload.str(), "REPLACE") == Reply::ok());

  const Snapshot s = Snapshot::take(c, "after RESTORE");
  for (const std::string k : {"big", "user:7", "wide", "hgetex"}) {
    INFO("RESTORE r:" << k << " of DUMP " << k << ":\n" << join(same_key(s, k, "r:" + k)));
    CHECK(same_key(s, k, "r:" + k).empty());
  }
  // RESTORE with TTL 0 gives the key no key TTL; its field TTLs come from the payload.
  CHECK(s.keys.at("r:keyttl").fields == s.keys.at("keyttl").fields);
  CHECK_FALSE(s.keys.at("r:keyttl").expire_ms.has_value());
  INFO("RESTORE r:replaced REPLACE of DUMP user:8:\n" << join(same_key(s, "user:8", "r:replaced")));
  CHECK(same_key(s, "user:8", "r:replaced").empty());

  // A payload whose field deadlines have passed by the time of RESTORE.
  const int64_t t1 = server::now_ms(c), far = t1 + 60 * kMinute;
  Batch()
      .add({"HSET", "due", "a", "1", "b", "2", "c", "3", "d", "4"}, Reply::integer(4))
      .add({"HPEXPIREAT", "due", S(t1 + 300), "FIELDS", "2", "a", "b"}, Reply::ints({1, 1}))
      .add({"HPEXPIREAT", "due", S(far), "FIELDS", "1", "c"}, Reply::ints({1}))
      .add({"HSETEX", "alldue", "PXAT", S(t1 + 300), "FIELDS", "2", "x", "1", "y", "2"}, Reply::integer(1))
      .run(c);
  const Reply due = c("DUMP", "due"), alldue = c("DUMP", "alldue");
  REQUIRE(due.is_string());
  REQUIRE(alldue.is_string());
  server::wait_until_past(c, t1 + 300);
  REQUIRE(c("DEBUG", "SET-ACTIVE-EXPIRE", "0") == Reply::ok());  // "right after" is then deterministic
  CHECK(c("RESTORE", "r:due", "0", due.str()) == Reply::ok());
  CHECK(c("RESTORE", "r:alldue", "0", alldue.str()) == Reply::ok());
  // The restored hashes exist, with their due fields stored but hidden from every read.
  CHECK(c("EXISTS", "r:due", "r:alldue") == Reply::integer(2));
  CHECK(c("HPEXPIRETIME", "r:due", "FIELDS", 4, "a", "b", "c", "d") == Reply::ints({-2, -2, far, -1}));
  CHECK(c("HGETALL", "r:alldue") == Reply::array({}));
  CHECK(c("HMGET", "r:due", "a", "b", "c", "d") ==
        Reply::array({Reply::nil(), Reply::nil(), Reply::string("3"), Reply::string("4")}));
  REQUIRE(c("DEBUG", "SET-ACTIVE-EXPIRE", "1") == Reply::ok());
  // Active expiry then reclaims them: r:due keeps c and d, r:alldue goes.
  Reply exists, hlen;
  const bool reclaimed = poll(milliseconds(10000), [&] {
    exists = c("EXISTS", "r:alldue");
    hlen = c("HLEN", "r:due");
    return exists == Reply::integer(0) && hlen == Reply::integer(2);
  });
  INFO("waited 10 s for active expiry after RESTORE: EXISTS r:alldue " << exists << ", HLEN r:due " << hlen);
  CHECK(reclaimed);
}

TEST_CASE_METHOD(ServerFixture, "COPY and RENAME of hashes keep every absolute field expiry, also across a restart",
                 "[durability]") {
  require_field_ttl();
  const Mode mode = GENERATE(Mode::bgsave, Mode::aof);
  DYNAMIC_SECTION(name(mode)) {
    auto srv = fresh_server(options(mode), "restart after COPY and RENAME");
    auto c = srv->client();
    fill_rich(c, server::now_ms(c), identity().caps.hgetdel);
    const Snapshot source = take_rich(c, "before COPY and RENAME");
    Batch()
        .add({"COPY", "big", "big:copy"}, Reply::integer(1))
        .add({"COPY", "user:0", "user:0:copy"}, Reply::integer(1))
        .add({"COPY", "keyttl", "keyttl:copy"}, Reply::integer(1))
        .add({"COPY", "wide", "user:1", "REPLACE"}, Reply::integer(1))  // over an existing hash
        .add({"RENAME", "hgetex", "hgetex:renamed"}, Reply::ok())
        .add({"RENAME", "user:2", "user:3"}, Reply::ok())  // over an existing hash
        .run(c);
    const Snapshot before = Snapshot::take(c, "after COPY and RENAME");
    // Each copy holds its source's fields, values and absolute expiries, and the key TTL.
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"big", "big:copy"}, {"user:0", "user:0:copy"}, {"keyttl", "keyttl:copy"}, {"wide", "user:1"}}) {
      const auto d = same_key(before, from, to);
      INFO("COPY " << from << " " << to << ":\n" << join(d));
      CHECK(d.empty());
    }
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"hgetex", "hgetex:renamed"}, {"user:2", "user:3"}}) {
      Snapshot was;
      was.source = "before RENAME";
      was.keys[to] = source.keys.at(from);
      Snapshot now;
      now.source = "RENAME " + from + " " + to;
      now.keys[to] = before.keys.at(to);
      check_same(was, now);
      CHECK(before.keys.count(from) == 0);
    }
    persist(c, mode);
    srv->stop(Shutdown::nosave);
    srv->start();
    auto c2 = srv->client();
    check_same(before, Snapshot::take(c2, std::string("after restart from the ") + name(mode)));
  }
}
