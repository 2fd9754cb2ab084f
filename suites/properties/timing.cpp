// Timing properties (issue 3 item 5), with active expiry paused and then resumed:
//   * a field whose deadline passed is hidden from reads as the dialect says (HGET/HMGET/
//     HEXISTS/HGETALL/HTTL), counted by HLEN as the dialect says (model and server side by side:
//     the model applies the dialect's lazy deletion on Redis and none on Valkey);
//   * once active expiry resumes, every expired field is reclaimed within kReclaimBound, the
//     live ones stay, and the key disappears with its last field; active expiry's keyspace
//     notifications, client-tracking invalidations and INFO counters are what the model says;
//   * the timed paths the random sequences never reach (issue 22): a near deadline removed by
//     HPERSIST or HGETEX PERSIST before it passes (the field stays); deadlines set absolute
//     (HPEXPIREAT) as well as relative; a key TTL (PEXPIREAT) running out beside the field
//     TTLs, at the same millisecond as one of them or at its own; a 1 ms field TTL set inside
//     MULTI and read in the same transaction (one frozen time: the read sees the field); values
//     of 2 KB under a raised hash-max-listpack-value (4096), so that they stay in a listpack,
//     which Redis (listpackex) reorders by deadline as TTLs are set and removed.
// Each case runs on RESP2 or RESP3 (property::property_protocols(), EXPIRYKIT_PROTOCOL).
// Deadlines are 30..250 ms ahead (the only place near-future TTLs are generated); the test waits
// on the SERVER clock until the latest deadline plus the command window has passed, so the
// outcome does not depend on machine load.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <optional>
#include <thread>

#include <expirykit/gen/ttl.hpp>
#include <expirykit/property/property.hpp>

#include <expirykit/catch2/twin_fixture.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Argv;
using expirykit::resp::Reply;
using expirykit::state::Step;
namespace model = expirykit::model;

namespace {
constexpr auto kReclaimBound = std::chrono::seconds(5);
}

TEST_CASE_METHOD(TwinFixture, "Timing: expired fields hidden, counted, then reclaimed within a bound", "[properties][timing]") {
  auto& t = twin();
  t.observe_events();
  t.observe_counters();
  t.observe_tracking();
  // 2 KB values stay in a listpack (Redis: listpackex, its fields ordered by deadline) under a
  // raised hash-max-listpack-value, restored afterwards; the model reads the limits again.
  set_config_for_test("hash-max-listpack-value", "4096");
  REQUIRE(t.read_listpack_limits());
  // Rounds of 10 cases (x EXPIRYKIT_PROP_SCALE) for 4 s (property/property.hpp); a failure shrinks
  // (each try takes real time: the waits) and prints its seed and replay command line.
  expirykit::property::PropertyBudget budget{10, 0, 4, current_test_name()};
  budget.sent = [&t] { return t.sent(); };  // a server crash is triaged on fresh servers
  const std::vector<int> protocols = expirykit::property::property_protocols();  // EXPIRYKIT_PROTOCOL
  auto r = expirykit::property::check_cases("expired fields hidden, counted and reclaimed on " + t.dialect().name, budget, [&] {
    expirykit::property::SequenceResult res;
    auto fail = [&](const std::string& summary, const std::string& detail) {
      res.ok = false;
      res.summary = summary;
      res.report = detail + "\n" + t.script();
      return res;
    };
    const int n = *expirykit::gen::full(rc::gen::inRange(1, 7));
    // per field: 0 persistent, 1 near-future TTL, 2 far TTL, 3 near-future TTL then made persistent
    const auto kinds = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(n),
                                                              rc::gen::weightedElement<int>({{3, 0}, {5, 1}, {2, 2}, {2, 3}}));
    const auto near = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(n), expirykit::gen::full(rc::gen::inRange(30, 251)));
    const int reads = *expirykit::gen::full(rc::gen::inRange(0, 4));  // how many read commands before resuming
    const bool absolute = *rc::gen::arbitrary<bool>();          // near deadlines by HPEXPIREAT, else HPEXPIRE
    const bool persist_by_hgetex = *rc::gen::arbitrary<bool>();  // kind 3: HGETEX PERSIST, else HPERSIST
    // 0: no key TTL; 1: PEXPIREAT at the deadline of field key_with (when it has a near one); 2: its own
    const int key_ttl = *rc::gen::weightedElement<int>({{4, 0}, {1, 1}, {1, 2}});
    const int key_with = *expirykit::gen::full(rc::gen::inRange(0, n));
    const int key_near = *expirykit::gen::full(rc::gen::inRange(30, 251));
    const bool in_multi = *rc::gen::weightedElement<bool>({{4, false}, {1, true}});  // a 1 ms TTL inside MULTI
    const bool big = *rc::gen::weightedElement<bool>({{5, false}, {1, true}});       // 2 KB values
    // RESP2 or RESP3 per case, as the main property (shrinks towards RESP2).
    t.use_protocol(expirykit::property::draw_protocol(protocols));
    t.flushall();
    t.observe_counters();
    if (t.set_active_expire(false) != Reply::ok()) return fail("DEBUG SET-ACTIVE-EXPIRE 0 refused", "");
    Argv hset{"HSET", "h"};
    for (int i = 0; i < n; ++i) {
      hset.push_back("f" + std::to_string(i));
      hset.push_back(big ? std::string(2048, static_cast<char>('a' + i)) : std::to_string(i));
    }
    std::optional<Step> bad;
    auto run = [&](const Argv& a) {
      Step s = t.run(a);
      ++res.steps;
      if (!s.ok && !bad) bad = s;
      return s;
    };
    const int64_t base = run(hset).after_ms;
    int64_t latest = 0;
    std::vector<int64_t> deadline(static_cast<std::size_t>(n), 0);  // a near field's absolute deadline (ms)
    for (int i = 0; i < n && !bad; ++i) {
      if (kinds[i] == 0) continue;
      const std::string f = "f" + std::to_string(i);
      if (kinds[i] == 2) {
        run(Argv{"HPEXPIRE", "h", "100000000", "FIELDS", "1", f});
        continue;
      }
      // Absolute: `near` ms after the HSET's window (still ahead: the whole set-up takes less
      // than the 30 ms minimum but on a stalled machine, where the model says what a past one does).
      const Step s = absolute ? run(Argv{"HPEXPIREAT", "h", std::to_string(base + near[i]), "FIELDS", "1", f})
                              : run(Argv{"HPEXPIRE", "h", std::to_string(near[i]), "FIELDS", "1", f});
      deadline[static_cast<std::size_t>(i)] = absolute ? base + near[i] : s.after_ms + near[i];
      latest = std::max<int64_t>(latest, deadline[static_cast<std::size_t>(i)]);
      if (kinds[i] == 3)  // the deadline removed before it passes: the field must stay
        run(persist_by_hgetex ? Argv{"HGETEX", "h", "PERSIST", "FIELDS", "1", f} : Argv{"HPERSIST", "h", "FIELDS", "1", f});
    }
    if (key_ttl && !bad) {  // the key's own TTL beside the fields' (the same millisecond, or its own)
      const int64_t at = key_ttl == 1 && deadline[static_cast<std::size_t>(key_with)] ? deadline[static_cast<std::size_t>(key_with)]
                                                                                      : base + key_near;
      run(Argv{"PEXPIREAT", "h", std::to_string(at)});
      latest = std::max(latest, at);
    }
    if (in_multi && !bad) {  // a 1 ms TTL and a read of it in one transaction: one frozen time
      run({"MULTI"});
      run({"HSET", "h", "m", "v"});
      run({"HPEXPIRE", "h", "1", "FIELDS", "1", "m"});
      run({"HGET", "h", "m"});
      latest = std::max(latest, run({"EXEC"}).after_ms + 1);
    }
    if (bad) return fail(expirykit::property::step_summary(*bad), bad->describe());
    t.wait_until_past(latest, 5);
    // Hidden and counted as the dialect says (Redis deletes lazily on some reads).
    static const std::vector<std::string> read_cmds = {"HGET", "HEXISTS", "HSTRLEN"};
    for (int i = 0; i < reads; ++i)
      run(Argv{read_cmds[static_cast<std::size_t>(i) % read_cmds.size()], "h", "f" + std::to_string(i % n)});
    run({"HLEN", "h"});
    run({"HGETALL", "h"});
    Argv httl{"HTTL", "h", "FIELDS", std::to_string(n)};
    for (int i = 0; i < n; ++i) httl.push_back("f" + std::to_string(i));
    run(httl);
    run({"EXISTS", "h"});
    if (bad) return fail(expirykit::property::step_summary(*bad), bad->describe());
    auto diffs = t.compare_state();
    if (!diffs.empty()) return fail("state before resuming active expiry: " + diffs.front(), "");
    // Resume: everything expired is reclaimed within the bound.
    if (t.set_active_expire(true) != Reply::ok()) return fail("DEBUG SET-ACTIVE-EXPIRE 1 refused", "");
    t.reclaim_model();
    const model::Entry* e = t.model().raw("h");
    const long long want = e ? static_cast<long long>(e->hash().fields.size()) : 0;
    const auto start = std::chrono::steady_clock::now();
    while (t.side()("HLEN", "h") != Reply::integer(want) && std::chrono::steady_clock::now() - start < kReclaimBound)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    run({"HLEN", "h"});
    run({"EXISTS", "h"});  // the key goes with its last field
    if (bad) return fail("after resuming active expiry (bound " + std::to_string(kReclaimBound.count()) + " s): " +
                             expirykit::property::step_summary(*bad), bad->describe());
    diffs = t.compare_state();
    // Active expiry's keyspace notifications (hexpired, class x on Valkey; del) and tracking
    // invalidations, and the counters (expired_fields / expired_subkeys, the keyspace line).
    for (const auto& d : t.compare_background_events()) diffs.push_back(d);
    for (const auto& d : t.compare_counters()) diffs.push_back(d);
    if (!diffs.empty()) return fail("after resuming active expiry: " + diffs.front(), "");
    return res;
  });
  UNSCOPED_INFO(r.sequences << " cases in " << r.rounds << " round(s), " << r.seconds << " s, seed " << r.seed);
  if (!r.ok) FAIL(r.report);
  CHECK(r.sequences > 0);
}
