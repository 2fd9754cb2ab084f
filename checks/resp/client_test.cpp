// resp::Client against a real server (the provisioned default, or EXPIRYKIT_SERVER).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/env.hpp>

#include "../common/env.hpp"

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

TEST_CASE_METHOD(ServerFixture, "A reply delay (EXPIRYKIT_WIRE_DELAY_MS or set_reply_delay) waits once per round trip",
                 "[resp]") {
  // Lower bounds only: they hold however loaded the machine is.
  using clock = std::chrono::steady_clock;
  constexpr auto delay = std::chrono::milliseconds(120);
  auto timed = [](auto&& f) {
    const auto t0 = clock::now();
    f();
    return clock::now() - t0;
  };
  SECTION("set_reply_delay") {
    Client c(target().host(), target().port());
    CHECK(c.reply_delay() == std::chrono::milliseconds(0));
    c.set_reply_delay(delay);
    CHECK(timed([&] { CHECK(c("PING") == Reply::status("PONG")); }) >= delay);
    std::vector<Reply> rs;
    CHECK(timed([&] { rs = c.pipeline({{"SET", "wd", "1"}, {"INCR", "wd"}, {"GET", "wd"}}); }) >= delay);
    CHECK(rs == std::vector<Reply>{Reply::ok(), Reply::integer(2), Reply::string("2")});
    CHECK(timed([&] {
            (void)c("PING");
            (void)c("PING");
          }) >= 2 * delay);
  }
  SECTION("EXPIRYKIT_WIRE_DELAY_MS, and replay lines keep it") {
    ekcheck::ScopedEnv env("EXPIRYKIT_WIRE_DELAY_MS", "120");
    Client c(target().host(), target().port());
    CHECK(c.reply_delay() == delay);
    CHECK(timed([&] { CHECK(c("PING") == Reply::status("PONG")); }) >= delay);
    CHECK(expirykit::env::server_assignments().find("EXPIRYKIT_WIRE_DELAY_MS='120' ") != std::string::npos);
  }
  SECTION("a bad value is an error naming it") {
    ekcheck::ScopedEnv env("EXPIRYKIT_WIRE_DELAY_MS", "3ms");
    CHECK_THROWS_WITH(expirykit::config(), Catch::Matchers::ContainsSubstring("EXPIRYKIT_WIRE_DELAY_MS='3ms'") &&
                                               Catch::Matchers::ContainsSubstring("0 to 60000"));
  }
  SECTION("0 is off, as unset (a CI matrix's off leg)") {
    ekcheck::ScopedEnv env("EXPIRYKIT_WIRE_DELAY_MS", "0");
    CHECK(expirykit::config().wire_delay_ms == 0);
    Client c(target().host(), target().port());
    CHECK(c.reply_delay() == std::chrono::milliseconds(0));
    CHECK(expirykit::env::server_assignments().find("EXPIRYKIT_WIRE_DELAY_MS") == std::string::npos);
  }
}

TEST_CASE_METHOD(ServerFixture, "A read polls before it blocks (EXPIRYKIT_READ_SPIN_US or set_read_spin), replies unchanged",
                 "[resp]") {
  using clock = std::chrono::steady_clock;
  SECTION("300 us unless set; replies in order, a slow one read after the polling gives up") {
    Client c(target().host(), target().port());
    CHECK(c.read_spin() == std::chrono::microseconds(300));
    for (const auto spin : {std::chrono::microseconds(300), std::chrono::microseconds(0)}) {
      c.set_read_spin(spin);
      CHECK(c.pipeline({{"SET", "rs", "1"}, {"INCR", "rs"}, {"GET", "rs"}}) ==
            std::vector<Reply>{Reply::ok(), Reply::integer(2), Reply::string("2")});
      const auto t0 = clock::now();
      CHECK(c("BLPOP", "rs-none", "0.05").is_nil());  // 50 ms: the read blocks after 300 us
      CHECK(clock::now() - t0 >= std::chrono::milliseconds(50));
    }
  }
  SECTION("a connection the server closes while the read polls throws ConnectionError") {
    Client c(target().host(), target().port());
    const auto id = c("CLIENT", "ID").as_integer();
    c.append({"BLPOP", "rs-none", "5"});
    c.send();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE(target().client()("CLIENT", "KILL", "ID", std::to_string(id)) == Reply::integer(1));
    CHECK_THROWS_AS(c.read(), ConnectionError);
  }
  SECTION("read_for: a message that arrives is read, none within the timeout is std::nullopt") {
    Client sub(target().host(), target().port());
    REQUIRE(sub("SUBSCRIBE", "rs-chan").is_array());
    CHECK_FALSE(sub.read_for(std::chrono::milliseconds(20)).has_value());
    REQUIRE(target().client()("PUBLISH", "rs-chan", "hi") == Reply::integer(1));
    const auto m = sub.read_for(std::chrono::milliseconds(2000));
    REQUIRE(m.has_value());
    CHECK((*m)[2] == Reply::string("hi"));
  }
  SECTION("EXPIRYKIT_READ_SPIN_US: a number of microseconds, 0 never polls, a bad value is an error naming it") {
    {
      ekcheck::ScopedEnv env("EXPIRYKIT_READ_SPIN_US", "0");
      CHECK(Client(target().host(), target().port()).read_spin() == std::chrono::microseconds(0));
    }
    {
      ekcheck::ScopedEnv env("EXPIRYKIT_READ_SPIN_US", "1000");
      Client c(target().host(), target().port());
      CHECK(c.read_spin() == std::chrono::microseconds(1000));
      CHECK(c("PING") == Reply::status("PONG"));
    }
    ekcheck::ScopedEnv env("EXPIRYKIT_READ_SPIN_US", "300us");
    CHECK_THROWS_WITH(expirykit::config(), Catch::Matchers::ContainsSubstring("EXPIRYKIT_READ_SPIN_US='300us'") &&
                                               Catch::Matchers::ContainsSubstring("0 to 100000"));
  }
}
