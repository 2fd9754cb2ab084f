// server::Info parsing, on INFO text in the shape Valkey 9.1.2 prints (sections "# Name",
// CRLF lines, keyspace values "keys=..,expires=..").
#include <catch2/catch_test_macros.hpp>

#include <string>

#include <expirykit/server/info.hpp>

using expirykit::server::Info;

TEST_CASE("INFO text parses into sections and integer fields", "[server]") {
  const char* text =
      "# Server\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\nredis_version:7.2.4\r\n\r\n"
      "# Stats\r\nexpired_keys:3\r\nexpired_fields:2000\r\nweird:abc\r\n\r\n"
      "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=0,keys_with_volatile_items=1\r\n";
  auto info = Info::parse(text);
  CHECK(info.get("valkey_version") == "9.1.2");
  CHECK(info.get_int("expired_fields") == 2000);
  CHECK(info.get_int("absent", -7) == -7);
  CHECK_THROWS_AS(info.get_int("weird"), std::runtime_error);
  REQUIRE(info.section("Stats") != nullptr);
  CHECK(info.section("Stats")->size() == 3);
  CHECK(info.section("Nope") == nullptr);
  CHECK(info.keyspace("keys") == 2);
  CHECK(info.keyspace("keys_with_volatile_items") == 1);
  CHECK(info.keyspace("subexpiry") == 0);
  CHECK(info.keyspace("keys", 1) == 0);
}

TEST_CASE("Info::find reads one field of INFO text as parse() does where keys are unique", "[server]") {
  const std::string text =
      "# Stats\r\nexpired_keys:3\r\nexpired_keys_x:9\r\nexpired_fields:2000\r\nweird:abc\r\nempty:\r\n\r\n"
      "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=0,subexpiry=1\r\ndb10:keys=5\r\ndb1:keys=7";
  const auto info = Info::parse(text);
  for (const char* key : {"expired_keys", "expired_keys_x", "expired_fields", "weird", "empty", "db0", "db1", "db10",
                          "expired", "absent", "Stats"}) {
    INFO(key);
    const auto got = Info::find(text, key);
    const auto want = info.get(key);
    REQUIRE(got.has_value() == want.has_value());
    if (got) CHECK(std::string(*got) == *want);
  }
  CHECK(Info::find_int(text, "expired_fields") == 2000);
  CHECK(Info::find_int(text, "absent", -7) == -7);
  CHECK_THROWS_AS(Info::find_int(text, "weird"), std::runtime_error);
  CHECK(Info::find_keyspace(text, "subexpiry") == info.keyspace("subexpiry"));
  CHECK(Info::find_keyspace(text, "keys", 1) == 7);  // the last line has no CRLF
  CHECK(Info::find_keyspace(text, "keys", 10) == 5);
  CHECK(Info::find_keyspace(text, "keys", 2) == 0);
}
