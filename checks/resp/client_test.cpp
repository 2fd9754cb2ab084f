// resp::Client against a real server (the provisioned default, or EXPIRYKIT_SERVER).
#include <catch2/catch_test_macros.hpp>

#include <chrono>

#include <expirykit/catch2/fixture.hpp>

using expirykit::catch2::ServerFixture;
using expirykit::resp::Client;
using expirykit::resp::ConnectionError;
using expirykit::resp::Reply;

TEST_CASE_METHOD(ServerFixture, "Binary-safe arguments and values round-trip unchanged", "[resp]") {
  auto& c = client();
  std::string key("k\0\r\n", 4), value;
  for (int i = 0; i < 256; ++i) value += static_cast<char>(i);
  CHECK(c.call({"SET", key, value}) == Reply::ok());
  CHECK(c.call({"GET", key}) == Reply::string(value));
  CHECK(c("STRLEN", key) == Reply::integer(256));
  CHECK(c("HSET", "h", "", "") == Reply::integer(1));
  CHECK(c("HGET", "h", "") == Reply::string(""));
}

TEST_CASE_METHOD(ServerFixture, "Server errors are replies and the connection stays usable", "[resp]") {
  auto& c = client();
  auto r = c("NOSUCHCOMMAND", "x");
  CHECK(r.is_error());
  CHECK(r.str().find("unknown command") != std::string::npos);
  CHECK(c("PING") == Reply::status("PONG"));
}

TEST_CASE_METHOD(ServerFixture, "A pipeline returns one reply per command, in order, errors included", "[resp]") {
  auto& c = client();
  std::vector<expirykit::resp::Argv> cmds;
  for (int i = 0; i < 1000; ++i) cmds.push_back({"SET", "k" + std::to_string(i), std::to_string(i)});
  cmds.push_back({"INCR", "k5"});
  cmds.push_back({"HGET", "k5", "f"});
  cmds.push_back({"DBSIZE"});
  auto rs = c.pipeline(cmds);
  REQUIRE(rs.size() == 1003);
  CHECK(rs[999] == Reply::ok());
  CHECK(rs[1000] == Reply::integer(6));
  CHECK(rs[1001].is_error_starting("WRONGTYPE"));
  CHECK(rs[1002] == Reply::integer(1000));
}

TEST_CASE_METHOD(ServerFixture, "read_for returns nothing on timeout, then a published message", "[resp]") {
  auto sub = target().client();
  auto r = sub("SUBSCRIBE", "ch");
  REQUIRE(r.is_array());
  CHECK(!sub.read_for(std::chrono::milliseconds(50)).has_value());
  CHECK(client()("PUBLISH", "ch", "hello") == Reply::integer(1));
  auto msg = sub.read_for(std::chrono::milliseconds(5000));
  REQUIRE(msg.has_value());
  CHECK(*msg == Reply::array({Reply::string("message"), Reply::string("ch"), Reply::string("hello")}));
}

TEST_CASE("A refused connection throws ConnectionError naming the address", "[resp]") {
  // Port 1 on loopback: nothing listens there (tcpmux is not run here).
  try {
    Client c("127.0.0.1", 1);
    FAIL("connected to 127.0.0.1:1");
  } catch (const ConnectionError& e) {
    std::string m = e.what();
    CHECK(m.find("127.0.0.1:1") != std::string::npos);
    CHECK(m.find("refused") != std::string::npos);
  }
}

TEST_CASE_METHOD(ServerFixture, "A connection closed by the server throws ConnectionError on the next call", "[resp]") {
  auto victim = target().client();
  REQUIRE(victim("CLIENT", "SETNAME", "victim") == Reply::ok());
  CHECK(client()("CLIENT", "KILL", "USER", "default").is_integer());
  CHECK_THROWS_AS(victim("PING"), ConnectionError);
  CHECK_THROWS_AS(victim("PING"), ConnectionError);  // closed for good, and says so
  CHECK(target().client()("PING") == Reply::status("PONG"));
}
