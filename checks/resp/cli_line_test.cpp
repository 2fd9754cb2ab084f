// resp::parse_cli_line reads valkey-cli lines: quoting as valkey-cli's own (sdssplitargs in
// valkey's src/sds.c), and it inverts resp::cli_line for any arguments (RapidCheck).
#include <catch2/catch_test_macros.hpp>

#include <stdexcept>
#include <string>

#include <expirykit/catch2/prop.hpp>
#include <expirykit/resp/reply.hpp>

using expirykit::resp::Argv;
using expirykit::resp::cli_line;
using expirykit::resp::parse_cli_line;

TEST_CASE("parse_cli_line: words, double and single quotes, escapes", "[resp]") {
  CHECK(parse_cli_line("HSET h a 1") == Argv{"HSET", "h", "a", "1"});
  CHECK(parse_cli_line("  HSET   h\ta  ") == Argv{"HSET", "h", "a"});
  CHECK(parse_cli_line(R"(HSET h "a b" "")") == Argv{"HSET", "h", "a b", ""});
  CHECK(parse_cli_line(R"(SET k 'it\'s' "q\"\\")") == Argv{"SET", "k", "it's", "q\"\\"});
  CHECK(parse_cli_line(R"(SET k "\x01\xfe\n")") == Argv{"SET", "k", std::string("\x01\xfe\n")});
  CHECK(parse_cli_line("").empty());
  CHECK_THROWS_AS(parse_cli_line(R"(SET k "open)"), std::invalid_argument);
  CHECK_THROWS_AS(parse_cli_line(R"(SET k "a"b)"), std::invalid_argument);
}

TEST_CASE("parse_cli_line inverts cli_line for any arguments", "[resp]") {
  expirykit::catch2::prop("parse_cli_line(cli_line(argv)) == argv", [](const Argv& argv) {
    RC_ASSERT(parse_cli_line(cli_line(argv)) == argv);
  });
}
