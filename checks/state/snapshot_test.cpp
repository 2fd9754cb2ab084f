// state::Snapshot and state::diff without a server: hand-built snapshots, each kind of difference
// and the line it produces (state/snapshot.hpp), of_model() from a model::Keyspace, and
// model::Keyspace::loaded().
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <expirykit/model/keyspace.hpp>
#include <expirykit/state/snapshot.hpp>

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using state::DiffOptions;
using state::FieldSnapshot;
using state::KeySnapshot;
using state::Snapshot;
using Lines = std::vector<std::string>;

namespace {
Snapshot snap(const std::string& source) {
  Snapshot s;
  s.source = source;
  return s;
}
KeySnapshot str(const std::string& v, std::optional<int64_t> expire = {}) {
  KeySnapshot k;
  k.type = "string";
  k.value = v;
  k.expire_ms = expire;
  return k;
}
/// A hash with these visible fields and `hidden` logically expired ones (HLEN counts them).
KeySnapshot hash(std::map<std::string, FieldSnapshot> fields, long long hidden = 0) {
  KeySnapshot k;
  k.type = "hash";
  k.fields = std::move(fields);
  k.stored = static_cast<long long>(k.fields.size()) + hidden;
  return k;
}
/// diff(primary, replica) where each side holds one key "k"/"h" as given.
Lines diff1(const std::string& key, const KeySnapshot& a, const KeySnapshot& b, DiffOptions opt = {}) {
  auto p = snap("primary"), r = snap("replica");
  p.keys[key] = a;
  r.keys[key] = b;
  return state::diff(p, r, opt);
}
}  // namespace

TEST_CASE("diff: equal snapshots give no line", "[state][snapshot]") {
  auto p = snap("primary"), r = snap("replica");
  p.keys["k"] = r.keys["k"] = str("v", 1000);
  p.keys["h"] = r.keys["h"] = hash({{"a", {"1", 2000}}, {"b", {"2", {}}}}, 1);
  CHECK(state::diff(p, r).empty());
  CHECK(state::diff(r, p).empty());
}

TEST_CASE("diff: a key missing on either side", "[state][snapshot]") {
  auto p = snap("primary"), r = snap("replica");
  p.keys["k"] = str("v");
  CHECK(state::diff(p, r) == Lines{"replica: key k is missing, primary: k: string \"v\""});
  CHECK(state::diff(r, p) == Lines{"primary: k: string \"v\", replica: key k is missing"});
  auto h = snap("primary");
  h.keys["h"] = hash({{"a", {"1", 1000}}, {"b", {"2", {}}}}, 1);
  h.keys["h"].hidden_names = {"c"};
  h.keys["h"].expire_ms = 5000;
  CHECK(state::diff(h, snap("replica")) ==
        Lines{"replica: key h is missing, primary: h: hash {a=\"1\" (expires 1000), b=\"2\"} + 1 logically expired (c), "
              "key expires 5000"});
}

TEST_CASE("diff: a different type is one line, nothing else compared", "[state][snapshot]") {
  CHECK(diff1("k", str("v", 1000), hash({{"a", {"1", {}}}})) == Lines{"replica: key k is a hash, primary: string"});
}

TEST_CASE("diff: key TTLs", "[state][snapshot]") {
  CHECK(diff1("k", str("v", 1000), str("v", 2000)) == Lines{"replica: key k has key TTL 2000, primary: 1000"});
  CHECK(diff1("k", str("v", 1000), str("v")) == Lines{"replica: key k has no key TTL, primary: 1000"});
  CHECK(diff1("k", str("v"), str("v", 1000)) == Lines{"replica: key k has key TTL 1000, primary: no TTL"});
}

TEST_CASE("diff: string values, binary bytes escaped", "[state][snapshot]") {
  CHECK(diff1("k", str("y"), str("x")) == Lines{"replica: string k = \"x\", primary: \"y\""});
  CHECK(diff1("k", str("plain"), str(std::string("a\"b\\c\n\x01\0z", 9))) ==
        Lines{"replica: string k = \"a\\\"b\\\\c\\x0a\\x01\\x00z\", primary: \"plain\""});
}

TEST_CASE("diff: field values and field TTLs", "[state][snapshot]") {
  CHECK(diff1("h", hash({{"f", {"1", {}}}}), hash({{"f", {"2", {}}}})) == Lines{"replica: field f of h = \"2\", primary: \"1\""});
  // The line of the header's own example.
  CHECK(diff1("h", hash({{"f", {"1", 1764547200123}}}), hash({{"f", {"1", {}}}})) ==
        Lines{"replica: field f of h has no TTL, primary: 1764547200123"});
  CHECK(diff1("h", hash({{"f", {"1", {}}}}), hash({{"f", {"1", 1000}}})) ==
        Lines{"replica: field f of h expires at 1000, primary: no TTL"});
  CHECK(diff1("h", hash({{"f", {"1", 1000}}}), hash({{"f", {"1", 2000}}})) ==
        Lines{"replica: field f of h expires at 2000, primary: 1000"});
  // Value and TTL both differ: two lines.
  CHECK(diff1("h", hash({{"f", {"1", 1000}}}), hash({{"f", {"2", 2000}}})).size() == 2);
}

TEST_CASE("diff: a field missing on either side", "[state][snapshot]") {
  CHECK(diff1("h", hash({{"f", {"1", 1000}}, {"g", {"2", {}}}}), hash({{"g", {"2", {}}}})) ==
        Lines{"replica: field f of h is missing, primary: \"1\" (TTL 1000)"});
  CHECK(diff1("h", hash({{"g", {"2", {}}}}), hash({{"f", {"1", 1000}}, {"g", {"2", {}}}})) ==
        Lines{"replica: field f of h = \"1\" (TTL 1000), primary: missing"});
  CHECK(diff1("h", hash({{"f", {"1", {}}}}), hash({})) == Lines{"replica: field f of h is missing, primary: \"1\" (no TTL)"});
}

TEST_CASE("diff: stored counts (logically expired fields), and stored_counts=false", "[state][snapshot]") {
  auto a = hash({{"f", {"1", {}}}}, 1), b = hash({{"f", {"1", {}}}});
  CHECK(diff1("h", a, b) ==
        Lines{"replica: h holds 0 logically expired, unreclaimed field(s) (HLEN 1), primary: 1 (HLEN 2)"});
  a.hidden_names = {"g"};
  CHECK(diff1("h", a, b) == Lines{"replica: h holds 0 logically expired, unreclaimed field(s) (HLEN 1), primary: 1 (HLEN 2): "
                                  "h: hash {f=\"1\"} + 1 logically expired (g)"});
  DiffOptions no_counts;
  no_counts.stored_counts = false;
  CHECK(diff1("h", a, b, no_counts).empty());
  CHECK(diff1("h", b, a, no_counts).empty());
  // ...but a visible difference is still reported with stored_counts off.
  CHECK(diff1("h", a, hash({{"f", {"2", {}}}}), no_counts).size() == 1);
}

TEST_CASE("diff: tolerance_ms on key and field expiries, inclusive", "[state][snapshot]") {
  DiffOptions tol;
  tol.tolerance_ms = 5;
  CHECK(diff1("k", str("v", 1000), str("v", 1005), tol).empty());
  CHECK(diff1("k", str("v", 1005), str("v", 1000), tol).empty());
  CHECK(diff1("h", hash({{"f", {"1", 1000}}}), hash({{"f", {"1", 995}}}), tol).empty());
  CHECK(diff1("k", str("v", 1000), str("v", 1006), tol).size() == 1);
  CHECK(diff1("h", hash({{"f", {"1", 1000}}}), hash({{"f", {"1", 1006}}}), tol).size() == 1);
  // A tolerance never excuses a TTL against none.
  CHECK(diff1("h", hash({{"f", {"1", 1000}}}), hash({{"f", {"1", {}}}}), tol).size() == 1);
  CHECK(diff1("k", str("v", 1000), str("v", 1001)).size() == 1);  // default: exact
}

TEST_CASE("diff: every difference is one line, even with binary key, field and value bytes", "[state][snapshot]") {
  // snapshot.hpp promises "one line each"; names and values may hold any bytes.
  auto p = snap("primary"), r = snap("replica");
  p.keys["gone"] = str("x\ny");                                 // missing key: describe() of a value
  p.keys["h"] = hash({{"new\nline", {"1", {}}}});               // field name with a newline
  r.keys["h"] = hash({{"new\nline", {"2", {}}}});
  r.keys["only\nreplica"] = str("v");                           // key name with a newline
  const auto lines = state::diff(p, r);
  CHECK(lines.size() == 3);
  for (const auto& l : lines) {
    INFO(state::detail::quoted(l));
    CHECK(l.find('\n') == std::string::npos);
  }
}

TEST_CASE("of_model: visible fields, logically expired ones named, stored counts, key TTLs", "[state][snapshot]") {
  model::Keyspace ks;
  ks.put("s", model::Entry{std::string("v"), 5000});
  model::Hash h;
  h.fields["a"] = {"1", std::nullopt};
  h.fields["b"] = {"2", 900};   // passed at 1000
  h.fields["c"] = {"3", 2000};
  h.fields["d"] = {"4", 1000};  // T == now: not passed (strict comparison, model/keyspace.hpp)
  ks.put("h", model::Entry{h, std::nullopt});
  ks.put("gone", model::Entry{std::string("x"), 500});  // key TTL passed: not in the snapshot
  const auto s = Snapshot::of_model(ks, 1000);
  CHECK(s.source == "model");
  CHECK(s.at_ms == 1000);
  REQUIRE(s.keys.size() == 2);
  CHECK(s.keys.count("gone") == 0);
  const auto& ks_s = s.keys.at("s");
  CHECK(ks_s.type == "string");
  CHECK(ks_s.value == "v");
  CHECK(ks_s.expire_ms == 5000);
  const auto& kh = s.keys.at("h");
  CHECK(kh.type == "hash");
  CHECK(kh.stored == 4);
  CHECK(kh.hidden() == 1);
  CHECK(kh.hidden_names == std::vector<std::string>{"b"});
  CHECK(kh.fields.size() == 3);
  CHECK(kh.fields.at("a") == FieldSnapshot{"1", std::nullopt});
  CHECK(kh.fields.at("c") == FieldSnapshot{"3", 2000});
  CHECK(kh.fields.at("d") == FieldSnapshot{"4", 1000});
  // Later, d and c pass too; the source name is the caller's.
  const auto later = Snapshot::of_model(ks, 2001, "model@2001");
  CHECK(later.source == "model@2001");
  CHECK(later.keys.at("h").hidden() == 3);
  CHECK(later.keys.at("h").fields.size() == 1);
}

TEST_CASE("Keyspace::loaded drops due keys, due fields and hashes left empty; the original stays", "[state][model]") {
  model::Keyspace ks;
  ks.put("due-key", model::Entry{std::string("x"), 500});
  ks.put("keep", model::Entry{std::string("y"), 5000});
  model::Hash part;
  part.fields["live"] = {"1", 2000};
  part.fields["due"] = {"2", 999};
  part.fields["plain"] = {"3", std::nullopt};
  ks.put("part", model::Entry{part, std::nullopt});
  model::Hash all_due;
  all_due.fields["a"] = {"1", 10};
  all_due.fields["b"] = {"2", 20};
  ks.put("all-due", model::Entry{all_due, std::nullopt});
  ks.put("empty", model::Entry{model::Hash{}, std::nullopt});
  const model::Keyspace before = ks;

  const auto out = ks.loaded(1000);
  CHECK(out.key_names() == std::vector<std::string>{"keep", "part"});
  REQUIRE(out.raw("part") != nullptr);
  const auto& fields = out.raw("part")->hash().fields;
  CHECK(fields.size() == 2);
  CHECK(fields.count("due") == 0);
  CHECK(fields.at("live") == model::Field{"1", 2000});
  CHECK(out.raw("keep")->expire_ms == 5000);
  CHECK(ks == before);
  // The loaded state has nothing left to hide.
  CHECK(out.expired_unreclaimed(1000) == 0);
  const auto s = Snapshot::of_model(out, 1000);
  CHECK(s.keys.at("part").hidden() == 0);
}
