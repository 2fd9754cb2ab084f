// gen::property_sequence (the main property's generator) reaches every cell of
// state/coverage.hpp that the reachability data claims, in a model-only run of
// state::min_sequences_for_reach sequences: the commands are applied to the model with a clock
// that advances 1 ms per command and by DEBUG SLEEP's time (what the live twin sees, minus the
// server), and counted as state::Twin counts them. Fixed seeds: deterministic. Also: the only
// commands outside the model are the DEBUG pair that brackets a stale setup (gen/commands.hpp).
#include <catch2/catch_test_macros.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>

#include <expirykit/gen/commands.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>
#include <expirykit/state/coverage.hpp>
#include <expirykit/state/stale_templates.hpp>

using expirykit::model::Dialect;
using expirykit::resp::Argv;
namespace model = expirykit::model;
namespace state = expirykit::state;

namespace {
/// `sequences` sequences of gen::property_sequence applied to a fresh model each, counted.
/// `unmodelled` collects the names of commands outside the model.
state::Cells simulate(const Dialect& d, int sequences, uint64_t seed, std::set<std::string>& unmodelled) {
  state::Cells cells;
  rc::Random random(seed);
  const auto g = expirykit::gen::property_sequence(d, 40);
  for (int i = 0; i < sequences; ++i) {
    const auto cmds = g(random.split(), 100).value();
    model::Keyspace ks;
    int64_t now = 1'800'000'000'000;
    std::optional<std::vector<Argv>> tx;
    bool aborted = false;
    for (Argv c : cmds) {
      const std::string u = model::upper(c[0]);
      if (u == "DEBUG") {
        unmodelled.insert(u + " " + c[1]);
        if (model::upper(c[1]) == "SLEEP") now += static_cast<int64_t>(std::stod(c[2]) * 1000) + 1;
        continue;
      }
      if (u == "MULTI") {
        tx.emplace();
        aborted = false;
        continue;
      }
      if (tx && u != "EXEC" && u != "DISCARD") {  // queued: an arity error aborts the EXEC
        aborted = aborted || !model::arity_ok(c);
        tx->push_back(c);
        continue;
      }
      std::optional<std::vector<Argv>> batch;
      const bool script = u == "EVAL" || u == "FCALL";
      if (u == "DISCARD" || u == "EXEC") {
        if (u == "EXEC" && tx && !aborted) batch = *tx;
        tx.reset();
        if (!batch) continue;
      } else if (script) {
        batch = model::sequence_eval_commands(c);
      }
      if (u == "RESTORE" && c.size() > 3 && c[3].rfind("@dump:", 0) == 0) {  // as state::Twin resolves it
        const auto* e = ks.raw(c[3].substr(6));
        c[3] = e ? "payload of " + c[3].substr(6) : "";
        if (e) ks.remember_dump(c[3], *e);
      }
      if (const auto f = state::stale_fields(c)) {  // as state::Twin resolves it: deadlines passed
        ks.remember_dump(c[3], state::stale_entry(*f, std::vector<int64_t>(f->size(), now - 2)));
      }
      cells.record(ks, d, c, batch ? &*batch : nullptr, script, now);
      try {
        if (batch) model::apply_batch(ks, d, *batch, now, script);
        else model::apply(ks, d, c, now);
      } catch (const model::Unmodelled&) {
        unmodelled.insert(u);
      }
      now += 1;
    }
  }
  return cells;
}
}  // namespace

TEST_CASE("The main property's generators reach every reachable coverage cell (model only)", "[gen][coverage]") {
  for (const auto& d : {Dialect::valkey_9_1(), Dialect::redis_8_0()}) {
    for (uint64_t seed : {1u}) {
      CAPTURE(d.name, seed);
      std::set<std::string> unmodelled;
      const auto cells = simulate(d, state::min_sequences_for_reach, seed, unmodelled);
      const auto missed = state::missed_cells(cells, d, state::min_sequences_for_reach);
      INFO(missed);
      CHECK(missed.empty());
      CHECK(unmodelled == std::set<std::string>{"DEBUG SET-ACTIVE-EXPIRE", "DEBUG SLEEP"});
      if (seed == 1) UNSCOPED_INFO(state::format_cells(cells, d));
    }
  }
}

TEST_CASE("A stale setup: active expiry off, fields due in 1 ms, then a server sleep 1 ms past them", "[gen]") {
  rc::Random random(7);
  const auto g = expirykit::gen::setup_prefix(Dialect::valkey_9_1(), true, expirykit::gen::StaleBy::sleep);
  for (int i = 0; i < 200; ++i) {
    const auto p = g(random.split(), 100).value();
    REQUIRE(p.size() >= 4);
    CHECK(p.front() == Argv{"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
    REQUIRE(p.back().size() == 3);
    CHECK(p.back()[0] + " " + p.back()[1] == "DEBUG SLEEP");
    int near = 0;
    long long longest = 0;
    for (const auto& c : p)
      if (c[0] == "HPEXPIRE" && std::stoll(c[2]) <= 3) {
        ++near;
        longest = std::max(longest, std::stoll(c[2]));
        CHECK(std::stoll(c[2]) == 1);
      }
    // The sleep (seconds) outlasts the longest short TTL by a millisecond.
    CHECK(std::lround(std::stod(p.back()[2]) * 1000) == longest + 1);
    CHECK(near >= 1);  // the first field of each key always falls due
  }
}

TEST_CASE("A stale setup by RESTORE: active expiry off, each key starts from a stale template of its field a and others, no sleep", "[gen]") {
  rc::Random random(7);
  const auto g = expirykit::gen::setup_prefix(Dialect::valkey_9_1(), true, expirykit::gen::StaleBy::restore);
  int restored_fields = 0, hsets = 0;
  for (int i = 0; i < 200; ++i) {
    const auto p = g(random.split(), 100).value();
    CHECK(p.front() == Argv{"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
    CHECK(p.back()[0] == "SET");  // no DEBUG SLEEP
    std::set<std::string> restored_keys;
    for (const auto& c : p) {
      CHECK_FALSE((c[0] == "HPEXPIRE" && std::stoll(c[2]) <= 3));  // no short TTL to wait out
      if (const auto f = state::stale_fields(c)) {
        CHECK(c[2] == "0");
        REQUIRE_FALSE(f->empty());
        CHECK(f->front() == "a");
        restored_fields += static_cast<int>(f->size());
        CHECK(restored_keys.insert(c[1]).second);
      }
      if (c[0] == "HSET") {
        ++hsets;
        CHECK(restored_keys.count(c[1]) == 1);  // RESTORE first: a fresh key, no BUSYKEY
        for (std::size_t j = 2; j < c.size(); j += 2) CHECK(c[j] != "a");
      }
    }
  }
  CHECK(restored_fields > 200);
  CHECK(hsets > 0);
}
