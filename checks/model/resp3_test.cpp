// model/resp3.hpp: the RESP3 form of a modelled reply, its inverse, and the difference the twin
// reports when a server's RESP3 reply does not have the form its command prescribes.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <expirykit/model/resp3.hpp>

using expirykit::resp::Argv;
using expirykit::resp::Reply;
using expirykit::resp::Resp3Type;
namespace model = expirykit::model;

TEST_CASE("resp3_form: HGETALL a map, HRANDFIELD WITHVALUES pairs, EXEC per command, the rest as on RESP2",
          "[model][resp3]") {
  const Reply flat = Reply::strings({"a", "1", "b", "2"});
  CHECK(same_resp3(model::resp3_form({"HGETALL", "h"}, flat), Reply::map(flat.elements())));
  CHECK(same_resp3(model::resp3_form({"hrandfield", "h", "-2", "withvalues"}, flat),
                   Reply::array({Reply::strings({"a", "1"}), Reply::strings({"b", "2"})})));
  CHECK(same_resp3(model::resp3_form({"HRANDFIELD", "h", "2"}, Reply::strings({"a", "b"})), Reply::strings({"a", "b"})));
  CHECK(same_resp3(model::resp3_form({"HMGET", "h", "a", "b"}, flat), flat));
  CHECK(same_resp3(model::resp3_form({"HGETALL", "h"}, Reply::error("WRONGTYPE x")), Reply::error("WRONGTYPE x")));
  // A script's reply stays as on RESP2 (its redis.pcall replies are RESP2: live, file comment).
  CHECK(same_resp3(model::resp3_form({"EVAL", "return redis.pcall('HGETALL', 'h')", "0"}, flat), flat));
  const std::vector<Argv> batch = {{"HGETALL", "h"}, {"HLEN", "h"}};
  const Reply exec = model::resp3_form({"EXEC"}, Reply::array({flat, Reply::integer(2)}), batch);
  CHECK(same_resp3(exec, Reply::array({Reply::map(flat.elements()), Reply::integer(2)})));
  // resp2_form inverts it.
  CHECK(same_resp3(model::resp2_form({"EXEC"}, exec, batch), Reply::array({flat, Reply::integer(2)})));
  CHECK(same_resp3(model::resp2_form({"HRANDFIELD", "h", "-2", "WITHVALUES"},
                                     Reply::array({Reply::strings({"a", "1"}), Reply::strings({"b", "2"})})),
                   flat));
}

TEST_CASE("resp3_difference names a reply in the wrong RESP3 form", "[model][resp3]") {
  const Reply flat = Reply::strings({"a", "1"});
  CHECK(model::resp3_difference({"HGETALL", "h"}, Reply::map(flat.elements())).empty());
  // HGETALL as a flat array, HRANDFIELD WITHVALUES flat, HLEN as a boolean: each one named.
  CHECK_THAT(model::resp3_difference({"HGETALL", "h"}, flat), Catch::Matchers::ContainsSubstring(R"(expected {"a" => "1"})"));
  CHECK_FALSE(model::resp3_difference({"HRANDFIELD", "h", "1", "WITHVALUES"}, flat).empty());
  CHECK_FALSE(model::resp3_difference({"HLEN", "h"}, Reply::integer(1).as_resp3(Resp3Type::boolean)).empty());
  CHECK_FALSE(model::resp3_difference({"EXEC"}, Reply::array({flat}), {{"HGETALL", "h"}}).empty());
}
