// process::Server lifecycle against the provisioned default server (or EXPIRYKIT_SERVER).
#include <catch2/catch_test_macros.hpp>

#include <sys/stat.h>

#include <expirykit/process/server.hpp>
#include <expirykit/server/info.hpp>

#include "proc_util.hpp"

using namespace expirykit;
using resp::Reply;

TEST_CASE("A server starts on loopback in its own 0700 dir, and stop and destruction clean up", "[process]") {
  std::filesystem::path dir;
  pid_t pid = -1;
  {
    process::Server s;
    dir = s.dir();
    pid = s.pid();
    CHECK(s.host() == "127.0.0.1");
    auto c = s.client();
    CHECK(c("PING") == Reply::status("PONG"));
    auto bind = c("CONFIG", "GET", "bind");
    REQUIRE(bind.is_array());
    CHECK(bind[1] == Reply::string("127.0.0.1"));
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    CHECK(std::filesystem::exists(s.log_path()));
    CHECK(ekcheck::alive(pid));
  }
  CHECK_FALSE(ekcheck::alive(pid));
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("Parallel servers get distinct ports", "[process]") {
  process::Server a, b, c;
  CHECK(a.port() != b.port());
  CHECK(b.port() != c.port());
  CHECK(a.port() != c.port());
}

TEST_CASE("A port another server holds is not taken for ready: its PONG is not our server's", "[process]") {
  // The ctest -j race in miniature: a server already listens where ours is told to bind. Ours
  // exits with "Address already in use" while the other answers PING; start() must see that
  // the answer comes from another process and report ours, not return as if it were ready.
  process::Server holder;
  process::ServerOptions o;
  o.port = holder.port();
  try {
    process::Server second(o);
    FAIL("start() returned on port " << o.port << " held by pid " << holder.pid() << "; second pid "
                                     << second.pid());
  } catch (const process::ServerError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("Address already in use") != std::string::npos);
  }
  auto c = holder.client();
  CHECK(c("PING") == Reply::status("PONG"));
}

TEST_CASE("stop with SAVE and start again in the same dir keeps the data; NOSAVE does not", "[process]") {
  process::ServerOptions o;
  o.persistence = process::Persistence::rdb;
  process::Server s(o);
  {
    auto c = s.client();
    REQUIRE(c("SET", "k", "v") == Reply::ok());
  }
  s.stop(process::Shutdown::save);
  CHECK_FALSE(s.running());
  CHECK(std::filesystem::exists(s.dir() / "dump.rdb"));
  s.start();
  {
    auto c = s.client();
    CHECK(c("GET", "k") == Reply::string("v"));
    REQUIRE(c("SET", "k", "changed") == Reply::ok());
  }
  s.stop(process::Shutdown::nosave);
  s.start();
  CHECK(s.client()("GET", "k") == Reply::string("v"));
}

TEST_CASE("AOF persistence: writes survive a kill -9 and restart", "[process]") {
  process::ServerOptions o;
  o.persistence = process::Persistence::aof;
  o.set("appendfsync", "always");
  process::Server s(o);
  REQUIRE(s.client()("HSET", "h", "a", "1") == Reply::integer(1));
  s.kill();
  s.start();
  CHECK(s.client()("HGET", "h", "a") == Reply::string("1"));
}

TEST_CASE("A crashed server is reported with its exit signal and log tail", "[process]") {
  process::Server s;
  auto c = s.client();
  // DEBUG SEGFAULT makes the server crash the way a real bug would (SIGSEGV, crash report).
  CHECK_THROWS_AS(c("DEBUG", "SEGFAULT"), resp::ConnectionError);
  REQUIRE(ekcheck::eventually([&] { return !s.running(); }));
  try {
    s.check_alive();
    FAIL("check_alive did not throw");
  } catch (const process::ServerDied& e) {
    std::string m = e.what();
    INFO(m);
    CHECK(m.find(s.address()) != std::string::npos);
    CHECK(m.find("signal 11") != std::string::npos);
    CHECK(m.find("crashed by signal") != std::string::npos);  // from the server's crash log
  }
  CHECK_THROWS_AS(s.stop(), process::ServerDied);
}

TEST_CASE("Config overrides and extra args reach the server", "[process]") {
  process::ServerOptions o;
  o.set("hash-max-listpack-entries", "0");
  o.extra_args = {"--hz", "50"};
  process::Server s(o);
  auto c = s.client();
  CHECK(c("CONFIG", "GET", "hash-max-listpack-entries")[1] == Reply::string("0"));
  CHECK(c("CONFIG", "GET", "hz")[1] == Reply::string("50"));
}
