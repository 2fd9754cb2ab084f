// Memory after expiry at scale, each stage against the model (state, hexpired / del events,
// INFO counters) and used_memory measured: a 10,000-field hash of 1 KB values loses one field,
// then the other 9,999, and with them its memory (valkey-hfe.md checklist 88: "memory drops
// > 10 MB; del arrives"); five large hashes of which active expiry empties one and thins three
// (checklist 94: fully expired keys deleted, partial ones kept, counters exact, memory
// reclaimed). The drops asserted are below the bytes of the values freed (1 KB each), so
// allocator overhead and other allocations only make them larger.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <string>
#include <thread>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/server/info.hpp>

using expirykit::catch2::TwinFixture;
using expirykit::resp::Argv;
using expirykit::resp::Reply;

namespace {
std::string text_of(long long v) { return std::to_string(v); }

struct MemoryRelease : TwinFixture {
  /// The twin observing events and counters, active expiry running at hz 100.
  expirykit::state::Twin& running() { return observing_twin(true, 100); }
  /// `n` fields "<prefix><i>" of 1 KB values in `key`, written in HSETs of 500 fields.
  void fill(const std::string& key, const std::string& prefix, int n) {
    for (int from = 0; from < n; from += 500) {
      Argv a{"HSET", key};
      for (int i = from; i < n && i < from + 500; ++i) a.insert(a.end(), {prefix + text_of(i), std::string(1024, 'v')});
      REQUIRE(twin().run(a).ok);
    }
  }
  /// HPEXPIRE `ms` on fields "<prefix><from>" .. "<prefix><to - 1>" of `key`, 500 a command
  /// (each batch's deadline `ms` after it ran: a slow machine never sets a past one). Returns
  /// the latest deadline set (Unix ms, at most).
  int64_t expire_in(const std::string& key, const std::string& prefix, int from, int to, int64_t ms) {
    for (int b = from; b < to; b += 500) {
      const int e = std::min(to, b + 500);
      Argv a{"HPEXPIRE", key, text_of(ms), "FIELDS", text_of(e - b)};
      for (int i = b; i < e; ++i) a.push_back(prefix + text_of(i));
      const auto st = twin().run(a);
      INFO(st.describe());
      REQUIRE(st.ok);
    }
    return twin().history().back().after_ms + ms;
  }
  long long used_memory() { return expirykit::server::Info::fetch(client(), "memory").get_int("used_memory"); }
  /// used_memory once lazy freeing has drained (lazyfree_pending_objects 0), polled up to 10 s.
  long long settled_memory() {
    for (int i = 0; i < 500; ++i) {
      const auto m = expirykit::server::Info::fetch(client(), "memory");
      if (m.get_int("lazyfree_pending_objects", 0) == 0) return m.get_int("used_memory");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return used_memory();
  }
};
}  // namespace

TEST_CASE_METHOD(MemoryRelease, "A 10,000-field hash of 1 KB values: one field expires, then the rest, and its memory goes",
                 "[semantics][active][memory]") {
  running();
  const long long base = settled_memory();
  fill("big", "f", 10000);
  const long long full = settled_memory();
  INFO("used_memory: " << base << " before the hash, " << full << " with it");
  REQUIRE(full - base > 10 * 1024 * 1024);
  check_active_expiry(expire_in("big", "f", 0, 1, 500));  // f0 alone: the hash stays
  CHECK(both("HLEN big") == Reply::integer(9999));
  // The other deadlines only now, each batch's its own: a slow machine is fine.
  check_active_expiry(expire_in("big", "f", 1, 10000, 1000));  // the other 9,999, the key with them (del)
  CHECK(both("EXISTS big") == Reply::integer(0));
  const long long after = settled_memory();
  INFO("used_memory: " << full << " with the hash, " << after << " after its fields expired");
  CHECK(full - after > 10 * 1024 * 1024);
}

TEST_CASE_METHOD(MemoryRelease, "Five large hashes: active expiry empties one, thins three, keeps one, and frees their memory",
                 "[semantics][active][memory]") {
  running();
  fill("h0", "a", 2000);  // every field due: the key goes
  fill("h1", "a", 2000);  // 1,000 due
  fill("h2", "a", 2000);  // 500 due
  fill("h3", "a", 2000);  // 100 due
  fill("h4", "a", 2000);  // none volatile
  const long long full = settled_memory();
  REQUIRE(twin().set_active_expire(false) == Reply::ok());  // no field goes before the last is set
  expire_in("h0", "a", 0, 2000, 1500);
  expire_in("h1", "a", 0, 1000, 1500);
  expire_in("h2", "a", 1000, 1500, 1500);
  check_active_expiry(expire_in("h3", "a", 1900, 2000, 1500));
  CHECK(both("EXISTS h0") == Reply::integer(0));
  CHECK(both("HLEN h1") == Reply::integer(1000));
  CHECK(both("HLEN h2") == Reply::integer(1500));
  CHECK(both("HLEN h3") == Reply::integer(1900));
  CHECK(both("HLEN h4") == Reply::integer(2000));
  const long long after = settled_memory();
  // 3,600 values of 1 KB were freed.
  INFO("used_memory: " << full << " before, " << after << " after 3,600 fields of 1 KB expired");
  CHECK(full - after > 3600 * 1024);
}
