// RESP3 (resp/reply.hpp, resp/client.hpp): a Reply keeps a RESP3 type beside its RESP2 one;
// resp::Client::hello(3) moves a connection to RESP3 in a build with hiredis 1.x and refuses in
// one with hiredis 0.14. The live cases use DEBUG PROTOCOL, which answers with each RESP3 type
// (Valkey 9.1.2, Redis 8.0.6, Redis 8.6.3: the provisioned servers start with DEBUG enabled),
// and CLIENT TRACKING's invalidations, which RESP3 sends as pushes on the tracked connection.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <stdexcept>
#include <thread>

#include <expirykit/catch2/fixture.hpp>

using expirykit::catch2::ServerFixture;
using expirykit::resp::Reply;
using expirykit::resp::Resp3Type;

TEST_CASE("A RESP3 type rides on the RESP2 type of the same data", "[resp][resp3]") {
  const Reply m = Reply::map({Reply::string("a"), Reply::string("1")});
  CHECK(m.is_array());
  CHECK(m.resp3_type() == Resp3Type::map);
  CHECK(m == Reply::strings({"a", "1"}));               // operator==: the RESP2 view
  CHECK_FALSE(same_resp3(m, Reply::strings({"a", "1"})));  // same_resp3: the RESP3 type too
  CHECK(same_resp3(m.without_resp3(), Reply::strings({"a", "1"})));
  CHECK(m.oneline() == R"({"a" => "1"})");
  const Reply nested = Reply::array({Reply::map({}), Reply::integer(1).as_resp3(Resp3Type::boolean)});
  CHECK(nested.oneline() == "[{}, (true)]");
  CHECK(nested.without_resp3().oneline() == "[[], (integer) 1]");
  CHECK(Reply::string("3.5").as_resp3(Resp3Type::double_).oneline() == "(double) 3.5");
  CHECK(Reply::array({Reply::string("x")}).as_resp3(Resp3Type::set).oneline() == R"(~["x"])");
  // A RESP3 type that is not kept as this RESP2 type, and a map of an odd length, are refused.
  CHECK_THROWS_AS(Reply::integer(1).as_resp3(Resp3Type::map), std::invalid_argument);
  CHECK_THROWS_AS(Reply::string("1").as_resp3(Resp3Type::boolean), std::invalid_argument);
  CHECK_THROWS_AS(Reply::map({Reply::string("a")}), std::invalid_argument);
}

TEST_CASE_METHOD(ServerFixture, "hello(3): each RESP3 type arrives as its RESP2 data with its RESP3 type", "[resp][resp3]") {
  auto c = target().client();
  CHECK_THROWS_AS(c.hello(4), std::invalid_argument);
  if constexpr (!expirykit::resp::resp3_supported) {
    CHECK_THROWS_AS(c.hello(3), std::logic_error);
    CHECK(c.protocol() == 2);
    return;
  }
  const Reply h = c.hello(3);
  REQUIRE(c.protocol() == 3);
  CHECK(h.resp3_type() == Resp3Type::map);
  bool proto3 = false;  // HELLO's map names proto => 3
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) proto3 = proto3 || (h[i] == Reply::string("proto") && h[i + 1] == Reply::integer(3));
  CHECK(proto3);
  const Reply map = c("DEBUG", "PROTOCOL", "map");
  CHECK(map.resp3_type() == Resp3Type::map);
  CHECK(map.size() % 2 == 0);
  CHECK(c("DEBUG", "PROTOCOL", "set").resp3_type() == Resp3Type::set);
  const Reply d = c("DEBUG", "PROTOCOL", "double");
  CHECK(d.resp3_type() == Resp3Type::double_);
  CHECK(d == Reply::string("3.141"));
  const Reply t = c("DEBUG", "PROTOCOL", "true"), f = c("DEBUG", "PROTOCOL", "false");
  CHECK((t.resp3_type() == Resp3Type::boolean && t == Reply::integer(1)));
  CHECK((f.resp3_type() == Resp3Type::boolean && f == Reply::integer(0)));
  CHECK(c("DEBUG", "PROTOCOL", "bignum").resp3_type() == Resp3Type::big_number);
  const Reply v = c("DEBUG", "PROTOCOL", "verbatim");
  CHECK(v.resp3_type() == Resp3Type::verbatim);
  CHECK_THAT(v.str(), !Catch::Matchers::StartsWith("txt:"));  // the format is not part of the text
  CHECK(c("DEBUG", "PROTOCOL", "null").is_nil());
  // The accessors read the RESP2 view: INFO's verbatim string is a string.
  CHECK_THAT(c("INFO", "server").str(), Catch::Matchers::ContainsSubstring("# Server"));
  c.hello(2);
  CHECK(c.protocol() == 2);
  CHECK(c("DEBUG", "PROTOCOL", "map").resp3_type() == Resp3Type::plain);
}

TEST_CASE_METHOD(ServerFixture, "RESP3 pushes never take a reply's place: take_pushes() hands them out", "[resp][resp3]") {
  if constexpr (!expirykit::resp::resp3_supported) SKIP("RESP3 needs a build with hiredis 1.x");
  auto c = target().client();
  auto other = target().client();
  c.hello(3);
  REQUIRE(c("CLIENT", "TRACKING", "ON") == Reply::ok());
  CHECK(c("GET", "tracked") == Reply::nil());  // tracked from now on
  CHECK(other("SET", "tracked", "1") == Reply::ok());
  // The invalidation arrives on c's socket; the next command's reply is still PONG.
  Reply pong;
  std::vector<Reply> pushes;
  for (int i = 0; i < 100 && pushes.empty(); ++i) {
    pong = c("PING");
    REQUIRE(pong == Reply::status("PONG"));
    pushes = c.take_pushes();
    if (pushes.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(pushes.size() == 1);
  CHECK(pushes[0].resp3_type() == Resp3Type::push);
  CHECK(pushes[0] == Reply::array({Reply::string("invalidate"), Reply::strings({"tracked"})}));
  CHECK(c.take_pushes().empty());
  CHECK(c.dropped_pushes() == 0);
}
