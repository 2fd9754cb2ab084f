// Active expiry at scale, round after round: each round draws a workload as the main property
// does (gen::property_sequence: set-ups with logically expired fields and active expiry paused,
// every command family, FLUSHALL, other databases through MOVE / COPY ... DB / SWAPDB), runs it
// through the twin (Twin::run_all, the property's pipelined checker), resumes active expiry and
// checks what it reclaims of the workload in every database the workload touched (state, INFO
// counters, background notifications: TwinFixture::check_active_expiry). Then 2,000 hashes get
// fields that fall due a few hundred ms later, some at one shared deadline and the others at a
// deadline of their own spread over 600 ms, next to far and persistent fields. Every due field
// must be reclaimed within the bound below of the last deadline, and midway (polled every 5 ms)
// each hash holds between what the model keeps and what it stored, never more than at the poll
// before (a quota-bounded drain checked as it goes), the expiry cycle within its documented time
// budget meanwhile (expire_cycle_cpu_milliseconds, below); then the server holds what the
// model holds after Keyspace::reclaim() in every database (every key, field, deadline and
// encoding), INFO counters agree (expired_fields / expired_subkeys + one per due field, keys,
// the volatile-hash count) and active expiry's keyspace notifications (hexpired per hash, del
// for an emptied one) and tracking invalidations are the model's. Rounds go on while the budget
// lasts (6 s x EXPIRYKIT_PROP_SCALE), two at least, each on RESP2 or RESP3 (the twin's
// connection; property::property_protocols(), EXPIRYKIT_PROTOCOL).
//
// The bound, from the documented active-expiry cycle: serverCron runs the slow expire cycle `hz`
// times a second (valkey.conf / redis.conf "hz", default 10; read here with CONFIG GET), each
// bounded to 25% of its period at active-expire-effort 1 (valkey.conf "active-expire-effort";
// ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC in src/expire.c of both servers). Redis 7.4+ reclaims hash
// fields in that cycle at most HFE_DB_BASE_ACTIVE_EXPIRE_FIELDS_PER_SEC / hz fields per cycle
// (10,000 fields/s; redis src/expire.c activeSubexpiresCycle). Valkey 9 has no field quota: it
// scans its map of hashes with volatile fields like the keys with a TTL, 20 per loop
// (ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP), looping while more than 10% of those sampled had
// something due (valkey.conf "active-expire-effort": "avoid having more than ten percent of
// expired keys still in memory"; valkey.io blog "Introducing Hash Field Expirations",
// 2025-09-15), so the last due hashes among many that stay volatile can wait for one loop of 20
// per cycle. Expected at most: due / 10,000 s + (hashes still volatile / 20 + 1) cycles after the
// last deadline, about 1.4 s here (~8,000 due fields, ~100 hashes keeping a far field); the
// bound allows three times that plus two cycles (about 4.5 s). Measured on 2 shared cores (load
// average 3-5), 16 runs each, half of them beside two property runs: Valkey 9.1.2 11-307 ms,
// Redis 8.0.6 14-105 ms after the last deadline; one round 1.6-2.3 s. (With 1 field in 10
// far instead of 1 in 100, Valkey took up to 1,350 ms: the scan of the volatile hashes.)
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <thread>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/config.hpp>
#include <expirykit/gen/commands.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/property/property.hpp>
#include <expirykit/server/info.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Argv;
namespace model = expirykit::model;

namespace {
constexpr int kHashes = 2000;
constexpr int kFirstDueMs = 700;  // the earliest deadline, after the script that sets them (at least)
constexpr int64_t kFieldsPerSecond = 10000;  // Redis's documented field quota (file comment)
constexpr long kKeysPerLoop = 20;             // ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP at effort 1 (file comment)

/// Runs `cmds` through the twin as sequence scripts of `per` commands each (one round trip
/// each, time frozen per script). Returns the first failing step's report ("" when all agree)
/// and the server time (TIME) right after the last script.
std::pair<std::string, int64_t> run_batched(expirykit::state::Twin& t, const std::vector<Argv>& cmds, std::size_t per) {
  int64_t after = 0;
  for (std::size_t i = 0; i < cmds.size(); i += per) {
    const std::vector<Argv> chunk(cmds.begin() + static_cast<std::ptrdiff_t>(i),
                                  cmds.begin() + static_cast<std::ptrdiff_t>(std::min(cmds.size(), i + per)));
    const auto s = t.run(model::sequence_eval(chunk));
    if (!s.ok) return {s.describe(), s.after_ms};
    after = s.after_ms;
  }
  return {"", after};
}
}  // namespace

TEST_CASE_METHOD(TwinFixture, "Active expiry drains 2,000 hashes of due fields within a bound; counters and events as the model says",
                 "[properties][drain]") {
  auto& t = twin();
  t.observe_events();
  t.observe_tracking();
  const auto hz = t.side()("CONFIG", "GET", "hz");
  const auto effort = t.side()("CONFIG", "GET", "active-expire-effort");
  auto config = [](const Reply& r) { return r.is_array() && r.size() == 2 ? r[1].str() : r.to_string(); };
  const auto workloads = expirykit::gen::property_sequence(t.dialect(), 40);
  const std::chrono::duration<double> budget(6 * expirykit::config().prop_scale);
  const auto started = std::chrono::steady_clock::now();
  std::map<std::string, int> known;  // known server issues the workloads met (excused steps)
  const std::vector<int> protocols = expirykit::property::property_protocols();  // EXPIRYKIT_PROTOCOL
  int rounds = 0;
  for (; rounds < 2 || std::chrono::steady_clock::now() - started < budget; ++rounds) {
    const uint64_t seed = std::random_device{}();
    std::mt19937_64 rnd(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rnd); };
    const int protocol = protocols[static_cast<std::size_t>(pick(0, static_cast<int>(protocols.size()) - 1))];
    t.use_protocol(protocol);  // the twin's connection for the whole round: RESP2 or RESP3
    INFO("round " << rounds + 1 << " on RESP" << protocol << ", seed " << seed << " (the workload: rc::Random(seed), size 100; the layout: std::mt19937_64), hz "
                  << config(hz) << ", active-expire-effort " << config(effort));

    // A workload drawn as the main property draws its sequences: it may pause active expiry and
    // leave logically expired fields, move keys to other databases, flush. Its stale templates are
    // made first (outside what is checked), as property::run_sequence does.
    const auto workload = workloads(rc::Random(seed), 100).value();
    t.prepare_stale_templates(workload);
    t.flushall();
    t.observe_counters();
    const auto steps = t.run_all(workload);
    for (const auto& s : steps) {
      INFO("workload: " << s.describe() << "\n" << t.script());
      REQUIRE(s.ok);
      if (!s.known_issue.empty()) ++known[s.known_issue];
    }
    REQUIRE(steps.size() == workload.size());
    if (t.in_transaction()) REQUIRE(t.run(Argv{"DISCARD"}).ok);
    // Active expiry resumed: what it reclaims of the workload, in every database it touched.
    check_active_expiry(t.server_time());

    // The layout: per hash 1..4 fields (9 in 10) or 10..50; per field: due at the shared deadline,
    // due at the hash's own deadline, far TTL (1 in 100: such hashes stay in the server's map of
    // volatile hashes, which active expiry scans), or persistent.
    std::vector<Argv> hsets;
    std::vector<std::vector<std::vector<std::string>>> fates(kHashes, std::vector<std::vector<std::string>>(4));
    std::vector<int> own_offset(kHashes);
    long due = 0, fields = 0;
    for (int i = 0; i < kHashes; ++i) {
      const std::string key = "drain:" + std::to_string(i);
      const int n = pick(0, 9) == 0 ? pick(10, 50) : pick(1, 4);
      Argv hset{"HSET", key};
      for (int f = 0; f < n; ++f) {
        const std::string name = "f" + std::to_string(f);
        hset.insert(hset.end(), {name, std::to_string(f)});
        // 45% shared, 44% own, 1% far (few hashes stay volatile: see the bound), 10% persistent
        const int r = pick(0, 99);
        const int fate = r < 45 ? 0 : r < 89 ? 1 : r < 90 ? 2 : 3;
        fates[static_cast<std::size_t>(i)][static_cast<std::size_t>(fate)].push_back(name);
        due += fate < 2;
      }
      fields += n;
      own_offset[static_cast<std::size_t>(i)] = pick(0, 600);
      hsets.push_back(hset);
    }
    int first_due_ms = kFirstDueMs;
    {
      const int64_t before = t.server_time();
      const auto [fail, at] = run_batched(t, hsets, 100);
      INFO(fail);
      REQUIRE(fail.empty());
      // The deadlines are set by one script about as long as these; on a loaded machine (or
      // through a proxy) that can take longer than kFirstDueMs, so the first deadline moves out
      // to twice the time these scripts took: every deadline is still ahead when it is set.
      first_due_ms = static_cast<int>(std::max<int64_t>(kFirstDueMs, 2 * (at - before)));
    }
    // Deadlines from the server's clock now: shared at +1000 ms, own ones spread over +700..+1300,
    // all set by one script (the server runs it in tens of ms, a few hundred on a loaded machine;
    // the twin's own checks come after it).
    const int64_t base = t.server_time();
    const int64_t shared = base + first_due_ms + 300, far = base + 86'400'000;
    int64_t latest = shared;
    std::vector<Argv> expires;
    for (int i = 0; i < kHashes; ++i) {
      const std::string key = "drain:" + std::to_string(i);
      const auto& fs = fates[static_cast<std::size_t>(i)];
      const int64_t own = base + first_due_ms + own_offset[static_cast<std::size_t>(i)];
      for (int fate = 0; fate < 3; ++fate) {
        if (fs[static_cast<std::size_t>(fate)].empty()) continue;
        const int64_t when = fate == 0 ? shared : fate == 1 ? own : far;
        if (fate == 1) latest = std::max(latest, own);
        Argv a{"HPEXPIREAT", key, std::to_string(when), "FIELDS", std::to_string(fs[static_cast<std::size_t>(fate)].size())};
        a.insert(a.end(), fs[static_cast<std::size_t>(fate)].begin(), fs[static_cast<std::size_t>(fate)].end());
        expires.push_back(a);
      }
    }
    const auto [fail, set_by] = run_batched(t, expires, expires.size());
    INFO(fail);
    REQUIRE(fail.empty());
    INFO(fields << " fields in " << kHashes << " hashes, " << due << " due; deadlines set by +" << set_by - base
                << " ms, the first due at +" << first_due_ms << " ms");
    // Every deadline was still ahead when it was set: active expiry, not the command, reclaims.
    REQUIRE(set_by < base + first_due_ms);
    // The expiry cycle's own clock from here to the end of the drain (INFO stats
    // expire_cycle_cpu_milliseconds: time spent inside active expiry cycles).
    auto cycle_ms_now = [&t] {
      const Reply r = t.side()("INFO", "stats");
      return r.is_string() ? expirykit::server::Info::find_int(r.str(), "expire_cycle_cpu_milliseconds", -1) : -1;
    };
    const long long cycle_ms_before = cycle_ms_now();
    const int64_t cycle_window_from = t.server_time();

    // Wait on the server clock past the last deadline, then poll HLEN of every hash (a pipeline
    // over the read-back connection: no tracking, no lazy deletion) until it is the model's.
    t.wait_until_past(latest, 1);
    // Midway, each hash holds between what the model keeps after active expiry and what it stored
    // before, and never more than at the poll before: active expiry, quota-bounded or not, takes
    // due fields only and never gives one back (a partial drain is checked, not only its end).
    std::vector<long long> stored;
    for (int i = 0; i < kHashes; ++i) {
      const model::Entry* e = t.model().raw("drain:" + std::to_string(i));
      stored.push_back(e ? static_cast<long long>(e->hash().fields.size()) : 0);
    }
    t.reclaim_model();
    std::vector<Argv> hlens;
    std::vector<Reply> want;
    for (int i = 0; i < kHashes; ++i) {
      const std::string key = "drain:" + std::to_string(i);
      hlens.push_back({"HLEN", key});
      const model::Entry* e = t.model().raw(key);
      want.push_back(Reply::integer(e ? static_cast<long long>(e->hash().fields.size()) : 0));
    }
    std::vector<long long> last = stored;
    std::vector<std::string> midway;  // the first few hashes outside those limits
    long partial_polls = 0;           // polls that saw a drain under way
    long still_volatile = 0;  // hashes active expiry keeps scanning after the drain
    for (const auto& k : t.model().key_names())
      if (const model::Entry* e = t.model().raw(k); e && e->is_hash() && e->hash().has_volatile()) ++still_volatile;
    const int cycles_per_s = hz.is_array() && hz.size() == 2 ? std::stoi(hz[1].str()) : 10;
    const int64_t cycle_ms = 1000 / std::max(1, cycles_per_s);
    const int64_t expected_ms = due * 1000 / kFieldsPerSecond + (still_volatile / kKeysPerLoop + 1) * cycle_ms;
    const int64_t bound_ms = 3 * expected_ms + 2 * cycle_ms;
    int64_t drained_at = -1, now = 0;
    long left = 0;
    do {
      const auto got = t.side().pipeline(hlens);
      now = t.server_time();
      left = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) left += got[i].is_integer() && want[i].is_integer() ? got[i].as_integer() - want[i].as_integer() : 1;
        const long long n = got[i].is_integer() ? got[i].as_integer() : -1;
        if ((n < want[i].as_integer() || n > last[i]) && midway.size() < 5)
          midway.push_back("drain:" + std::to_string(i) + " HLEN " + got[i].to_string() + " at " + std::to_string(now - latest) +
                           " ms after the last deadline: the model keeps " + std::to_string(want[i].as_integer()) + ", stored " +
                           std::to_string(stored[i]) + ", the poll before read " + std::to_string(last[i]));
        last[i] = n;
      }
      partial_polls += left > 0;
      if (left == 0) drained_at = now;
      else std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (drained_at < 0 && now < latest + bound_ms);
    UNSCOPED_INFO("drain: " << due << " due fields of " << fields << " in " << kHashes << " hashes reclaimed "
                            << (drained_at < 0 ? -1 : drained_at - latest) << " ms after the last deadline (bound "
                            << bound_ms << " ms, expected at most " << expected_ms << " ms; " << still_volatile
                            << " hashes keep volatile fields)");
    INFO("fields still stored beyond the model's when the bound ran out: " << left);
    CHECK(drained_at >= 0);
    // Active expiry kept to its documented time budget meanwhile: a slow cycle at most 25% of its
    // 1/hz period, a fast one at most 1 ms and not within 2 ms of the last (active-expire-effort
    // 1; ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC and ACTIVE_EXPIRE_CYCLE_FAST_DURATION in src/expire.c
    // of both servers): at most 75% of the window, plus one slow cycle's overrun.
    const long long cycle_ms_after = cycle_ms_now();
    const int64_t window_ms = t.server_time() - cycle_window_from;
    const long long cycle_used = cycle_ms_after - cycle_ms_before;
    UNSCOPED_INFO("expiry cycle: " << cycle_used << " ms of expire_cycle_cpu_milliseconds in a " << window_ms << " ms window ("
                                   << (due ? static_cast<double>(cycle_used) * 1000.0 / static_cast<double>(due) : 0.0)
                                   << " ms per 1,000 due fields)");
    REQUIRE(cycle_ms_before >= 0);  // INFO stats has the field on every release the kit models
    CHECK(cycle_used >= 0);
    CHECK(cycle_used <= window_ms * 3 / 4 + cycle_ms);
    std::string outside;
    for (const auto& m : midway) outside += m + "\n";
    INFO("polls that saw the drain under way: " << partial_polls << "; hashes outside the limits midway:\n" << outside);
    CHECK(midway.empty());

    // Then everything as the model says, in every database (the workload's keys too).
    check_active_expiry(latest);
  }
  std::string met;
  for (const auto& [id, n] : known) met += " " + id + " (" + std::to_string(n) + " steps)";
  UNSCOPED_INFO(rounds << " rounds" << (met.empty() ? "" : "; known server issues the workloads met and excused:" + met));
}
