// What our token layout costs in server memory (memory::Probe: used_memory delta per user on
// fresh servers, see expirykit/memory/probe.hpp for the method), against the figures we
// committed in memory-baselines/<server line>.json. Re-record them on purpose after a change:
//   EXPIRYKIT_UPDATE_BASELINES=1 EXPIRYKIT_SERVER=valkey-9.1 ./session_tokens_tests "[memory]"
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/memory/layouts.hpp>
#include <expirykit/memory/matchers.hpp>
#include <expirykit/memory/probe.hpp>

#ifndef TOKENS_BASELINE_DIR
#define TOKENS_BASELINE_DIR "memory-baselines"
#endif

using namespace expirykit;
using expirykit::catch2::ServerFixture;

namespace {

/// A 32-character session token, the same for (user, device) on every run.
std::string token(std::size_t user, std::size_t device) {
  std::uint64_t z = user * 2 + device + 0x9E3779B97F4A7C15ULL;
  std::string out = "tk";  // a letter first: never stored as an integer
  while (out.size() < 32) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    out += "0123456789abcdef"[z & 15];
  }
  return out;
}

std::string key(std::string_view prefix, std::size_t user, std::string_view suffix = {}) {
  return std::string(prefix) + "session:" + std::to_string(user) + std::string(suffix);
}

/// Our layout: one hash per user, a field per device (web, app), each field with its own
/// absolute expiry (paced 1 ms apart per user, so the figure does not depend on load speed:
/// see LayoutParams::expire_at_ms). Item = user.
memory::Layout user_tokens(std::size_t users) {
  memory::Layout l;
  l.name = "user-tokens";
  l.description = "HSETEX session:<i> PXAT <t> FIELDS 2 web <32 B> app <32 B>";
  l.unit = "user";
  l.items = l.steps = l.key_count = users;
  l.params.n = users;
  l.params.value_size = 32;
  l.params.expire_at_ms = memory::aligned_expiry_ms();
  l.params.expire_step_ms = 1;
  l.needs_hsetex = true;
  l.field_ttl = true;
  l.fields_per_hash = 2;
  l.command = [at = l.params.expire_at_ms](std::string_view pre, std::size_t i) -> resp::Argv {
    return {"HSETEX", key(pre, i), "PXAT", std::to_string(at + static_cast<long long>(i)),
            "FIELDS", "2", "web", token(i, 0), "app", token(i, 1)};
  };
  l.key = [](std::string_view pre, std::size_t i) { return key(pre, i); };
  return l;
}

/// The alternative we did not take: a string key per device with a key TTL. Item = user.
memory::Layout user_token_strings(std::size_t users) {
  memory::Layout l;
  l.name = "user-token-strings";
  l.description = "SET session:<i>:web <32 B> PXAT <t>; SET session:<i>:app <32 B> PXAT <t>";
  l.unit = "user";
  l.items = l.key_count = users;
  l.steps = 2 * users;
  l.params.n = users;
  l.params.value_size = 32;
  l.params.expire_at_ms = memory::aligned_expiry_ms();
  l.params.expire_step_ms = 1;
  l.command = [at = l.params.expire_at_ms](std::string_view pre, std::size_t step) -> resp::Argv {
    const std::size_t i = step / 2, device = step % 2;
    return {"SET", key(pre, i, device ? ":app" : ":web"), token(i, device), "PXAT",
            std::to_string(at + static_cast<long long>(i))};
  };
  l.key = [](std::string_view pre, std::size_t i) { return key(pre, i, ":web"); };
  return l;
}

}  // namespace

// Probes start fresh servers of the binary the fixture runs (EXPIRYKIT_SERVER), never the
// shared one: a server that ever had a replica, or holds other keys, measures wrong.
class MemoryFixture : public ServerFixture {
 protected:
  memory::ProbeOptions probe_options(int repetitions) {
    require(identity().caps.hsetex, "HSETEX (the token layout uses it)");
    require_own_server("memory probes start fresh servers");
    memory::ProbeOptions o;
    o.repetitions = repetitions;
    o.server.binary = target().owned()->binary();
    return o;
  }
};

TEST_CASE_METHOD(MemoryFixture, "Memory: a user's tokens cost what our committed baseline says", "[memory]") {
  const auto m = memory::Probe(probe_options(3)).run(user_tokens(10000));
  // Fails when the median exceeds the baseline by more than its tolerance (3% or 1 B). A server
  // line without a file is gated against the newest older line of its flavor; with none at all
  // it FAILs with NO BASELINE and how to record one (docs/reference/memory/matchers.md).
  memory::check_against_baseline(m, memory::baseline_dir(TOKENS_BASELINE_DIR) / (m.line + ".json"));
}

TEST_CASE_METHOD(MemoryFixture, "Memory: a user's token hash costs at most twice the string-per-device layout",
                 "[memory]") {
  const auto o = probe_options(1);
  const auto hash = memory::Probe(o).run(user_tokens(5000));
  const auto strings = memory::Probe(o).run(user_token_strings(5000));
  INFO(hash.summary() << "\n" << strings.summary());
  CHECK(hash.stats.median <= 2.0 * strings.stats.median);
}

TEST_CASE_METHOD(MemoryFixture, "Encoding: a user's token hash stays compact (listpack or listpackex)", "[memory]") {
  auto o = probe_options(1);
  o.stable = std::chrono::milliseconds(0);  // the census needs no settled figure
  const auto m = memory::Probe(o).run(user_tokens(640));
  // PASS when every sampled hash is compact; FAIL when not; a known issue of the server
  // (Valkey 9.1.2: a field TTL makes a hashtable, valkey-io/valkey#2618) is a SKIP that names
  // it, and turns into "FIXED ..." the day a release keeps such hashes compact.
  memory::check_compact(identity(), m, /*has_field_ttl=*/true);
}
