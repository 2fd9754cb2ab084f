// Dialect selection and its data (redis-hfe.md §1, §12, §14; valkey-hfe.md §2).
#include <catch2/catch_test_macros.hpp>

#include <expirykit/model/dialect.hpp>

using expirykit::model::Dialect;
using expirykit::model::Rounding;

TEST_CASE("Dialect::for_server picks by flavor and version", "[model][dialect]") {
  CHECK(Dialect::for_server("valkey", 9, 1)->name == "valkey-9.1");
  CHECK(Dialect::for_server("valkey", 9, 2)->name == "valkey-9.1");
  CHECK_FALSE(Dialect::for_server("valkey", 9, 0)->has_hgetdel);  // HGETDEL is 9.1+
  CHECK_FALSE(Dialect::for_server("valkey", 8, 1).has_value());
  CHECK_FALSE(Dialect::for_server("valkey", 8, 0).has_value());
  CHECK(Dialect::for_server("redis", 8, 0)->name == "redis-8.0");
  auto r74 = Dialect::for_server("redis", 7, 4);
  REQUIRE(r74);
  CHECK(r74->name == "redis-7.4");
  CHECK_FALSE(r74->has_hsetex);
  CHECK_FALSE(r74->has_hgetex);
  CHECK_FALSE(Dialect::for_server("redis", 7, 2).has_value());
  CHECK_FALSE(Dialect::for_server("redis", 7, 0).has_value());
  CHECK_FALSE(Dialect::for_server("keydb", 9, 9).has_value());
}

TEST_CASE("Dialect data per redis-hfe.md §12/§14", "[model][dialect]") {
  const Dialect v = Dialect::valkey_9_1(), r = Dialect::redis_8_0();
  CHECK(v.hsetex_key_nx_xx);
  CHECK_FALSE(r.hsetex_key_nx_xx);
  CHECK(v.sec_rounding == Rounding::nearest);
  CHECK(r.sec_rounding == Rounding::ceiling);
  CHECK(r.max_field_expire_ms == 70368744177663);
  CHECK(v.max_field_expire_ms == 9223372036854775807LL);
  CHECK(r.lazy_delete_on_read);
  CHECK_FALSE(v.lazy_delete_on_read);
  CHECK(r.hdel_expired_reply == 1);
  CHECK(v.hdel_expired_reply == 0);
  CHECK(v.duplicate_flags_accepted);
  CHECK_FALSE(r.duplicate_flags_accepted);
  CHECK(r.wrongtype_before_args);
  CHECK(v.info_expired_fields_stat == "expired_fields");
  CHECK(r.info_expired_fields_stat == "expired_subkeys");
  CHECK(v.info_keyspace_volatile == "keys_with_volatile_items");
  CHECK(r.info_keyspace_volatile == "subexpiry");
  CHECK(v.ttl_encoding == "hashtable");
  CHECK(r.ttl_encoding == "listpackex");
  CHECK(v.to_seconds(2500) == 3);
  CHECK(v.to_seconds(2499) == 2);
  CHECK(r.to_seconds(2001) == 3);
  CHECK(v.to_seconds(9223372036854775807LL) == 9223372036854776LL);  // no overflow (live 9.1.2)
}

TEST_CASE("Error texts: {arg} is cut at its first NUL byte, as the servers' %s prints it", "[model][dialect]") {
  using expirykit::model::ErrorTexts;
  CHECK(ErrorTexts::format("ERR unknown argument: {arg}", "HSETEX", std::string("b\0c", 3)) == "ERR unknown argument: b");
  CHECK(ErrorTexts::format("ERR unknown argument: {arg}", "HSETEX", std::string("\0\xff\xfe", 3)) == "ERR unknown argument: ");
  CHECK(ErrorTexts::format("ERR unknown argument: {arg}", "HSETEX", "NX") == "ERR unknown argument: NX");
  CHECK(ErrorTexts::format("ERR {cmd}: {arg}", "HSETEX", "x") ==
        "ERR hsetex: x");
}
