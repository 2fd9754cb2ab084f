// The fault injector (include/expirykit/fault/): the session's pairing logic on canned bytes,
// then the proxy against the shared spawned server (the provisioned default or
// EXPIRYKIT_SERVER): with no fault everything passes through unchanged (a pipeline like the
// twin's, MULTI/EXEC, binary values, a large value, a null array, a keyspace-notification
// subscriber, CLIENT TRACKING REDIRECT), and a few faults rewrite what they claim, read back on a
// direct connection to the same server. Closing either side and stop() leave no thread behind.
#include <catch2/catch_test_macros.hpp>

#include <dirent.h>

#include <chrono>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/catch2/fixture.hpp>
#include <expirykit/catch2/matchers.hpp>
#include <expirykit/fault/faults.hpp>
#include <expirykit/fault/proxy.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/observe/tracking.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/info.hpp>

using namespace expirykit;
using catch2::EachIntegerIn;
using resp::Argv;
using resp::Reply;

namespace {

/// Threads of this process (/proc/self/task).
int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

/// A proxy in front of the shared server with fault `id`, and a client through it.
class ProxyFixture : public catch2::ServerFixture {
 protected:
  fault::Proxy& proxy(const std::string& id = "none") {
    if (!proxy_) {
      auto f = fault::find(id);
      REQUIRE(f);
      proxy_ = std::make_unique<fault::Proxy>(fault::Proxy::Options{target().host(), target().port(), 0, f->hooks});
    }
    return *proxy_;
  }
  resp::Client via(const std::string& id = "none") { return resp::Client("127.0.0.1", proxy(id).port()); }
  resp::Client& direct() { return client(); }

 private:
  std::unique_ptr<fault::Proxy> proxy_;
};

/// "hset@h, hexpire@h": names and keys of notifications in order.
std::string names(const std::vector<model::Event>& es) {
  std::string out;
  for (const auto& e : es) out += (out.empty() ? "" : ", ") + e.name + "@" + e.key;
  return out;
}

std::string session_run(fault::Session& s, const std::string& from_client, const std::string& from_server,
                        std::string* to_server = nullptr) {
  std::string up, down;
  for (char c : from_client) s.from_client(std::string_view(&c, 1), up);  // one byte at a time
  for (char c : from_server) s.from_upstream(std::string_view(&c, 1), down);
  if (to_server) *to_server = up;
  return down;
}

}  // namespace

TEST_CASE("Session: pairs pipelined replies, byte for byte when no hook changes them", "[fault]") {
  fault::Session s;
  const std::string req = "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nEXEC\r\n";
  const std::string rep = "+PONG\r\n$-1\r\n*-1\r\n";
  std::string up;
  CHECK(session_run(s, req, rep, &up) == rep);  // *-1 stays a null array
  CHECK(up == req);
  CHECK(s.pending() == 0);
  CHECK(s.passthrough().empty());
}

TEST_CASE("Session: subscribed mode, pushes and (un)subscribe counts", "[fault]") {
  int pushes = 0;
  fault::Hooks h;
  h.push = [&](const Reply& m) -> std::optional<std::vector<Reply>> {
    ++pushes;
    if (m[2].is_string() && m[2].str() == "drop") return std::vector<Reply>{};
    return std::nullopt;
  };
  h.reply = [](const Argv& a, const Reply&) -> std::optional<Reply> {
    return a[0] == "PING" ? std::optional<Reply>(Reply::status("REWRITTEN")) : std::nullopt;
  };
  fault::Session s(h);
  std::string up, down;
  s.from_client("*3\r\n$9\r\nSUBSCRIBE\r\n$1\r\na\r\n$1\r\nb\r\n*1\r\n$4\r\nPING\r\n", up);
  s.from_upstream("*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n", down);
  CHECK(s.pending() == 1);  // PING still due
  s.from_upstream("*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$4\r\ndrop\r\n*3\r\n$7\r\nmessage\r\n$1\r\nb\r\n$4\r\nkeep\r\n", down);
  CHECK(pushes == 2);
  CHECK(s.pending() == 1);
  s.from_upstream("*2\r\n$4\r\npong\r\n$0\r\n\r\n", down);
  CHECK(s.pending() == 0);
  CHECK(down.find("drop") == std::string::npos);
  CHECK(down.find("keep") != std::string::npos);
  CHECK(down.find("+REWRITTEN\r\n") != std::string::npos);
  // UNSUBSCRIBE without arguments: one reply per channel subscribed.
  s.from_client("*1\r\n$11\r\nUNSUBSCRIBE\r\n", up);
  s.from_upstream("*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n", down);
  CHECK(s.pending() == 1);
  s.from_upstream("*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:0\r\n", down);
  CHECK(s.pending() == 0);
  // No longer subscribed: a "message"-shaped array is an ordinary reply.
  s.from_client("*2\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n", up);
  s.from_upstream("*3\r\n$7\r\nmessage\r\n$1\r\nx\r\n$1\r\ny\r\n", down);
  CHECK(pushes == 2);
  CHECK(s.pending() == 0);
}

TEST_CASE("Session: a rewrite into two commands is answered once, also inside MULTI/EXEC", "[fault]") {
  fault::Hooks h;
  h.request = [](const Argv& a) -> std::optional<fault::Rewrite> {
    if (a[0] != "GET") return std::nullopt;
    return fault::Rewrite{{{"TYPE", a[1]}, a}, std::nullopt, [](const std::vector<Reply>& r) {
                            return Reply::string(r[0].str() + ":" + (r[1].is_nil() ? "nil" : r[1].str()));
                          }};
  };
  fault::Session s(h);
  std::string up, down;
  s.from_client("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", up);
  CHECK(up == "*2\r\n$4\r\nTYPE\r\n$1\r\nk\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
  s.from_upstream("+string\r\n$1\r\nv\r\n", down);
  CHECK(down == "$8\r\nstring:v\r\n");
  down.clear();
  s.from_client("*1\r\n$5\r\nMULTI\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n*1\r\n$4\r\nEXEC\r\n", up);
  s.from_upstream("+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+none\r\n$-1\r\n:1\r\n", down);
  CHECK(down == "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n$8\r\nnone:nil\r\n:1\r\n");
  CHECK(s.pending() == 0);
}

TEST_CASE("Session: HELLO 3 and bytes that are not RESP switch to pass-through", "[fault]") {
  fault::Session s;
  std::string up, down;
  s.from_client("*1\r\n$4\r\nPING\r\n*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n", up);
  s.from_upstream("+PONG\r\n%1\r\n+server\r\n+valkey\r\n", down);
  CHECK(down == "+PONG\r\n%1\r\n+server\r\n+valkey\r\n");
  CHECK_FALSE(s.passthrough().empty());
  fault::Session t;
  std::string up2;
  t.from_client("PING\r\n", up2);  // an inline command
  CHECK(up2 == "PING\r\n");
  CHECK_FALSE(t.passthrough().empty());
}

TEST_CASE_METHOD(ProxyFixture, "Proxy without a fault: the twin's pipeline, values and MULTI pass unchanged", "[fault]") {
  auto c = via();
  const std::string binary("a\r\nb\0c$*-1\r\n", 13);
  const std::string big(3 << 20, 'x');
  auto r = c.pipeline({{"PUBLISH", "__expirykit_marker__:1", "b1"},
                       {"TIME"},
                       {"HSET", "h", "f", binary, "g", big},
                       {"TIME"},
                       {"PUBLISH", "__expirykit_marker__:1", "e1"}});
  REQUIRE(r.size() == 5);
  CHECK(r[0] == Reply::integer(0));
  CHECK(r[2] == Reply::integer(2));
  CHECK(server::time_ms(r[1]) <= server::time_ms(r[3]));
  CHECK(c("HGET", "h", "f") == Reply::string(binary));
  CHECK(c("HGET", "h", "g") == Reply::string(big));
  CHECK(c("HGETALL", "nope") == Reply::array({}));
  // MULTI/EXEC, and EXEC aborted by WATCH (a null array).
  CHECK(c.pipeline({{"MULTI"}, {"HSET", "h", "n", "1"}, {"HINCRBY", "h", "n", "2"}, {"EXEC"}}) ==
        std::vector<Reply>{Reply::ok(), Reply::status("QUEUED"), Reply::status("QUEUED"), Reply::array({Reply::integer(1), Reply::integer(3)})});
  REQUIRE(c("WATCH", "h") == Reply::ok());
  REQUIRE(direct()("HSET", "h", "n", "9") == Reply::integer(0));
  CHECK(c.pipeline({{"MULTI"}, {"HGET", "h", "n"}, {"EXEC"}}).back() == Reply::nil());
  // The proxy's connection is its own upstream client: CLIENT ID differs from the direct one.
  CHECK(c("CLIENT", "ID").as_integer() != direct()("CLIENT", "ID").as_integer());
  CHECK(c("HGET", "h", "n") == Reply::string("9"));
  CHECK(proxy().stats().errors == 0);
}

TEST_CASE_METHOD(ProxyFixture, "Proxy with a reply delay: every round trip waits at least the delay, replies unchanged and in order",
                 "[fault]") {
  // A lower bound only: the delay holds however loaded the machine (no upper bound is asserted).
  using clock = std::chrono::steady_clock;
  constexpr auto delay = std::chrono::milliseconds(150);
  fault::Proxy::Options o;
  o.upstream_host = target().host();
  o.upstream_port = target().port();
  o.reply_delay = delay;
  fault::Proxy slow(o);
  resp::Client c("127.0.0.1", slow.port());
  auto t0 = clock::now();
  CHECK(c("PING") == Reply::status("PONG"));
  CHECK(clock::now() - t0 >= delay);
  t0 = clock::now();
  const auto r = c.pipeline({{"DEL", "d"}, {"HSET", "d", "a", "1", "b", "2"}, {"HGET", "d", "b"}, {"HLEN", "d"}});
  CHECK(clock::now() - t0 >= delay);
  CHECK(r == std::vector<Reply>{Reply::integer(0), Reply::integer(2), Reply::string("2"), Reply::integer(2)});
  // Two round trips in a row: each waits.
  t0 = clock::now();
  (void)c("PING");
  (void)c("PING");
  CHECK(clock::now() - t0 >= 2 * delay);
  CHECK(slow.stats().errors == 0);
  o.reply_delay = std::chrono::milliseconds(-1);
  CHECK_THROWS_AS(fault::Proxy(o), std::invalid_argument);
}

TEST_CASE_METHOD(ProxyFixture, "Proxy without a fault: keyspace notifications and tracking invalidations arrive", "[fault]") {
  require_field_ttl();
  auto c = via();
  observe::KeyspaceEvents ev(c, {"KEA", 0, std::chrono::milliseconds(5000)});
  auto r = c.pipeline({ev.marker("1"), {"HSET", "h", "a", "1"}, {"HPEXPIRE", "h", "100000", "FIELDS", "1", "a"}, ev.marker("2")});
  CHECK(r[2] == Reply::ints({1}));
  ev.read_until("1");
  const auto seen = ev.read_until("2");
  CHECK(names(seen.keyevent) == "hset@h, hexpire@h");
  CHECK(names(seen.keyspace) == "hset@h, hexpire@h");

  auto other = via();
  observe::Tracking trk(c);
  CHECK(c("HGET", "h", "a") == Reply::string("1"));  // h is now tracked
  other.pipeline({{"HSET", "h", "a", "2"}, trk.marker("t1")});
  CHECK(trk.read_until("t1") == model::Invalidations{std::string("h")});
}

TEST_CASE_METHOD(ProxyFixture, "Faults rewrite replies: httl-plus-1s, hexpire-past-replies-1, wrongtype-replies-nil", "[fault]") {
  require_field_ttl();
  SECTION("httl-plus-1s") {
    auto c = via("httl-plus-1s");
    REQUIRE(c("HSET", "h", "a", "1", "b", "2") == Reply::integer(2));
    REQUIRE(c("HEXPIRE", "h", 1000, "FIELDS", 1, "a") == Reply::ints({1}));
    CHECK(direct()("HTTL", "h", "FIELDS", 2, "a", "b") == Reply::ints({1000, -1}));
    CHECK(c("HTTL", "h", "FIELDS", 2, "a", "b") == Reply::ints({1001, -1}));
    CHECK_THAT(c("HPTTL", "h", "FIELDS", 1, "a"), EachIntegerIn(990000, 1000000));  // other commands untouched
  }
  SECTION("hexpire-past-replies-1, also inside MULTI/EXEC") {
    auto c = via("hexpire-past-replies-1");
    REQUIRE(c("HSET", "h", "a", "1", "b", "2", "c", "3") == Reply::integer(3));
    CHECK(c("HPEXPIRE", "h", 0, "FIELDS", 2, "a", "zz") == Reply::ints({1, -2}));
    CHECK(direct()("HEXISTS", "h", "a") == Reply::integer(0));  // deleted all the same
    auto r = c.pipeline({{"MULTI"}, {"HEXPIRE", "h", "0", "FIELDS", "1", "b"}, {"HGET", "h", "c"}, {"EXEC"}});
    CHECK(r.back() == Reply::array({Reply::ints({1}), Reply::string("3")}));
  }
  SECTION("wrongtype-replies-nil") {
    auto c = via("wrongtype-replies-nil");
    REQUIRE(c("SET", "s", "v") == Reply::ok());
    CHECK(c("HTTL", "s", "FIELDS", 1, "a") == Reply::nil());
    CHECK_THAT(c("HGET", "s", "a"), catch2::IsErrorStartingWith("WRONGTYPE"));  // not a field-TTL command
  }
}

TEST_CASE_METHOD(ProxyFixture, "Faults rewrite requests: deadlines, units, flags and deletions really change on the server", "[fault]") {
  require_field_ttl();
  auto& d = direct();
  REQUIRE(d("HSET", "h", "a", "1", "b", "2") == Reply::integer(2));
  SECTION("hexpire-deadline-1s-late") {
    auto c = via("hexpire-deadline-1s-late");
    CHECK(c("HPEXPIRE", "h", 50000, "FIELDS", 1, "a") == Reply::ints({1}));
    CHECK_THAT(d("HPTTL", "h", "FIELDS", 1, "a"), EachIntegerIn(50001, 51000));
  }
  SECTION("hsetex-ex-as-ms") {
    require(identity().caps.hsetex, "HSETEX");
    auto c = via("hsetex-ex-as-ms");
    CHECK(c("HSETEX", "h", "EX", 100000, "FIELDS", 1, "a", "x") == Reply::integer(1));
    CHECK_THAT(d("HPTTL", "h", "FIELDS", 1, "a"), EachIntegerIn(1, 100000));
  }
  SECTION("hexpire-nx-xx-ignored") {
    auto c = via("hexpire-nx-xx-ignored");
    REQUIRE(d("HEXPIRE", "h", 100, "FIELDS", 1, "a") == Reply::ints({1}));
    CHECK(c("HEXPIRE", "h", 500, "NX", "FIELDS", 1, "a") == Reply::ints({1}));  // NX would answer 0
    CHECK_THAT(d("HTTL", "h", "FIELDS", 1, "a"), EachIntegerIn(499, 500));
  }
  SECTION("past-deadline-keeps-field") {
    auto c = via("past-deadline-keeps-field");
    REQUIRE(d("HEXPIRE", "h", 100, "FIELDS", 1, "b") == Reply::ints({1}));
    CHECK(c("HPEXPIRE", "h", 0, "FIELDS", 3, "a", "b", "zz") == Reply::ints({2, 2, -2}));
    CHECK(c("HPEXPIRE", "h", 0, "NX", "FIELDS", 2, "a", "b") == Reply::ints({2, 0}));
    CHECK(c("HEXPIREAT", "h", 1, "GT", "FIELDS", 2, "a", "b") == Reply::ints({0, 0}));
    CHECK(d("HMGET", "h", "a", "b") == Reply::strings({"1", "2"}));
    CHECK_THAT(d("HTTL", "h", "FIELDS", 1, "b"), EachIntegerIn(99, 100));
  }
  SECTION("hgetdel-keeps-fields") {
    require(identity().caps.hgetdel, "HGETDEL");
    auto c = via("hgetdel-keeps-fields");
    CHECK(c("HGETDEL", "h", "FIELDS", 2, "a", "zz") == Reply::array({Reply::string("1"), Reply::nil()}));
    CHECK(d("HEXISTS", "h", "a") == Reply::integer(1));
  }
  SECTION("active-expiry-never-runs") {
    require_debug("DEBUG SET-ACTIVE-EXPIRE");
    auto c = via("active-expiry-never-runs");
    REQUIRE(c("DEBUG", "SET-ACTIVE-EXPIRE", "1") == Reply::ok());
    REQUIRE(d("HPEXPIRE", "h", 20, "FIELDS", 1, "a") == Reply::ints({1}));
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    CHECK(d("HLEN", "h") == Reply::integer(2));  // stored until read or reclaimed
    REQUIRE(d("DEBUG", "SET-ACTIVE-EXPIRE", "1") == Reply::ok());
  }
}

TEST_CASE_METHOD(ProxyFixture, "Faults rewrite pushes and INFO: events, tracking, counters, encodings", "[fault]") {
  require_field_ttl();
  auto& d = direct();
  SECTION("event-hexpire-missing") {
    auto c = via("event-hexpire-missing");
    observe::KeyspaceEvents ev(c);
    c.pipeline({ev.marker("1"), {"HSET", "h", "a", "1"}, {"HEXPIRE", "h", "100", "FIELDS", "1", "a"}, ev.marker("2")});
    ev.read_until("1");
    CHECK(names(ev.read_until("2").keyevent) == "hset@h");
  }
  SECTION("tracking-ttl-change-not-invalidated") {
    auto c = via("tracking-ttl-change-not-invalidated");
    auto other = via("tracking-ttl-change-not-invalidated");
    observe::Tracking trk(c);
    REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
    REQUIRE(c("HGET", "h", "a") == Reply::string("1"));
    other.pipeline({{"HEXPIRE", "h", "100", "FIELDS", "1", "a"}, trk.marker("1")});
    CHECK(trk.read_until("1").empty());
    // Value writes still invalidate. (The server did send the dropped invalidation, so it no
    // longer tracks h for c: read it again first.)
    REQUIRE(c("HGET", "h", "a") == Reply::string("1"));
    other.pipeline({{"HSET", "h", "a", "2"}, trk.marker("2")});
    CHECK(trk.read_until("2") == model::Invalidations{std::string("h")});
  }
  SECTION("expired-fields-stuck") {
    auto c = via("expired-fields-stuck");
    const std::string stat = identity().flavor == server::Flavor::valkey ? "expired_fields" : "expired_subkeys";
    const auto before = server::Info::fetch(c, "stats").get_int(stat);
    REQUIRE(d("HSET", "h", "a", "1") == Reply::integer(1));
    REQUIRE(d("HPEXPIRE", "h", 0, "FIELDS", 1, "a") == Reply::ints({2}));
    CHECK(server::Info::fetch(d, "stats").get_int(stat) == before + 1);
    CHECK(server::Info::fetch(c, "stats").get_int(stat) == before);
  }
  SECTION("encoding-listpack-listpackex-swapped") {
    auto c = via("encoding-listpack-listpackex-swapped");
    REQUIRE(d("HSET", "h", "a", "1") == Reply::integer(1));
    REQUIRE(d("SET", "s", "v") == Reply::ok());
    CHECK(d("OBJECT", "ENCODING", "h") == Reply::string("listpack"));
    CHECK(c("OBJECT", "ENCODING", "h") == Reply::string("listpackex"));
    CHECK(c("OBJECT", "ENCODING", "s") == d("OBJECT", "ENCODING", "s"));
    CHECK(c.pipeline({{"MULTI"}, {"OBJECT", "ENCODING", "h"}, {"EXEC"}}) ==
          std::vector<Reply>{Reply::ok(), Reply::status("QUEUED"), Reply::array({Reply::string("listpackex")})});
  }
}

TEST_CASE_METHOD(ProxyFixture, "Proxy: either side closing, stop() and the destructor leave no thread and no hang", "[fault]") {
  const int threads_before = thread_count();
  {
    auto& p = proxy();
    auto a = via();
    auto b = via();
    CHECK(a("PING") == Reply::status("PONG"));
    CHECK(b("PING") == Reply::status("PONG"));
    // The server closes b's upstream connection: b sees the connection end.
    const auto id = b("CLIENT", "ID").as_integer();
    REQUIRE(direct()("CLIENT", "KILL", "ID", std::to_string(id)) == Reply::integer(1));
    CHECK_THROWS_AS(b("PING"), resp::ConnectionError);
    a.close();  // the client closes
    auto c = via();
    CHECK(c("PING") == Reply::status("PONG"));
    const auto t0 = std::chrono::steady_clock::now();
    p.stop();  // with c still open
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    CHECK_THROWS_AS(c("PING"), resp::ConnectionError);
    CHECK(p.stats().active == 0);
  }
  CHECK(thread_count() == threads_before);
  // Nothing listens upstream: the client's connection is closed at once.
  fault::Proxy dead({"127.0.0.1", 1, 0, {}});
  resp::Client c("127.0.0.1", dead.port(), {std::chrono::milliseconds(2000), std::chrono::milliseconds(5000)});
  CHECK_THROWS_AS(c("PING"), resp::ConnectionError);
  CHECK(dead.stats().errors == 1);
}

TEST_CASE("The catalogue: at least 22 faults, unique kebab-case ids, each with a description and hooks", "[fault]") {
  const auto all = fault::catalogue();
  CHECK(all.size() >= 22);
  std::set<std::string> ids;
  for (const auto& f : all) {
    INFO(f.id);
    CHECK(ids.insert(f.id).second);
    CHECK(f.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos);
    CHECK(!f.description.empty());
    CHECK(static_cast<bool>(f.hooks));
  }
  CHECK(fault::find("none"));
  CHECK_FALSE(fault::find("no-such-fault"));
}
