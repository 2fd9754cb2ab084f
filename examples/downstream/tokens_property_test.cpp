// Random command sequences over small hashes with field TTLs (the kit's generator: HSETEX,
// HGETEX, HEXPIRE*, HPERSIST, HGETDEL, transactions, scripts...) on the server and on the
// model; every reply and, after each sequence, every key must agree. A small budget for a
// pull-request run: one round of 20 sequences of up to 20 commands. EXPIRYKIT_PROP_SECONDS=300
// (or EXPIRYKIT_PROP_SCALE=10) makes it a nightly run without a code change.
#include <catch2/catch_test_macros.hpp>
#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/property/property.hpp>

using expirykit::catch2::current_test_name;
using expirykit::catch2::TwinFixture;
using expirykit::property::check_sequences;
using expirykit::property::PropertyBudget;

TEST_CASE_METHOD(TwinFixture, "Random token-store sequences: server and model agree") {
  require_field_ttl();
  twin().observe_events();  // keyspace notifications too (our cache invalidation listens to them)
  const auto r = check_sequences(twin(), PropertyBudget{20, 20, 0, current_test_name()});
  // On failure, the first line names the first differing command with both replies, the seed
  // and the command line that replays it; then the shrunk sequence as a valkey-cli script.
  if (!r.ok) FAIL(r.report);
  CHECK(r.sequences >= 20);
  CHECK(r.commands > 0);
}
