// state::Snapshot::take on a live server (the provisioned default, Valkey 9.1.2, or
// EXPIRYKIT_SERVER) against Snapshot::of_model of the same state, built with state::Twin.
#include <catch2/catch_test_macros.hpp>

#include <expirykit/model/model.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/state/snapshot.hpp>
#include <expirykit/state/twin.hpp>

using namespace expirykit;
using resp::Argv;
using resp::Reply;
using Lines = std::vector<std::string>;

namespace {
std::string all_lines(const Lines& ls) {
  std::string out;
  for (const auto& l : ls) out += l + "\n";
  return out;
}
void run_ok(state::Twin& t, const Argv& argv) {
  auto step = t.run(argv);
  INFO(step.describe());
  REQUIRE(step.ok);
}
model::Dialect dialect_of(resp::Client& c) {
  const auto id = server::Identity::probe(c);
  auto d = model::Dialect::for_server(server::to_string(id.flavor), id.version.major, id.version.minor);
  if (!d) SKIP("not supported by " << id.to_string() << ": no model dialect (no hash field TTLs)");
  return *d;
}
}  // namespace

TEST_CASE("Snapshot::take of a prepared keyspace equals of_model of the same state", "[state][snapshot]") {
  process::Server s;
  auto c = s.client();
  state::Twin t(c, dialect_of(c));
  const std::string bin_value("bin\0val\nue", 10);
  run_ok(t, {"SET", "s1", "hello"});
  run_ok(t, {"PEXPIRE", "s1", "600000"});
  run_ok(t, {"SET", "s2", bin_value});
  run_ok(t, {"HSET", "plain", "a", "1", "b", "2"});
  run_ok(t, {"HSETEX", "ttl", "PX", "600000", "FIELDS", "2", "x", "1", "y", "2"});
  run_ok(t, {"HSET", "mix", "p", "1", "q", "2"});
  run_ok(t, {"HPEXPIRE", "mix", "700000", "FIELDS", "1", "q"});
  run_ok(t, {"PEXPIRE", "mix", "800000"});
  run_ok(t, {"HSET", "bin key", "with space", "v1", "new\nline", "v2", "", "empty name"});
  run_ok(t, {"HPEXPIRE", "bin key", "600000", "FIELDS", "2", "new\nline", ""});
  // Not modelled: a list, written on the server only.
  REQUIRE(c("RPUSH", "l", "a", "b") == Reply::integer(2));
  REQUIRE(c("PEXPIRE", "l", 600000) == Reply::integer(1));

  const auto server = state::Snapshot::take(c, "server");
  const auto model = state::Snapshot::of_model(t.model(), server.at_ms);
  CHECK(server.keys.size() == 7);
  // What take() read, spot-checked against the server directly.
  const auto& bk = server.keys.at("bin key");
  CHECK(bk.type == "hash");
  CHECK(bk.stored == 3);
  CHECK(bk.fields.at("with space") == state::FieldSnapshot{"v1", std::nullopt});
  CHECK(bk.fields.at("").value == "empty name");
  CHECK(bk.fields.at("").expire_ms == c("HPEXPIRETIME", "bin key", "FIELDS", 1, "")[0].as_integer());
  CHECK(bk.fields.at("new\nline").expire_ms.has_value());
  CHECK(server.keys.at("s2").value == bin_value);
  CHECK(server.keys.at("mix").expire_ms == c("PEXPIRETIME", "mix").as_integer());
  CHECK_FALSE(server.keys.at("plain").expire_ms.has_value());
  const auto& l = server.keys.at("l");
  CHECK(l.type == "list");
  REQUIRE(l.expire_ms.has_value());

  // Exactly equal (no tolerance: the twin adopted the deadlines the server computed), except
  // the list the model does not know.
  const auto d = state::diff(model, server);
  INFO(all_lines(d));
  CHECK(d == Lines{"server: l: list, key expires " + std::to_string(*l.expire_ms) + ", model: key l is missing"});
  // A changed value on the server is seen.
  REQUIRE(c("HSET", "bin key", "with space", "changed") == Reply::integer(0));
  const auto after = state::Snapshot::take(c, "server");
  CHECK(state::diff(model, after).size() == 2);
}

TEST_CASE("A logically expired, unreclaimed field is hidden from take() and counted by hidden()", "[state][snapshot]") {
  process::Server s;
  auto c = s.client();
  state::Twin t(c, dialect_of(c));
  REQUIRE(t.set_active_expire(false) == Reply::ok());
  run_ok(t, {"HSET", "h", "a", "1", "b", "2"});
  run_ok(t, {"HPEXPIRE", "h", "1", "FIELDS", "1", "a"});
  const auto deadline = t.model().raw("h")->hash().fields.at("a").expire_ms;
  REQUIRE(deadline.has_value());
  t.wait_until_past(*deadline);

  const auto server = state::Snapshot::take(c, "server");
  REQUIRE(server.at_ms > *deadline);
  const auto& h = server.keys.at("h");
  CHECK(h.stored == 2);
  CHECK(h.hidden() == 1);
  CHECK(h.fields.size() == 1);
  CHECK(h.fields.count("b") == 1);
  CHECK(h.hidden_names.empty());  // a server cannot name them
  CHECK(c("HLEN", "h") == Reply::integer(2));  // the snapshot reclaimed nothing

  const auto model = state::Snapshot::of_model(t.model(), server.at_ms);
  CHECK(model.keys.at("h").hidden_names == std::vector<std::string>{"a"});
  CHECK(state::diff(model, server).empty());
  // A model that reclaimed (active expiry done) differs from this server only in HLEN.
  t.model().reclaim(server.at_ms);
  const auto d = state::diff(state::Snapshot::of_model(t.model(), server.at_ms), server);
  INFO(all_lines(d));
  CHECK(d == Lines{"server: h holds 1 logically expired, unreclaimed field(s) (HLEN 2), model: 0 (HLEN 1)"});
  REQUIRE(t.set_active_expire(true) == Reply::ok());
}
