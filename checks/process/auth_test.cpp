// Servers that want a password (requirepass, ACL users): spawned ones, external mode with
// EXPIRYKIT_SERVER_PASSWORD / EXPIRYKIT_SERVER_USER, and a replica set (resp/credentials.hpp).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/process/target.hpp>

#include "../common/env.hpp"

using namespace expirykit;
using Catch::Matchers::ContainsSubstring;
using resp::Reply;

namespace {
process::ServerOptions with_password(const std::string& pw) {
  process::ServerOptions o;
  o.set("requirepass", pw);
  return o;
}
/// The message of the ConnectionError a connection to `s` throws, "" if none.
std::string connect_error(const process::Server& s) {
  try {
    resp::Client c(s.host(), s.port());
  } catch (const resp::ConnectionError& e) {
    return e.what();
  }
  return {};
}
}  // namespace

TEST_CASE("A spawned server with requirepass: the kit's connections authenticate, a bare one is refused",
          "[process][auth]") {
  process::Server s(with_password("s3cret-pw"));  // the readiness PING authenticated
  auto c = s.client();
  CHECK(c("PING") == Reply::status("PONG"));
  CHECK(c("ACL", "WHOAMI") == Reply::string("default"));
  const auto own = resp::credentials_for(s.address());
  REQUIRE(own == resp::Credentials{"", "s3cret-pw"});

  resp::set_credentials(s.address(), std::nullopt);  // as a client that knows no password
  {
    resp::Client bare(s.host(), s.port());
    const Reply r = bare("PING");
    CHECK(r.is_error());
    CHECK_THAT(r.str(), ContainsSubstring("NOAUTH"));
  }
  resp::set_credentials(s.address(), resp::Credentials{"", "not-the-password"});
  const std::string refused = connect_error(s);
  CHECK_THAT(refused, ContainsSubstring(s.address() + ": AUTH as the default user refused"));
  CHECK_THAT(refused, !ContainsSubstring("not-the-password"));

  REQUIRE(c("ACL", "SETUSER", "alice", "on", ">alice-pw", "~*", "&*", "+@all") == Reply::ok());
  resp::set_credentials(s.address(), resp::Credentials{"alice", "alice-pw"});
  {
    resp::Client a(s.host(), s.port());
    CHECK(a("ACL", "WHOAMI") == Reply::string("alice"));
  }
  resp::set_credentials(s.address(), resp::Credentials{"alice", "wrong-one"});
  CHECK_THAT(connect_error(s), ContainsSubstring("AUTH as user alice refused"));
  resp::set_credentials(s.address(), own);
}

TEST_CASE("External mode authenticates with EXPIRYKIT_SERVER_PASSWORD and EXPIRYKIT_SERVER_USER", "[process][auth]") {
  process::Server s(with_password("ext-pw"));
  resp::forget_credentials(s.address());  // as a server the kit did not spawn
  ekcheck::ScopedEnv addr("EXPIRYKIT_SERVER_ADDR", s.address().c_str());
  {
    ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", "ext-pw"), user("EXPIRYKIT_SERVER_USER", nullptr);
    process::Target t;
    REQUIRE(t.external());
    auto c = t.client();
    CHECK(c("PING") == Reply::status("PONG"));
    REQUIRE(c("ACL", "SETUSER", "bob", "on", ">bob-pw", "~*", "&*", "+@all") == Reply::ok());
  }
  {
    ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", "bob-pw"), user("EXPIRYKIT_SERVER_USER", "bob");
    process::Target t;
    CHECK(t.client()("ACL", "WHOAMI") == Reply::string("bob"));
  }
  auto error_of = [] {
    try {
      process::Target t;
    } catch (const process::ServerError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  {
    ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", nullptr), user("EXPIRYKIT_SERVER_USER", nullptr);
    const std::string e = error_of();
    CHECK_THAT(e, ContainsSubstring("NOAUTH") && ContainsSubstring("set EXPIRYKIT_SERVER_PASSWORD"));
  }
  {
    ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", "not-ext-pw"), user("EXPIRYKIT_SERVER_USER", nullptr);
    const std::string e = error_of();
    CHECK_THAT(e, ContainsSubstring("AUTH as the default user refused") &&
                      ContainsSubstring("check EXPIRYKIT_SERVER_PASSWORD and EXPIRYKIT_SERVER_USER"));
    // The address once, first; the server's sentence without its full stop before ours.
    CHECK(e.rfind("EXPIRYKIT_SERVER_ADDR=" + s.address() + ": AUTH as the default user refused", 0) == 0);
    CHECK_THAT(e, !ContainsSubstring(".;"));
    CHECK_THAT(e, !ContainsSubstring("not-ext-pw"));
  }
  {
    ekcheck::ScopedEnv pw("EXPIRYKIT_SERVER_PASSWORD", nullptr), user("EXPIRYKIT_SERVER_USER", "bob");
    CHECK_THAT(error_of(), ContainsSubstring("EXPIRYKIT_SERVER_USER='bob' is set without EXPIRYKIT_SERVER_PASSWORD"));
  }
  resp::set_fallback_credentials(std::nullopt);
}

TEST_CASE("A replica set whose primary has requirepass: the replicas authenticate with it and follow",
          "[process][auth][replica]") {
  process::ReplicaSetOptions o;
  o.primary = with_password("repl-pw");
  process::ReplicaSet rs(o);
  auto p = rs.primary().client();
  REQUIRE(p("HSET", "h", "a", "1") == Reply::integer(1));
  rs.sync();
  auto r = rs.replica(0).client();
  CHECK(r("HGET", "h", "a") == Reply::string("1"));
  CHECK(r("CONFIG", "GET", "masterauth") == Reply::strings({"masterauth", "repl-pw"}));
}
