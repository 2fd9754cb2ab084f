// TEMPORARY probes (not to be delivered).
#include <catch2/catch_test_macros.hpp>

#include <expirykit/catch2/twin_fixture.hpp>
#include <expirykit/model/model.hpp>
#include <chrono>
#include <thread>

using namespace expirykit::catch2;
namespace model = expirykit::model;

namespace {
class P : public TwinFixture {
 protected:
  void go(const std::string& line) {
    Step s = twin().run(line);
    INFO(s.describe());
    CHECK(s.ok);
    UNSCOPED_INFO(s.describe());
  }
  void go(const expirykit::resp::Argv& a) {
    Step s = twin().run(a);
    INFO(s.describe());
    CHECK(s.ok);
    UNSCOPED_INFO(s.describe());
  }
  void settle() {
    check_same_state();
    check_counters();
    auto bg = twin().compare_background_events();
    std::string all;
    for (auto& d : bg) all += d + "\n";
    INFO(all);
    CHECK(bg.empty());
  }
  void all() {
    observe_events();
    observe_counters();
    twin().observe_tracking();
  }
};
}  // namespace

TEST_CASE_METHOD(P, "probe1 key ttl expired read-backs", "[.probe]") {
  all();
  go("SET k v");
  go("HSET h a 1");
  go("GET k");
  go("HGET h a");
  REQUIRE(twin().set_active_expire(false) == Reply::ok());
  go("PEXPIRE k 1");
  go("PEXPIRE h 1");
  twin().wait_until_past(twin().server_time() + 5);
  settle();
  go("DBSIZE");
  settle();
  twin().set_active_expire(true);
}

TEST_CASE_METHOD(P, "probe2 key ttl lazy on reads", "[.probe]") {
  all();
  REQUIRE(twin().set_active_expire(false) == Reply::ok());
  for (const char* k : {"a", "b", "c", "d", "e", "f", "g"}) {
    go(std::string("HSET ") + k + " x 1");
    go(std::string("HGET ") + k + " x");
    go(std::string("PEXPIRE ") + k + " 1");
  }
  twin().wait_until_past(twin().server_time() + 5);
  go("GET a");
  go("TTL b");
  go("OBJECT ENCODING c");
  go("EXISTS d");
  go("HSET e y 2");
  go("DEL f");
  go("HLEN g");
  settle();
  twin().set_active_expire(true);
}

TEST_CASE_METHOD(P, "probe3 tracking in multi and script", "[.probe]") {
  all();
  go("HSET h a 1");
  go("HGET h a");
  go("MULTI");
  go("HGET h a");
  go("HSET h a 2");
  go("HSET h a 3");
  go("HGET h a");
  go("EXEC");
  go("HSET h a 4");
  go("HGET h a");
  go(model::sequence_eval({{"HGET", "h", "a"}, {"HSET", "h", "a", "5"}, {"HGET", "h", "a"}}));
  go("HSET h a 6");
  go("HGET h a");
  go("MULTI");
  go("HSETEX h PX 0 FIELDS 1 z 2");
  go("HSETEX h PX 0 FIELDS 1 a 2");
  go("EXEC");
  settle();
}

TEST_CASE_METHOD(P, "probe4 active expiry of key ttl and fields", "[.probe]") {
  all();
  go("HSET h a 1 b 2");
  go("HSET k a 1");
  go("SET s v");
  go("HGET h a");
  go("HGET k a");
  go("GET s");
  REQUIRE(twin().set_active_expire(false) == Reply::ok());
  go("HPEXPIRE h 1 FIELDS 1 a");
  go("PEXPIRE k 1");
  go("PEXPIRE s 1");
  go("HGET h b");
  go("HGET k a");
  go("GET s");
  twin().wait_until_past(twin().server_time() + 5);
  twin().set_active_expire(true);
  auto poll = target().client();
  for (int i = 0; i < 200 && poll("DBSIZE") != Reply::integer(1); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int i = 0; i < 200 && poll("HLEN", "h") != Reply::integer(1); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  twin().reclaim_model();
  settle();
}

TEST_CASE_METHOD(P, "probe5 hsetex fxx/fnx keepttl expired and hgetex on expired", "[.probe]") {
  all();
  go("HSET h a 1 b 2 c 3 d 4");
  go("HGET h a");
  expire_unreclaimed("h", {"a", "b"});
  go("HGET h c");
  go("HSETEX h KEEPTTL FXX FIELDS 2 c 9 a 1");
  go("HGET h c");
  go("HSETEX h FNX FIELDS 1 b 5");
  go("HGET h c");
  go("HGETEX h PERSIST FIELDS 2 a b");
  go("HGET h c");
  go("HGETDEL h FIELDS 1 a");
  go("HPERSIST h FIELDS 1 a");
  go("HEXPIRE h 100 FIELDS 1 a");
  go("HDEL h a");
  go("HSETNX h a 3");
  settle();
  go("COPY h h2");
  go("RENAME h2 h3");
  go("HSETEX h PX 0 FIELDS 1 zz 1");
  go("HGET h c");
  go("HSETEX h PX 0 FIELDS 1 zz 1");
  settle();
  twin().set_active_expire(true);
}

TEST_CASE_METHOD(P, "probe6 long arguments and encodings", "[.probe]") {
  all();
  const std::string L(70, 'L');
  go("HSET h1 a 1");
  go("HEXPIRE h1 100 FIELDS 1 " + L);
  go("OBJECT ENCODING h1");
  go("HSET h2 a 1");
  go("HGETEX h2 EX 100 FIELDS 1 " + L);
  go("OBJECT ENCODING h2");
  go("HSET h3 a 1");
  go("HSETEX h3 FNX EX 100 FIELDS 1 a " + L);
  go("OBJECT ENCODING h3");
  go("HSET h4 a 1");
  go("HSETEX h4 FXX FIELDS 1 " + L + " v");
  go("OBJECT ENCODING h4");
  go("HSET h5 a 1");
  go("HSETNX h5 a " + L);
  go("OBJECT ENCODING h5");
  go("HSET h6 a 1");
  go("HSETEX h6 PX 0 FIELDS 1 " + L + " v");
  go("OBJECT ENCODING h6");
  go("HSET h7 a 1");
  go("HSETEX h7 KEEPTTL FIELDS 1 b " + L);
  go("OBJECT ENCODING h7");
  go("HSET h8 a 1");
  go("HGETDEL h8 FIELDS 1 " + L);
  go("HPERSIST h8 FIELDS 1 " + L);
  go("HGETEX h8 PERSIST FIELDS 1 " + L);
  go("OBJECT ENCODING h8");
  go("HSET h9 a 1 b 2");
  go("HEXPIRE h9 0 FIELDS 1 " + L);
  go("HEXPIRE h9 0 FIELDS 1 b");
  go("OBJECT ENCODING h9");
  go("HSETEX h10 PX 0 FIELDS 1 a " + L);
  go("HSET h11 a 1");
  go("HSETEX h11 XX EX 100 FIELDS 1 b " + L);
  go("OBJECT ENCODING h11");
  settle();
}

TEST_CASE_METHOD(P, "probe7 HRANDFIELD on big hashes with expired fields", "[.probe]") {
  all();
  for (int n : {20, 200}) {
    const std::string k = "big" + std::to_string(n);
    expirykit::resp::Argv hs{"HSET", k};
    std::vector<std::string> exp;
    for (int i = 0; i < n; ++i) {
      hs.push_back("f" + std::to_string(i));
      hs.push_back("v" + std::to_string(i));
      if (i % 2) exp.push_back("f" + std::to_string(i));
    }
    go(hs);
    go("HEXPIRE " + k + " 1000 FIELDS 1 f0");
    expire_unreclaimed(k, exp);
  }
  for (int r = 0; r < 20; ++r)
    for (const char* k : {"big20", "big200"})
      for (const char* tail : {"", " -5", " 5", " -50", " 50", " 150", " -150 WITHVALUES", " 150 WITHVALUES",
                               " 3 WITHVALUES", " -3 WITHVALUES"})
        go(std::string("HRANDFIELD ") + k + tail);
  go("HSCAN big200 0");
  go("HSCAN big200 0 COUNT 1000");
  go("HSCAN big20 0 NOVALUES");
  expirykit::resp::Argv all2{"HSET", "gone"};
  go("HSET g2 a 1 b 2");
  go("HSET g3 a 1 b 2");
  expire_unreclaimed("g2", {"a", "b"});
  expire_unreclaimed("g3", {"a", "b"});
  go("HRANDFIELD g2 -3");
  go("HRANDFIELD g3 -3 WITHVALUES");
  go("HRANDFIELD g3 3");
  settle();
  twin().set_active_expire(true);
}
