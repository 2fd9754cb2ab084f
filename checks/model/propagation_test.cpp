// model::propagated (model/propagation.hpp): the form each dialect writes to replicas and the AOF.
// Every expected form below was read from a live server's AOF increment on 2026-12-05 (Valkey
// 9.1.2, Redis 8.0.6 and 8.6.3; suites/durability/propagation.cpp runs the same commands live),
// with the live deadline replaced by the model's (T0 + the relative time), except where a line
// says "the model's own rule".
#include <catch2/catch_test_macros.hpp>

#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/propagation.hpp>

#include "session.hpp"

using ekcheck::Session;
using ekcheck::T0;
using expirykit::model::Dialect;
using expirykit::resp::Argv;

namespace {

/// Runs `setup` then `cmd` on a fresh model of `d` at T0; what `cmd` propagates.
std::optional<std::vector<Argv>> after(const Dialect& d, const std::vector<std::string>& setup, const std::string& cmd) {
  Session s(d);
  for (const auto& line : setup) s.run(line);
  const auto before = s.ks;
  const Argv argv = Session::words(cmd);
  const auto r = s.run(argv);
  return expirykit::model::propagated(d, argv, r, before, s.ks, s.now);
}

std::vector<Argv> lines(std::initializer_list<const char*> ls) {
  std::vector<Argv> out;
  for (const char* l : ls) out.push_back(Session::words(l));
  return out;
}

const std::string abs100 = std::to_string(T0 + 100'000);
const std::optional<std::vector<Argv>> nothing = std::vector<Argv>{};

}  // namespace

TEST_CASE("propagated: HEXPIRE names the set fields (Redis) or its own list (Valkey); past times are HDELs",
          "[model][propagation]") {
  const Dialect v = Dialect::valkey_9_1(), r = Dialect::redis_8_0();
  const std::vector<std::string> h = {"HSET h a 1 b 2 c 3", "HEXPIRE h 50 FIELDS 1 a"};
  CHECK(after(v, h, "HEXPIRE h 100 NX FIELDS 3 a b z") ==
        lines({("HPEXPIREAT h " + abs100 + " NX FIELDS 3 a b z").c_str()}));
  CHECK(after(r, h, "HEXPIRE h 100 NX FIELDS 3 a b z") == lines({("HPEXPIREAT h " + abs100 + " NX FIELDS 1 b").c_str()}));
  CHECK(after(v, h, "HEXPIREAT h 1 FIELDS 3 a b z") == lines({"HDEL h a b"}));
  CHECK(after(r, h, "HEXPIREAT h 1 FIELDS 3 a b z") == lines({"MULTI", "HDEL h a", "HDEL h b", "EXEC"}));
  CHECK(after(r, h, "HEXPIRE h 0 FIELDS 1 a") == lines({"HDEL h a"}));
  CHECK(after(v, h, "HEXPIREAT h 1 FIELDS 2 a a") == lines({"HDEL h a"}));  // codes 2 -2
  CHECK(after(v, {"HSET h a 1 b 2"}, "HEXPIRE h 100 XX FIELDS 2 a b") == nothing);  // nothing set
  CHECK(after(r, {"HSET h a 1 b 2"}, "HEXPIRE h 100 XX FIELDS 2 a b") == nothing);
  CHECK(after(v, h, "HEXPIRE h 100 FIELDS 2 x") == nothing);  // refused: nothing written (model's own rule)
}

TEST_CASE("propagated: Redis 8.6 rewrites in place, a condition or a time given after FIELDS stays there",
          "[model][propagation]") {
  const Dialect r = Dialect::redis_8_6();
  CHECK(after(r, {"HSET h a 1 b 2"}, "HEXPIRE h 100 FIELDS 2 a z NX") ==
        lines({("HPEXPIREAT h " + abs100 + " FIELDS 1 a NX").c_str()}));
  CHECK(after(r, {"HSET h a 1"}, "HSETEX h FIELDS 1 a 9 EX 100") ==
        lines({("HSETEX h FIELDS 1 a 9 PXAT " + abs100).c_str()}));
  CHECK(after(r, {"HSET h a 1"}, "HSETEX h EX 100 FXX FIELDS 1 a 9") ==
        lines({("HSETEX h PXAT " + abs100 + " FXX FIELDS 1 a 9").c_str()}));
  CHECK(after(r, {"HSET h a 1 b 2"}, "HGETEX h FIELDS 2 a z EX 100") ==
        lines({("HPEXPIREAT h " + abs100 + " FIELDS 2 a z").c_str()}));
}

TEST_CASE("propagated: HSETEX keeps FNX/FXX in place (Redis) or writes its own form without them (Valkey)",
          "[model][propagation]") {
  const Dialect v = Dialect::valkey_9_1(), r = Dialect::redis_8_0();
  CHECK(after(v, {"HSET h a 1"}, "HSETEX h FXX EX 100 FIELDS 1 a 9") ==
        lines({("HSETEX h PXAT " + abs100 + " FIELDS 1 a 9").c_str()}));
  CHECK(after(r, {"HSET h a 1"}, "HSETEX h FXX EX 100 FIELDS 1 a 9") ==
        lines({("HSETEX h FXX PXAT " + abs100 + " FIELDS 1 a 9").c_str()}));
  CHECK(after(v, {"HSET h a 1"}, "HSETEX h FXX KEEPTTL FIELDS 1 a 9") == lines({"HSETEX h KEEPTTL FIELDS 1 a 9"}));
  CHECK(after(r, {"HSET h a 1"}, "HSETEX h FXX KEEPTTL FIELDS 1 a 9") == lines({"HSETEX h FXX KEEPTTL FIELDS 1 a 9"}));
  CHECK(after(v, {"HSET h a 1"}, "HSETEX h FNX FIELDS 1 a 9") == nothing);  // the condition failed
  CHECK(after(v, {"HSET h a 1"}, "hsetex h keepttl fields 1 a 9") == lines({"hsetex h keepttl fields 1 a 9"}));
  CHECK(after(v, {"HSET h a 1"}, "hsetex h fxx ex 100 fields 1 a 9") ==
        lines({("hsetex h PXAT " + abs100 + " fields 1 a 9").c_str()}));
  // A past time: HDEL of what existed (Valkey) or of every field named (Redis).
  CHECK(after(v, {"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 2 a 9 n 8") == lines({"HDEL h a"}));
  CHECK(after(r, {"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 2 a 9 n 8") == lines({"MULTI", "HDEL h a", "HDEL h n", "EXEC"}));
  CHECK(after(v, {"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 1 n 8") == nothing);
  CHECK(after(r, {"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 1 n 8") == lines({"HDEL h n"}));
  // Duplicates: Redis one HDEL per field named, Valkey each field that existed, once.
  CHECK(after(r, {"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 2 a 1 a 2") == lines({"MULTI", "HDEL h a", "HDEL h a", "EXEC"}));
  CHECK(after(v, {"HSET h a 1"}, "HSETEX h PXAT 1 FIELDS 2 a 1 a 2") == lines({"HDEL h a"}));
  CHECK(after(v, {"HSET h b 1"}, "HSETEX h PXAT 1 FIELDS 2 a 1 a 2") == nothing);
}

TEST_CASE("propagated: HGETEX, HGETDEL, HPERSIST, HINCRBY and HINCRBYFLOAT per dialect", "[model][propagation]") {
  const Dialect v = Dialect::valkey_9_1(), r = Dialect::redis_8_0();
  const std::vector<std::string> h = {"HSET h a 1 b 2", "HEXPIRE h 100 FIELDS 1 a"};
  CHECK(after(v, h, "HGETEX h EX 100 FIELDS 3 a b z") == lines({("HPEXPIREAT h " + abs100 + " FIELDS 2 a b").c_str()}));
  CHECK(after(r, h, "HGETEX h EX 100 FIELDS 3 a b z") ==
        lines({("HPEXPIREAT h " + abs100 + " FIELDS 3 a b z").c_str()}));
  CHECK(after(v, h, "HGETEX h PERSIST FIELDS 3 a b z") == lines({"HPERSIST h FIELDS 1 a"}));
  CHECK(after(r, h, "HGETEX h PERSIST FIELDS 3 a b z") == lines({"HPERSIST h FIELDS 3 a b z"}));
  CHECK(after(r, {"HSET h a 1 b 2"}, "HGETEX h PERSIST FIELDS 2 a b") == nothing);  // no deadline removed
  CHECK(after(v, h, "HGETEX h PERSIST FIELDS 2 a a") == lines({"HPERSIST h FIELDS 1 a"}));
  CHECK(after(r, h, "HGETEX h PERSIST FIELDS 2 a a") == lines({"HPERSIST h FIELDS 2 a a"}));
  CHECK(after(v, h, "HGETEX h EX 100 FIELDS 1 z") == nothing);
  CHECK(after(v, h, "HGETEX h FIELDS 2 a b") == nothing);
  CHECK(after(v, h, "HGETDEL h FIELDS 3 a b z") == lines({"HGETDEL h FIELDS 3 a b z"}));
  CHECK(after(r, h, "HGETDEL h FIELDS 3 a b z") == lines({"HDEL h a b z"}));
  CHECK(after(r, h, "HGETDEL h FIELDS 1 z") == nothing);
  CHECK(after(v, h, "HPERSIST h FIELDS 3 a b z") == lines({"HPERSIST h FIELDS 3 a b z"}));
  CHECK(after(v, {"HSET h a 1 b 2"}, "HPERSIST h FIELDS 2 a b") == nothing);
  CHECK(after(v, h, "HINCRBY h a 5") == lines({("HSETEX h PXAT " + abs100 + " FIELDS 1 a 6").c_str()}));
  CHECK(after(r, h, "HINCRBY h a 5") == lines({"HINCRBY h a 5"}));
  CHECK(after(v, {"HSET h a 1"}, "HINCRBYFLOAT h a 1.5") == lines({"HSET h a 2.5"}));
  CHECK(after(r, {"HSET h a 1"}, "HINCRBYFLOAT h a 1.5") == lines({"HSETEX h KEEPTTL FIELDS 1 a 2.5"}));
  CHECK(after(v, {}, "HSET h a 1") == lines({"HSET h a 1"}));  // plain writes as given
  CHECK(after(v, h, "HSETNX h n 9") == lines({"HSET h n 9"}));   // Valkey: HSET in a hash with a deadline
  CHECK(after(r, h, "HSETNX h n 9") == lines({"HSETNX h n 9"}));
  CHECK(after(v, h, "HSETNX h a 9") == nothing);                 // it set nothing
  CHECK(after(v, h, "HDEL h zz") == nothing);
  CHECK_FALSE(after(v, {}, "GET h").has_value());  // not modelled here
  CHECK_FALSE(after(Dialect::redis_7_4(), {"HSET h a 1"}, "HINCRBYFLOAT h a 1.5").has_value());  // a plain HSET then
  // A reply that is not the command's success reply (a QUEUED inside MULTI) predicts nothing.
  Session s(v);
  s.run("HSET h a 1");
  for (const char* line : {"HEXPIRE h 100 FIELDS 1 a", "HSET h a 2", "HMSET h a 2", "HDEL h a", "HSETNX h n 1"})
    CHECK_FALSE(expirykit::model::propagated(v, Session::words(line), expirykit::resp::Reply::status("QUEUED"), s.ks, s.ks, s.now)
                    .has_value());
}

TEST_CASE("expiry_propagated: fields reclaimed past their deadline, as each dialect writes them", "[model][propagation]") {
  // Live (AOF increment, 2026-12-05): active expiry of a and b of {a, b, c} wrote `HDEL h b a`
  // (Valkey 9.1.2) and `HDEL h b`, `HDEL h a` (Redis 8.0.6, 8.6.3); of every field of {a, b},
  // `MULTI`, `HDEL h b a`, `UNLINK h`, `EXEC` (Valkey) and the two HDELs alone (Redis).
  const Dialect v = Dialect::valkey_9_1(), r = Dialect::redis_8_0(), r86 = Dialect::redis_8_6();
  auto reclaimed = [](const Dialect& d, const std::string& hset) {
    Session s(d);
    s.run(hset);
    s.run("HPEXPIRE h 100 FIELDS 2 a b");
    const auto before = s.ks;
    s.ks.reclaim(T0 + 200);
    return expirykit::model::canonical_deletions(expirykit::model::expiry_propagated(d, before, s.ks, "h"));
  };
  using expirykit::model::canonical_deletions;
  CHECK(reclaimed(v, "HSET h a 1 b 2 c 3") == canonical_deletions(lines({"HDEL h b a"})));
  CHECK(reclaimed(v, "HSET h a 1 b 2") == canonical_deletions(lines({"MULTI", "HDEL h b a", "UNLINK h", "EXEC"})));
  for (const Dialect& d : {r, r86}) {
    CHECK(reclaimed(d, "HSET h a 1 b 2 c 3") == canonical_deletions(lines({"HDEL h b", "HDEL h a"})));
    CHECK(reclaimed(d, "HSET h a 1 b 2") == canonical_deletions(lines({"HDEL h b", "HDEL h a"})));
  }
  // The order a server names the fields in does not matter; the commands and the fields do.
  CHECK(canonical_deletions(lines({"hdel h b a"})) == canonical_deletions(lines({"HDEL h a b"})));
  CHECK(canonical_deletions(lines({"HDEL h a"})) != canonical_deletions(lines({"HDEL h a b"})));
  CHECK(canonical_deletions(lines({"MULTI", "HDEL h a", "UNLINK h", "EXEC"})) !=
        canonical_deletions(lines({"HDEL h a", "MULTI", "UNLINK h", "EXEC"})));
  // A read that deleted two fields lazily (by_command): Redis wraps its HDELs in MULTI/EXEC (live
  // 8.0.6: HMGET, HGETEX, HRANDFIELD of two expired fields); active expiry does not.
  {
    Session s(r);
    s.run("HSET h a 1 b 2 c 3");
    s.run("HPEXPIRE h 100 FIELDS 2 a b");
    const auto before = s.ks;
    s.ks.reclaim(T0 + 200);
    CHECK(expirykit::model::expiry_propagated(r, before, s.ks, "h", true) ==
          lines({"MULTI", "HDEL h a", "HDEL h b", "EXEC"}));
    CHECK(expirykit::model::expiry_propagated(r, before, s.ks, "h") == lines({"HDEL h a", "HDEL h b"}));
  }
  // A key that went by its own key TTL: the fields due before it went as fields (their HDEL; the
  // key's own deletion is the server's DEL/UNLINK, not modelled), those due at or after it went
  // with the key (nothing); a hash whose every field fell due before its key TTL emptied (the
  // emptied form); a field without a deadline is never reclaimed; a key of another type after,
  // nothing.
  for (const auto& d : {v, r}) {
    CAPTURE(d.name);
    {
      Session s(d);
      s.run("HSET h a 1 b 2");
      s.run("HPEXPIRE h 100 FIELDS 1 a");  // before the key
      s.run("PEXPIRE h 150");
      const auto before = s.ks;
      s.ks.reclaim(T0 + 200);
      REQUIRE(s.ks.raw("h") == nullptr);
      CHECK(expirykit::model::expiry_propagated(d, before, s.ks, "h") == lines({"HDEL h a"}));
      Session other(d);
      other.run("SET h x");
      CHECK(expirykit::model::expiry_propagated(d, before, other.ks, "h").empty());
    }
    {
      Session s(d);
      s.run("HSET h a 1 b 2");
      s.run("HPEXPIRE h 150 FIELDS 1 a");  // at the key's deadline: the key takes it
      s.run("PEXPIRE h 150");
      const auto before = s.ks;
      s.ks.reclaim(T0 + 200);
      REQUIRE(s.ks.raw("h") == nullptr);
      CHECK(expirykit::model::expiry_propagated(d, before, s.ks, "h").empty());
    }
    {
      Session s(d);
      s.run("HSET h a 1 b 2");
      s.run("HPEXPIRE h 100 FIELDS 2 a b");  // every field before the key: the hash empties
      s.run("PEXPIRE h 150");
      const auto before = s.ks;
      s.ks.reclaim(T0 + 200);
      REQUIRE(s.ks.raw("h") == nullptr);
      CHECK(expirykit::model::expiry_propagated(d, before, s.ks, "h") ==
            (d.propagation.expiry_hdel_per_field ? lines({"HDEL h a", "HDEL h b"})
                                                 : lines({"MULTI", "HDEL h a b", "UNLINK h", "EXEC"})));
    }
  }
  // Nothing reclaimed, nothing written; a key that is no hash, nothing.
  Session s(v);
  s.run("HSET h a 1");
  CHECK(expirykit::model::expiry_propagated(v, s.ks, s.ks, "h").empty());
  CHECK(expirykit::model::expiry_propagated(v, s.ks, s.ks, "nokey").empty());
}

namespace {
/// Runs `setup`, moves the clock 10 ms on (past the 1 ms TTLs it set), then `cmd`; what
/// model::written gives for `cmd`.
std::optional<std::vector<Argv>> written_after(const Dialect& d, const std::vector<std::string>& setup, const std::string& cmd) {
  Session s(d);
  for (const auto& line : setup) s.run(line);
  s.advance(10);
  const auto before = s.ks;
  const Argv argv = Session::words(cmd);
  const auto r = s.run(argv);
  return expirykit::model::written(d, argv, r, before, s.ks, s.now);
}
}  // namespace

// Every form below was read live on Redis 8.0.6 and 8.6.3 (2026-12-06: MONITOR on a replica,
// and suites/durability/propagation.cpp through the AOF and the replication stream), with the
// model's deadline in place of the live one.
TEST_CASE("written: Redis deletes each expired field a command looks up first, in one MULTI with its own form; "
          "Valkey adds nothing",
          "[model][propagation]") {
  const Dialect r = Dialect::redis_8_0(), v = Dialect::valkey_9_1();
  const std::vector<std::string> ac = {"HSET h a 1 b 2 c 3", "HPEXPIRE h 1 FIELDS 2 a c"};
  CHECK(written_after(r, ac, "HMGET h a c b") == lines({"MULTI", "HDEL h a", "HDEL h c", "EXEC"}));
  CHECK(written_after(r, ac, "HGET h a") == lines({"HDEL h a"}));
  CHECK(written_after(r, ac, "HEXISTS h c") == lines({"HDEL h c"}));
  CHECK(written_after(r, ac, "HGET h b") == nothing);
  CHECK(written_after(r, ac, "HINCRBY h a 1") == lines({"MULTI", "HDEL h a", "HINCRBY h a 1", "EXEC"}));
  CHECK(written_after(r, ac, "HINCRBYFLOAT h c 1") == lines({"MULTI", "HDEL h c", "HSETEX h KEEPTTL FIELDS 1 c 1", "EXEC"}));
  CHECK(written_after(r, ac, "HSETNX h a 1") == lines({"MULTI", "HDEL h a", "HSETNX h a 1", "EXEC"}));
  CHECK(written_after(r, ac, "HSETEX h FNX FIELDS 2 a 9 c 9") ==
        lines({"MULTI", "HDEL h a", "HDEL h c", "HSETEX h FNX FIELDS 2 a 9 c 9", "EXEC"}));
  CHECK(written_after(r, ac, "HSETEX h FXX FIELDS 1 a 9") == lines({"HDEL h a"}));  // the condition fails: 0
  CHECK(written_after(r, ac, "HSETEX h PXAT 1 FIELDS 2 a 9 b 9") == lines({"MULTI", "HDEL h a", "HDEL h b", "EXEC"}));
  CHECK(written_after(r, ac, "HSETEX h FNX PXAT 1 FIELDS 1 a 9") == lines({"MULTI", "HDEL h a", "HDEL h a", "EXEC"}));
  CHECK(written_after(r, ac, "HGETDEL h FIELDS 2 a b") == lines({"MULTI", "HDEL h a", "HDEL h a b", "EXEC"}));
  CHECK(written_after(r, ac, "HGETEX h FIELDS 2 a b") == lines({"HDEL h a"}));
  CHECK(written_after(r, ac, "HSET h a 5") == lines({"HSET h a 5"}));  // looks nothing up first
  CHECK(written_after(r, ac, "HLEN h") == nothing);
  CHECK(written_after(r, ac, "HRANDFIELD h 2") == std::nullopt);  // samples at random: not modelled
  // Redis 8.6 takes the condition after FIELDS too (Dialect::keyword_order_free): the same lookup
  // (live 8.6.3: HDEL h a).
  CHECK(written_after(Dialect::redis_8_6(), ac, "HSETEX h FIELDS 1 a 9 FXX") == lines({"HDEL h a"}));
  // The key's own TTL passed: the key goes as a key (not modelled).
  CHECK(written_after(r, {"HSET k a 1", "PEXPIRE k 1"}, "HGET k a") == std::nullopt);
  // Valkey deletes nothing when a command reads an expired field: its own form alone.
  CHECK(written_after(v, ac, "HGET h a") == nothing);
  CHECK(written_after(v, ac, "HINCRBY h a 1") == lines({"HSET h a 1"}));  // in a hash storing a deadline (live 9.1.2)
  CHECK(expirykit::model::lazy_deletions(v, Session::words("HINCRBY h a 1"), Session(v).ks, T0) == nothing);
}

// COPY and RENAME look up no field: as given when they did something, else nothing
// (live through the replica's keyspace notifications in suites/durability/replica.cpp, COPY and
// RENAME scenarios, Valkey 9.1.2, Redis 8.0.6 and 8.6.3, 2026-12-06).
TEST_CASE("written: COPY and RENAME as given when they did something", "[model][propagation]") {
  for (const Dialect& d : {Dialect::redis_8_0(), Dialect::valkey_9_1()}) {
    INFO(d.name);
    const std::vector<std::string> hg = {"HSET h a 1", "HPEXPIRE h 100000 FIELDS 1 a", "HSET g b 2"};
    CHECK(written_after(d, hg, "COPY h k") == lines({"COPY h k"}));
    CHECK(written_after(d, hg, "COPY h g") == nothing);  // g exists, no REPLACE: 0
    CHECK(written_after(d, hg, "COPY h g REPLACE") == lines({"COPY h g REPLACE"}));
    CHECK(written_after(d, hg, "RENAME h k") == lines({"RENAME h k"}));
    CHECK(written_after(d, hg, "RENAME nokey k") == nothing);  // an error
    // A key whose own TTL has passed goes as a key (DEL / UNLINK): not modelled.
    CHECK(written_after(d, {"HSET h a 1", "PEXPIRE h 1"}, "COPY h k") == std::nullopt);
  }
}
