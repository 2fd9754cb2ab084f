// state/coverage.hpp: commands land in the right command x field-state, numfields and time
// cells; malformed commands count no field state; the reachability data and the check that a
// run reached every reachable cell (an artificially unreached cell makes it fail). Model only.
#include <catch2/catch_test_macros.hpp>

#include <expirykit/state/coverage.hpp>

using expirykit::model::Dialect;
using expirykit::model::Entry;
using expirykit::model::Field;
using expirykit::model::Hash;
using expirykit::model::Keyspace;
using expirykit::resp::Argv;
using expirykit::state::Cells;

namespace {
constexpr int64_t kNow = 1'800'000'000'000;

/// h: a persistent, b volatile (far), c logically expired; v: only volatile fields; s: a string.
Keyspace keyspace() {
  Keyspace ks;
  Hash h;
  h.fields["a"] = Field{"1", std::nullopt};
  h.fields["b"] = Field{"2", kNow + 100'000};
  h.fields["c"] = Field{"3", kNow - 10};
  ks.put("h", Entry{h, std::nullopt});
  Hash v;
  v.fields["x"] = Field{"1", kNow + 100'000};
  ks.put("v", Entry{v, std::nullopt});
  ks.put("s", Entry{std::string("str"), std::nullopt});
  return ks;
}

Cells record(const Keyspace& ks, const Dialect& d, const Argv& a) {
  Cells c;
  c.record(ks, d, a, nullptr, false, kNow);
  return c;
}
long state_cell(const Cells& c, const char* row, const char* col) { return c.count(Cells::states, row, col); }
long timecell(const Cells& c, const char* row, const char* col) { return c.count(Cells::times, row, col); }
}  // namespace

TEST_CASE("Coverage: each field a command names is counted by its state, once per state", "[coverage]") {
  const auto ks = keyspace();
  const Dialect d = Dialect::valkey_9_1();
  const Cells c = record(ks, d, {"HPEXPIRE", "h", "100000", "FIELDS", "5", "a", "b", "c", "z", "a"});
  CHECK(state_cell(c, "HEXPIRE* -", "persistent") == 1);  // a named twice: one command, one count
  CHECK(state_cell(c, "HEXPIRE* -", "volatile") == 1);
  CHECK(state_cell(c, "HEXPIRE* -", "expired") == 1);
  CHECK(state_cell(c, "HEXPIRE* -", "no field") == 1);
  CHECK(state_cell(c, "HEXPIRE* -", "no key") == 0);
  CHECK(state_cell(record(ks, d, {"HTTL", "nokey", "FIELDS", "1", "a"}), "HTTL*", "no key") == 1);
  CHECK(state_cell(record(ks, d, {"HGET", "s", "a"}), "HGET", "wrongtype") == 1);
  CHECK(state_cell(record(ks, d, {"HSET", "h", "c", "9"}), "HSET/HMSET", "expired") == 1);
  // Commands that name no field: the key's state (expired wins over volatile).
  CHECK(state_cell(record(ks, d, {"HLEN", "h"}), "HLEN", "expired") == 1);
  CHECK(state_cell(record(ks, d, {"HLEN", "v"}), "HLEN", "volatile") == 1);
  CHECK(state_cell(record(ks, d, {"OBJECT", "ENCODING", "v"}), "OBJECT ENCODING", "volatile") == 1);
  CHECK(state_cell(record(ks, d, {"COPY", "h", "h9", "DB", "1"}), "COPY DB", "expired") == 1);
  CHECK(state_cell(record(ks, d, {"DEL", "s"}), "DEL/UNLINK", "wrongtype") == 1);
  CHECK(state_cell(record(ks, d, {"EXPIRE", "v", "100"}), "EXPIRE*", "volatile") == 1);
}

TEST_CASE("Coverage: flag forms pick their row; malformed commands count no field state", "[coverage]") {
  const auto ks = keyspace();
  const Dialect d = Dialect::valkey_9_1();
  CHECK(state_cell(record(ks, d, {"HEXPIRE", "h", "100", "NX", "FIELDS", "1", "a"}), "HEXPIRE* NX", "persistent") == 1);
  CHECK(state_cell(record(ks, d, {"HSETEX", "h", "FXX", "KEEPTTL", "FIELDS", "1", "b", "v"}), "HSETEX FXX KEEPTTL", "volatile") == 1);
  CHECK(state_cell(record(ks, d, {"HSETEX", "h", "PX", "100", "FNX", "FIELDS", "1", "c", "v"}), "HSETEX FNX PX", "expired") == 1);
  CHECK(state_cell(record(ks, d, {"HSETEX", "h", "FIELDS", "1", "a", "v"}), "HSETEX - -", "persistent") == 1);
  CHECK(state_cell(record(ks, d, {"HGETEX", "h", "PERSIST", "FIELDS", "1", "b"}), "HGETEX PERSIST", "volatile") == 1);
  CHECK(state_cell(record(ks, d, {"HGETDEL", "s", "FIELDS", "1", "a"}), "HGETDEL", "wrongtype") == 1);
  // Not counted: numfields mismatch, a rejected time, repeated or key-level options, the
  // FIELDS keyword missing, HINCRBY with a non-integer, HSCAN with another cursor.
  for (const Argv& a : std::vector<Argv>{{"HEXPIRE", "h", "100", "FIELDS", "2", "a"},
                                         {"HEXPIRE", "h", "-1", "FIELDS", "1", "a"},
                                         {"HEXPIRE", "h", "100", "NX", "XX", "FIELDS", "1", "a"},
                                         {"HSETEX", "h", "EX", "10", "PX", "10", "FIELDS", "1", "a", "v"},
                                         {"HSETEX", "h", "NX", "FIELDS", "1", "a", "v"},
                                         {"HSETEX", "h", "FIELDS", "1", "a"},
                                         {"HTTL", "h", "FIELD", "1", "a"},
                                         {"HINCRBY", "h", "a", "x"},
                                         {"HSCAN", "h", "7"},
                                         {"HGETEX", "h", "KEEPTTL", "FIELDS", "1", "a"}}) {
    CAPTURE(a);
    const Cells c = record(ks, d, a);
    long n = 0;
    for (long v : c.tables()[Cells::states].counts) n += v;
    CHECK(n == 0);
  }
  // Valkey 9.1.2's HSETEX takes a key named FIELDS for the keyword: not counted as well formed.
  const Cells k = record(ks, d, {"HSETEX", "fields", "FIELDS", "1", "a", "v"});
  CHECK(k.count(Cells::numfields, "HSETEX", "1") == 1);
  CHECK(k.total() == 1);
}

TEST_CASE("Coverage: numfields extremes as written, well formed or not", "[coverage]") {
  const auto ks = keyspace();
  const Dialect d = Dialect::redis_8_0();
  const Cells c = record(ks, d, {"HSETEX", "h", "FIELDS", "2147483648", "a", "v"});
  CHECK(c.count(Cells::numfields, "HSETEX", "INT_MAX+1") == 1);
  CHECK(c.count(Cells::states, "HSETEX - -", "persistent") == 0);
  CHECK(record(ks, d, {"HEXPIRE", "h", "10", "GT", "FIELDS", "0", "a"}).count(Cells::numfields, "HEXPIRE*", "0") == 1);
  CHECK(record(ks, d, {"HPERSIST", "h", "FIELDS", "9223372036854775807", "a"}).count(Cells::numfields, "HPERSIST", "2^63-1") == 1);
  CHECK(record(ks, d, {"HGETDEL", "h", "FIELDS", "1", "a"}).count(Cells::numfields, "HGETDEL", "1") == 1);
  CHECK(record(ks, d, {"HGETEX", "h", "EX", "5", "FIELDS", "2147483647", "a"}).count(Cells::numfields, "HGETEX", "INT_MAX") == 1);
  CHECK(record(ks, d, {"HTTL", "h", "FIELDS", "2", "a"}).total() == 0);  // numfields 2: not an extreme
}

TEST_CASE("Coverage: time arguments against the dialect's limits", "[coverage]") {
  const auto ks = keyspace();
  for (const Dialect& d : {Dialect::valkey_9_1(), Dialect::redis_8_0()}) {
    CAPTURE(d.name);
    const int64_t max = d.max_field_expire_ms;
    auto t = [&](const std::string& cmd, const std::string& arg, const char* cls) {
      CAPTURE(cmd, arg);
      const Cells c = record(ks, d, {cmd, "h", arg, "FIELDS", "1", "a"});
      CHECK(timecell(c, cmd.c_str(), cls) == 1);
    };
    t("HPEXPIREAT", std::to_string(max), "largest");
    t("HPEXPIREAT", max == INT64_MAX ? "9223372036854775808" : std::to_string(max + 1), "over");
    t("HEXPIREAT", std::to_string(max / 1000), "largest");
    t("HEXPIREAT", std::to_string(max / 1000 + 1), "over");
    t("HEXPIREAT", "1", "past");
    t("HEXPIREAT", "0", "zero");
    t("HEXPIRE", "-1", "negative");
    t("HEXPIRE", "1.5", "not int");
    t("HEXPIRE", "100", "future");
    // Relative: the generator's values (gen/ttl.hpp) a century inside / before the ceiling.
    t("HPEXPIRE", std::to_string(max - 4'102'444'800'000), "largest");
    t("HPEXPIRE", std::to_string(max - 946'684'800'000), "over");
    t("HEXPIRE", std::to_string(max / 1000 - 4'102'444'800), "largest");
    t("HEXPIRE", std::to_string(max / 1000), "over");
    // HSETEX / HGETEX: the option's argument, wherever the option stands.
    const Cells c = record(ks, d, {"HSETEX", "h", "FNX", "PXAT", "5", "FIELDS", "1", "a", "v"});
    CHECK(timecell(c, "HSETEX PXAT", "past") == 1);
    CHECK(state_cell(c, "HSETEX FNX PXAT", "persistent") == 1);
    CHECK(timecell(record(ks, d, {"HGETEX", "h", "EX", "-5", "FIELDS", "1", "a"}), "HGETEX EX", "negative") == 1);
  }
}

TEST_CASE("Coverage: a batch counts each command against the state the previous ones leave", "[coverage]") {
  const Keyspace ks = keyspace();
  const Dialect d = Dialect::valkey_9_1();
  Cells c;
  const std::vector<Argv> batch = {{"HSET", "n", "a", "1"}, {"HPEXPIRE", "n", "100000", "FIELDS", "1", "a"}, {"HTTL", "n", "FIELDS", "1", "a"}};
  c.record(ks, d, {"EXEC"}, &batch, false, kNow);
  CHECK(state_cell(c, "HSET/HMSET", "no key") == 1);
  CHECK(state_cell(c, "HEXPIRE* -", "persistent") == 1);
  CHECK(state_cell(c, "HTTL*", "volatile") == 1);
  CHECK(ks.raw("n") == nullptr);  // the model itself is untouched
  // RESTORE is counted by what its payload holds (the entry the model saw dumped).
  Keyspace k2 = keyspace();
  k2.remember_dump("payload", *k2.raw("h"));
  CHECK(state_cell(record(k2, d, {"RESTORE", "new", "0", "payload"}), "RESTORE", "expired") == 1);
  CHECK(state_cell(record(k2, d, {"RESTORE", "new", "0", ""}), "RESTORE", "no key") == 1);
  // since(): only what came after the copy.
  const Cells before = c;
  c.record(ks, d, {"HGET", "h", "a"}, nullptr, false, kNow);
  const Cells delta = c.since(before);
  CHECK(delta.total() == 1);
  CHECK(state_cell(delta, "HGET", "persistent") == 1);
}

TEST_CASE("Coverage: reachability data and the reached-cells check", "[coverage]") {
  const Dialect v = Dialect::valkey_9_1(), r74 = Dialect::redis_7_4();
  using expirykit::state::cell_reason;
  CHECK(cell_reason(Cells::states, "HLEN", "no field", v) != "");
  CHECK(cell_reason(Cells::states, "HLEN", "expired", v) == "");
  CHECK(cell_reason(Cells::times, "HPEXPIRE", "past", v) != "");
  CHECK(cell_reason(Cells::times, "HPEXPIREAT", "past", v) == "");
  CHECK(cell_reason(Cells::states, "HSETEX FNX EX", "expired", v) == "");
  CHECK(cell_reason(Cells::states, "HSETEX FNX EX", "expired", r74) == "HSETEX is not in redis-7.4");
  CHECK(cell_reason(Cells::numfields, "HGETDEL", "0", r74) != "");

  // Every reachable cell counted once: nothing missed. Then one left at 0: the check names it.
  Cells all;
  for (std::size_t t = 0; t < all.tables().size(); ++t) {
    const auto& tb = all.tables()[t];
    for (const auto& row : tb.rows)
      for (const auto& col : tb.cols)
        if (cell_reason(static_cast<Cells::Table>(t), row, col, v).empty()) all.add(static_cast<Cells::Table>(t), row, col);
  }
  CHECK(expirykit::state::unreached(all, v).empty());
  CHECK(expirykit::state::missed_cells(all, v, 1000) == "");
  Cells one_short = all;
  one_short.add(Cells::states, "HSETEX FXX KEEPTTL", "expired", -1);
  const std::string missed = expirykit::state::missed_cells(one_short, v, 1000);
  CHECK(missed.find("command x field state: HSETEX FXX KEEPTTL x expired") != std::string::npos);
  CHECK(missed.find("1 cell(s)") == 0);
  // Below state::min_sequences_for_reach the run is not held to it.
  CHECK(expirykit::state::missed_cells(one_short, v, expirykit::state::min_sequences_for_reach - 1) == "");
  // The printed table marks it and lists it.
  const std::string table = expirykit::state::format_cells(one_short, v);
  CHECK(table.find("0 !") != std::string::npos);
  CHECK(table.find("1 reachable cell(s) not reached:\n  command x field state: HSETEX FXX KEEPTTL x expired") != std::string::npos);
  CHECK_THROWS_AS(all.add(Cells::states, "HSETEX", "expired"), std::out_of_range);
}
