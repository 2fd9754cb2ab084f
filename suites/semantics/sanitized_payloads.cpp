// Deep sanitization of DUMP payloads and RDB files that hold field TTLs (issue 22: "unsent:
// sanitize-dump-payload yes"). With `sanitize-dump-payload yes` the server checks the whole
// structure of every listpack and hash it reads from a RESTORE payload or an RDB file before it
// accepts it (redis.conf and valkey.conf, "sanitize-dump-payload"; an RDB load and a RESTORE
// share the check). A hash with volatile fields is stored in its own forms (Redis: listpackex,
// or hashtable with per-field expiry metadata; Valkey 9: hashtable with field TTLs), so a
// sanitizer that does not know them refuses a valid payload ("Bad data format") or loads it
// wrong. Both tests here run on a server of their own started with the option: Redis 8.0.6 and
// 8.6.3 report it (CONFIG GET); Valkey 9.1.2 accepts it at start-up as a deprecated no-op,
// answers nothing to CONFIG GET and refuses CONFIG SET, and always validates what it loads
// (valkey-io/valkey#3721; checked live 2026-12-06). The model (state::Twin) is the
// specification of every reply and of the whole state after it.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/property/property.hpp>

using namespace expirykit;
using catch2::TwinFixture;
using resp::Reply;

namespace {
struct Sanitizing : TwinFixture {
  /// A server of the test's own with deep sanitization on (SKIPs in external mode).
  std::unique_ptr<process::Server> sanitizing_server() {
    process::ServerOptions o;
    o.set("sanitize-dump-payload", "yes");
    return fresh_server(std::move(o), "started with sanitize-dump-payload yes");
  }
};
}  // namespace

TEST_CASE_METHOD(Sanitizing, "sanitize-dump-payload yes: DUMP and RESTORE of hashes with field TTLs in every encoding, "
                              "then DEBUG RELOAD",
                 "[semantics][dump]") {
  require_field_ttl();
  const model::Dialect d = dialect();
  auto srv = sanitizing_server();
  resp::Client c = srv->client();
  // Redis reports the option; Valkey 9.1.2 takes it as a deprecated no-op and always validates
  // what it loads (valkey-io/valkey#3721): CONFIG GET names nothing.
  const Reply cfg = c("CONFIG", "GET", "sanitize-dump-payload");
  if (identity().flavor == server::Flavor::valkey && cfg == Reply::array({})) {
    UNSCOPED_INFO("valkey: sanitize-dump-payload is deprecated, payloads are always validated (valkey-io/valkey#3721)");
  } else {
    REQUIRE(cfg == Reply::strings({"sanitize-dump-payload", "yes"}));
  }
  state::Twin::Options topt;
  topt.server = identity();
  state::Twin t(c, d, topt);
  auto both = [&t](const resp::Argv& a) {
    const state::Step s = t.run(a);
    INFO(s.describe());
    CHECK(s.ok);
    return s.server;
  };
  // small: the listpack forms (Redis listpackex); big: 600 fields, past hash-max-listpack-entries
  // (hashtable on both); wide: a 2 KB value, past hash-max-listpack-value.
  resp::Argv big{"HSET", "big"}, big_ttl{"HPEXPIRE", "big", "600000", "FIELDS", "300"};
  for (int i = 0; i < 600; ++i) {
    big.push_back("f" + std::to_string(i));
    big.push_back("v" + std::to_string(i));
    if (i % 2 == 0) big_ttl.push_back("f" + std::to_string(i));
  }
  REQUIRE(both({"HSET", "small", "a", "1", "b", "2", "c", "3"}) == Reply::integer(3));
  REQUIRE(both({"HPEXPIRE", "small", "600000", "FIELDS", "2", "a", "b"}) == Reply::ints({1, 1}));
  REQUIRE(both(big) == Reply::integer(600));
  REQUIRE(both(big_ttl).is_array());
  REQUIRE(both({"HSET", "wide", "a", std::string(2048, 'x'), "b", "2"}) == Reply::integer(2));
  REQUIRE(both({"HPEXPIRE", "wide", "600000", "FIELDS", "1", "a"}) == Reply::ints({1}));
  for (const std::string k : {"small", "big", "wide"}) {
    INFO("RESTORE of the DUMP of " << k);
    CHECK(both({"RESTORE", k + ".copy", "0", std::string(state::Twin::dump_ref) + k}) == Reply::ok());
    CHECK(both({"RESTORE", k + ".abs", std::to_string(t.server_time() + 600000), std::string(state::Twin::dump_ref) + k,
                "ABSTTL"}) == Reply::ok());
    CHECK(both({"OBJECT", "ENCODING", k + ".copy"}).is_string());
  }
  // A payload with a field past its deadline, not yet reclaimed (active expiry paused).
  REQUIRE(t.set_active_expire(false) == Reply::ok());
  REQUIRE(both({"HPEXPIRE", "small", "1", "FIELDS", "1", "c"}) == Reply::ints({1}));
  REQUIRE(both({"HPEXPIRE", "big", "1", "FIELDS", "2", "f1", "f3"}) == Reply::ints({1, 1}));
  t.wait_until_past(t.history().back().after_ms + 1, 5);
  CHECK(both({"RESTORE", "small.stale", "0", std::string(state::Twin::dump_ref) + "small"}) == Reply::ok());
  CHECK(both({"RESTORE", "big.stale", "0", std::string(state::Twin::dump_ref) + "big"}) == Reply::ok());
  CHECK(both({"HLEN", "small.stale"}).is_integer());
  CHECK(both({"HGET", "small.stale", "c"}).is_nil());
  REQUIRE(t.set_active_expire(true) == Reply::ok());
  const auto diffs = t.compare_state();
  INFO("after the RESTOREs:\n" << catch2::detail::one_per_line(diffs, "  "));
  CHECK(diffs.empty());

  // The same forms through an RDB file: DEBUG RELOAD saves and loads it with the sanitizer on.
  // The keys holding a field past its deadline go first (a load may drop such a field: the
  // model's load rules are not what this checks), the copies with only far TTLs stay.
  for (const std::string k : {"small", "small.stale", "big", "big.stale"}) CHECK(both({"DEL", k}) == Reply::integer(1));
  const Reply reload = c("DEBUG", "RELOAD");
  REQUIRE(reload == Reply::ok());
  const auto after = t.compare_state();
  INFO("after DEBUG RELOAD:\n" << catch2::detail::one_per_line(after, "  "));
  CHECK(after.empty());
}

TEST_CASE_METHOD(Sanitizing, "sanitize-dump-payload yes: random sequences, their DUMPs and RESTOREs included, agree "
                              "with the model",
                 "[semantics][dump][properties]") {
  require_field_ttl();
  auto srv = sanitizing_server();
  resp::Client c = srv->client();
  state::Twin::Options topt;
  topt.server = identity();
  state::Twin t(c, dialect(), topt);
  // Budget (property/property.hpp): rounds of 50 sequences of up to 40 commands while 4 s last.
  auto r = property::check_sequences(t, property::PropertyBudget{50, 40, 4, catch2::current_test_name()});
  UNSCOPED_INFO(r.sequences << " sequences, " << r.commands << " commands in " << r.seconds << " s, seed " << r.seed);
  if (!r.ok) FAIL(r.report);
  // The generators' RESTOREs of DUMP payloads and of stale templates were sent and modelled.
  const auto cov = t.coverage();
  const auto it = cov.find("RESTORE");
  REQUIRE(it != cov.end());
  CHECK(it->second.modelled > 0);
}
