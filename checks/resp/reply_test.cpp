// resp::Reply: equality and valkey-cli style printing (the expected strings are how
// valkey-cli 9.1.2 prints these replies).
#include <catch2/catch_test_macros.hpp>

#include <expirykit/resp/reply.hpp>

using expirykit::resp::Reply;
using expirykit::resp::ReplyTypeError;

TEST_CASE("Replies compare by type and content", "[resp]") {
  CHECK(Reply::integer(1) == Reply::integer(1));
  CHECK_FALSE(Reply::integer(1) == Reply::string("1"));
  CHECK_FALSE(Reply::status("OK") == Reply::string("OK"));
  CHECK_FALSE(Reply::error("ERR x") == Reply::status("ERR x"));
  CHECK(Reply::nil() == Reply());
  CHECK(Reply::ints({1, -2}) == Reply::array({Reply::integer(1), Reply::integer(-2)}));
  CHECK_FALSE(Reply::ints({1, -2}) == Reply::ints({1}));
  CHECK(Reply::string(std::string("a\0b", 3)) == Reply::string(std::string("a\0b", 3)));
  CHECK_FALSE(Reply::string(std::string("a\0b", 3)) == Reply::string("a"));
}

TEST_CASE("Replies print as valkey-cli shows them", "[resp]") {
  CHECK(Reply::integer(-2).to_string() == "(integer) -2");
  CHECK(Reply::nil().to_string() == "(nil)");
  CHECK(Reply::status("OK").to_string() == "OK");
  CHECK(Reply::error("ERR syntax error").to_string() == "(error) ERR syntax error");
  CHECK(Reply::string("v").to_string() == "\"v\"");
  CHECK(Reply::string("a\"b\n\x01\xff").to_string() == "\"a\\\"b\\n\\x01\\xff\"");
  CHECK(Reply::array({}).to_string() == "(empty array)");
  CHECK(Reply::ints({1, -2}).to_string() == "1) (integer) 1\n2) (integer) -2");
  auto nested = Reply::array({Reply::string("a"), Reply::array({Reply::integer(1), Reply::nil()})});
  CHECK(nested.to_string() == "1) \"a\"\n2) 1) (integer) 1\n   2) (nil)");
  std::vector<long long> ten(10, 0);
  auto lines = Reply::ints(ten).to_string();
  CHECK(lines.substr(0, 15) == " 1) (integer) 0");
  CHECK(lines.find("\n10) (integer) 0") != std::string::npos);
}

TEST_CASE("Reading a reply as the wrong type throws with the reply in the message", "[resp]") {
  CHECK_THROWS_AS(Reply::error("ERR x").as_integer(), ReplyTypeError);
  try {
    (void)Reply::error("ERR boom").as_integer();
  } catch (const ReplyTypeError& e) {
    CHECK(std::string(e.what()).find("ERR boom") != std::string::npos);
  }
  CHECK_THROWS_AS(Reply::integer(1).elements(), ReplyTypeError);
  CHECK_THROWS_AS(Reply::ints({1})[1], std::out_of_range);
  CHECK(Reply::ints({3, 4}).as_integers() == std::vector<long long>{3, 4});
  CHECK(Reply::error("WRONGTYPE Operation").is_error_starting("WRONGTYPE"));
  CHECK_FALSE(Reply::string("WRONGTYPE").is_error_starting("WRONGTYPE"));
}

TEST_CASE("cli_line quotes arguments so valkey-cli reads them back verbatim", "[resp]") {
  using expirykit::resp::cli_line;
  CHECK(cli_line({"HSET", "k", "f", "1"}) == "HSET k f 1");
  CHECK(cli_line({"SET", "a b", ""}) == "SET \"a b\" \"\"");
  CHECK(cli_line({"SET", "q\"\\", "\x01\xfe"}) == "SET \"q\\\"\\\\\" \"\\x01\\xfe\"");
}
