// The reply matchers on hand-built replies: what matches, what does not, and the descriptions.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers.hpp>

#include <expirykit/catch2/matchers.hpp>

using namespace expirykit::catch2;
using expirykit::resp::Reply;

TEST_CASE("Reply matchers accept what they describe and nothing else", "[catch2]") {
  CHECK_THAT(Reply::error("WRONGTYPE Operation against a key"), IsErrorStartingWith("WRONGTYPE"));
  CHECK_THAT(Reply::string("WRONGTYPE"), !IsErrorStartingWith("WRONGTYPE"));
  CHECK_THAT(Reply::error("ERR x"), IsError() && !IsErrorStartingWith("WRONGTYPE"));
  CHECK_THAT(Reply::ints({1, 5, 10}), EachIntegerIn(1, 10));
  CHECK_THAT(Reply::ints({0, 5}), !EachIntegerIn(1, 10));
  CHECK_THAT(Reply::ints({}), !EachIntegerIn(1, 10));
  CHECK_THAT(Reply::array({Reply::string("1")}), !EachIntegerIn(0, 10));
  CHECK_THAT(Reply::integer(3), IsReply(Reply::integer(3)) || IsError());
  CHECK(EachIntegerIn(1, 10).describe() == "is an array of integers each in [1, 10]");
  CHECK(IsErrorStartingWith("ERR").describe() == "is an error starting with \"ERR\"");
}
