// Bad input gives one clear error naming the thing and what to do, and leaves no process or
// directory behind.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include <expirykit/process/server.hpp>
#include <expirykit/process/target.hpp>

#include "../common/env.hpp"
#include "proc_util.hpp"

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;

namespace {
// Expects `make` to throw ServerError; returns its message. Checks nothing of ours survives.
template <class F>
std::string error_of(F make) {
  const auto dirs_before = ekcheck::dirs_of(::getpid()).size();
  std::string msg;
  try {
    make();
    FAIL("no error was thrown");
  } catch (const process::ServerError& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK(ekcheck::servers_of(::getpid()).empty());
  CHECK(ekcheck::dirs_of(::getpid()).size() == dirs_before);
  return msg;
}
std::filesystem::path scratch(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("ekcheck-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(p);
  return p;
}
process::ServerOptions with_binary(const std::filesystem::path& p) {
  process::ServerOptions o;
  o.binary = p;
  return o;
}
}  // namespace

TEST_CASE("A missing server binary is named, with how to get one", "[process][bad-input]") {
  auto m = error_of([] { process::Server s(with_binary("/nonexistent/valkey-server")); });
  CHECK_THAT(m, ContainsSubstring("/nonexistent/valkey-server") && ContainsSubstring("does not exist") &&
                    ContainsSubstring("ci/provision-servers"));
}

TEST_CASE("A non-executable server binary is named", "[process][bad-input]") {
  auto p = scratch("noexec");
  std::ofstream(p) << "#!/bin/sh\n";
  std::filesystem::permissions(p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto m = error_of([&] { process::Server s(with_binary(p)); });
  CHECK_THAT(m, ContainsSubstring(p.string()) && ContainsSubstring("not an executable"));
  std::filesystem::remove(p);
}

TEST_CASE("A binary that is not a Valkey or Redis server is refused before it is started as one",
          "[process][bad-input]") {
  auto m = error_of([] { process::Server s(with_binary("/bin/ls")); });
  CHECK_THAT(m, ContainsSubstring("/bin/ls") && ContainsSubstring("not a Valkey or Redis server"));
}

TEST_CASE("A binary that prints nothing and hangs is given up on after 5 s, not waited for forever",
          "[process][bad-input]") {
  auto p = scratch("silent-hang");
  std::ofstream(p) << "#!/bin/sh\nexec sleep 60\n";
  std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  auto m = error_of([&] { process::Server s(with_binary(p)); });
  CHECK_THAT(m, ContainsSubstring(p.string()) && ContainsSubstring("did not finish `--version` within 5 s"));
  CHECK(ekcheck::processes_with_arg(p.string()).empty());
  std::filesystem::remove(p);
}

TEST_CASE("A server that exits at start (bad config) is reported with its own error output", "[process][bad-input]") {
  process::ServerOptions o;
  o.set("no-such-directive", "1");
  auto m = error_of([&] { process::Server s(o); });
  CHECK_THAT(m, ContainsSubstring("exited with code 1") && ContainsSubstring("during startup") &&
                    ContainsSubstring("no-such-directive"));
}

TEST_CASE("A fixed port that is taken is named in the error", "[process][bad-input]") {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  process::ServerOptions o;
  o.port = port;
  auto m = error_of([&] { process::Server s(o); });
  CHECK_THAT(m, ContainsSubstring("port " + std::to_string(port)) && ContainsSubstring("Address already in use"));
  ::close(fd);
}

TEST_CASE("An unwritable temp root is named, with what to do", "[process][bad-input]") {
  auto file = scratch("not-a-dir");
  std::ofstream(file) << "x";  // a regular file cannot hold directories, even for root
  process::ServerOptions o;
  o.temp_root = file;
  auto m = error_of([&] { process::Server s(o); });
  CHECK_THAT(m, ContainsSubstring(file.string()) && ContainsSubstring("TMPDIR"));
  std::filesystem::remove(file);
}

TEST_CASE("An unreachable external address is named, with what to do", "[process][bad-input]") {
  {
    ekcheck::ScopedEnv addr("EXPIRYKIT_SERVER_ADDR", "127.0.0.1:1");
    auto m = error_of([] { process::Target t; });
    CHECK_THAT(m, ContainsSubstring("EXPIRYKIT_SERVER_ADDR=127.0.0.1:1") && ContainsSubstring("refused"));
  }
  // Not host:port: a configuration error (config.hpp: std::invalid_argument naming the variable
  // and its value), thrown before anything is started.
  ekcheck::ScopedEnv addr("EXPIRYKIT_SERVER_ADDR", "no-port-here");
  CHECK_THROWS_AS(process::Target(), std::invalid_argument);
  CHECK_THROWS_WITH(process::Target(), ContainsSubstring("EXPIRYKIT_SERVER_ADDR='no-port-here' is not host:port") &&
                                           ContainsSubstring("unset it to let the kit spawn one"));
  CHECK(ekcheck::servers_of(::getpid()).empty());
}

TEST_CASE("An external address that answers something other than RESP is named as such", "[process][bad-input]") {
  // A listener that answers every connection as an HTTP server would; its destructor (also when
  // a check throws) wakes accept() with shutdown(), joins the thread and closes the socket.
  struct HttpListener {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    std::thread thread;
    ~HttpListener() {
      ::shutdown(fd, SHUT_RDWR);
      if (thread.joinable()) thread.join();
      ::close(fd);
    }
  } http;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(http.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(http.fd, 4) == 0);
  socklen_t len = sizeof a;
  ::getsockname(http.fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string addr = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  http.thread = std::thread([fd = http.fd] {
    const int c = ::accept(fd, nullptr, nullptr);
    if (c < 0) return;
    const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    [[maybe_unused]] auto n = ::write(c, reply, sizeof reply - 1);
    char buf[256];
    while (::read(c, buf, sizeof buf) > 0) {
    }
    ::close(c);
  });
  ekcheck::ScopedEnv external("EXPIRYKIT_SERVER_ADDR", addr.c_str());
  auto m = error_of([] { process::Target t; });
  CHECK_THAT(m, ContainsSubstring("EXPIRYKIT_SERVER_ADDR=" + addr) && ContainsSubstring("not valid RESP2"));
}

TEST_CASE("EXPIRYKIT_SERVER naming a server that is not provisioned lists those that are and says how to provision one",
          "[process][bad-input]") {
  ekcheck::ScopedEnv server("EXPIRYKIT_SERVER", "valkey-0.1");
  auto m = error_of([] { process::Server s; });
  CHECK_THAT(m, ContainsSubstring("EXPIRYKIT_SERVER=valkey-0.1 names no provisioned server") &&
                    ContainsSubstring("(provisioned there: ") && ContainsSubstring("bash ci/provision-servers NAME"));
  // The default server is provisioned wherever these checks run (ci/test provisions it first).
  CHECK_THAT(m, ContainsSubstring(std::string(process::default_server_name)));
}

TEST_CASE("A missing seed file is named", "[process][bad-input][seed]") {
  auto missing = scratch("no-such-dump.rdb");
  process::ServerOptions o;
  o.seed_files = {missing};
  auto m = error_of([&] { process::Server s(o); });
  CHECK_THAT(m, ContainsSubstring("seed file " + missing.string()));
}
