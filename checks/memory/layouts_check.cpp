// Checks of memory/layouts.hpp: command shapes, item counts, TTL modes, values. No server.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <set>

#include <expirykit/memory/layouts.hpp>

using namespace expirykit;
using resp::Argv;

TEST_CASE("memory layouts: names are unique and by_name finds each", "[memory][layouts]") {
  std::set<std::string> names;
  for (const auto& l : memory::all()) {
    CHECK(names.insert(l.name).second);
    CHECK(memory::by_name(l.name).name == l.name);
    CHECK(l.items > 0);
    CHECK(l.steps > 0);
    CHECK(l.key_count > 0);
    CHECK_FALSE(l.description.empty());
  }
  CHECK(names.size() == 11);
  CHECK_THROWS_WITH(memory::by_name("nope"), Catch::Matchers::ContainsSubstring("hash1-hsetex"));
}

TEST_CASE("memory layouts: the token patterns send the documented commands", "[memory][layouts]") {
  memory::LayoutParams p;
  p.n = 100;
  auto v7 = memory::detail::hex_value(7, 40);
  CHECK(memory::string_ex(p).command("", 7) == Argv{"SET", "user:7:auth_token", v7, "EX", "900"});
  CHECK(memory::hash1_hsetex(p).command("warm:", 7) ==
        Argv{"HSETEX", "warm:user:7", "EX", "900", "FIELDS", "1", "auth_token", v7});
  CHECK(memory::hash1_plain(p).command("", 7) == Argv{"HSET", "user:7", "auth_token", v7});
  auto e = memory::hash1_expire(p);
  CHECK(e.steps == 200);
  CHECK(e.command("", 14) == Argv{"HSET", "user:7", "auth_token", v7});
  CHECK(e.command("", 15) == Argv{"EXPIRE", "user:7", "900"});
  CHECK(memory::bighash(true, p).command("", 7) ==
        Argv{"HSETEX", "tokens", "EX", "900", "FIELDS", "1", "user:7", v7});
  CHECK(memory::bighash(true, p).key("", 99) == "tokens");
  CHECK(memory::hash1_hsetex(p).key("", 3) == "user:3");
}

TEST_CASE("memory layouts: hashes of F fields count fields, one command per hash", "[memory][layouts]") {
  memory::LayoutParams p;
  p.n = 1005;
  auto l = memory::small_hashes(10, true, p);
  CHECK(l.name == "hash10-ttl");
  CHECK(l.items == 1000);
  CHECK(l.steps == 100);
  CHECK(l.key_count == 100);
  auto c = l.command("", 3);
  REQUIRE(c.size() == 6 + 20);
  CHECK(Argv(c.begin(), c.begin() + 6) == Argv{"HSETEX", "obj:3", "EX", "900", "FIELDS", "10"});
  CHECK(c[6] == "f0");
  CHECK(c[7] == memory::detail::hex_value(30, 40));
  auto ints = memory::ints50(p);
  CHECK(ints.items == 1000);
  CHECK(ints.unit == "value");
  auto ic = ints.command("", 0);
  CHECK(ic.size() == 102);
  for (std::size_t k = 3; k < ic.size(); k += 2) CHECK(std::stoi(ic[k]) < 1000);
  CHECK_THROWS_AS(memory::small_hashes(0, false, p), std::invalid_argument);
}

TEST_CASE("memory layouts: paced TTLs are absolute and independent of load speed", "[memory][layouts]") {
  memory::LayoutParams p;
  p.n = 100;
  p.expire_at_ms = 4'000'000'000'000;
  p.expire_step_ms = 1;
  CHECK(p.ttl_mode() == "PXAT base+1ms/item");
  CHECK(memory::hash1_hsetex(p).command("", 7)[2] == "PXAT");
  CHECK(memory::hash1_hsetex(p).command("", 7)[3] == "4000000000007");
  CHECK(memory::string_ex(p).command("", 7)[4] == "4000000000007");
  CHECK(memory::small_hashes(10, true, p).command("", 3)[3] == "4000000000030");  // first item of hash 3
  CHECK(memory::hash1_expire(p).command("", 15) == Argv{"PEXPIREAT", "user:7", "4000000000007"});
  auto base = memory::aligned_expiry_ms(900);
  CHECK(base % 65536 == 0);
  CHECK(memory::LayoutParams{}.ttl_mode() == "EX 900");
}

TEST_CASE("memory layouts: values are hex, sized, distinct and the same every run", "[memory][layouts]") {
  auto a = memory::detail::hex_value(1, 40);
  CHECK(a.size() == 40);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a == memory::detail::hex_value(1, 40));
  CHECK(a != memory::detail::hex_value(2, 40));
  CHECK(memory::detail::hex_value(1, 48).size() == 48);
  CHECK(memory::detail::hex_value(1, 0).empty());
}
