// The state read-back that decides whether a server holds the specification's state or a known
// defect's (state/known_divergence.hpp, detail::same_shape), without a server.
#include <catch2/catch_test_macros.hpp>

#include <expirykit/state/known_divergence.hpp>

using expirykit::state::detail::KeyShape;
using expirykit::state::detail::same_shape;

namespace {
KeyShape hash(long long hlen, std::vector<long long> times) {
  KeyShape k;
  k.type = "hash";
  k.hlen = hlen;
  k.times = std::move(times);
  return k;
}
}  // namespace

TEST_CASE("Known divergence: a deadline read back may differ by the step's TIME window, nothing else may",
          "[state][known-issues]") {
  const long long t = 1796301701129;
  // The case that failed (valkey-9.1, seed 6202463858543533302): MULTI; HGETEX h1 EX ... FIELDS
  // 1 b; COPY h1 s1 REPLACE; EXEC. The server set b's deadline at its own millisecond, 3 ms after
  // the one the model replayed the step at; the copy's HLEN alone tells the states apart.
  const KeyShape server = hash(1, {-2, t + 3, -2});
  CHECK(same_shape(server, hash(1, {-2, t, -2}), 3));
  CHECK_FALSE(same_shape(server, hash(1, {-2, t, -2}), 2));
  CHECK_FALSE(same_shape(server, hash(3, {-2, t, -2}), 3));  // the specification's copy: HLEN 3
  CHECK(same_shape(server, server, 0));
  // Presence is never loosened: missing (-2) and persistent (-1) are exact.
  CHECK_FALSE(same_shape(hash(1, {-1}), hash(1, {t}), INT64_MAX / 2));
  CHECK_FALSE(same_shape(hash(1, {-2}), hash(1, {t}), INT64_MAX / 2));
  CHECK_FALSE(same_shape(hash(1, {-2}), hash(1, {-1}), INT64_MAX / 2));
  KeyShape none;
  CHECK_FALSE(same_shape(none, hash(0, {}), 0));
  CHECK_FALSE(same_shape(hash(1, {t}), hash(1, {t, t}), 0));
}
