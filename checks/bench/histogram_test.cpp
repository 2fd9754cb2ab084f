// bench::Histogram: percentiles against exact nearest-rank percentiles of the sorted samples.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <expirykit/bench/histogram.hpp>

using expirykit::bench::Histogram;

namespace {
/// Nearest rank: the ceil(q/100 * n)-th smallest sample.
std::uint64_t exact(const std::vector<std::uint64_t>& sorted, double q) {
  if (q >= 100) return sorted.back();
  auto rank = static_cast<std::size_t>(std::ceil(q / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}
void check_all(std::vector<std::uint64_t> v) {
  Histogram h;
  for (auto x : v) h.record(x);
  std::sort(v.begin(), v.end());
  REQUIRE(h.count() == v.size());
  CHECK(h.min() == v.front());
  CHECK(h.max() == v.back());
  for (double q : {0.1, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    auto e = exact(v, q), got = h.percentile(q);
    double err = std::abs(static_cast<double>(got) - static_cast<double>(e));
    INFO("q=" << q << " exact=" << e << " histogram=" << got);
    // Within half a bucket: 1/256 of the value (values < 256 are exact).
    CHECK(err <= static_cast<double>(e) / 256.0 + 0.5);
  }
}
}  // namespace

TEST_CASE("Histogram percentiles are within 1/256 of exact ones: log-normal latencies", "[bench][histogram]") {
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> d(std::log(200'000.0), 0.8);  // ~200 us in ns, long tail
  std::vector<std::uint64_t> v;
  for (int i = 0; i < 200'000; ++i) v.push_back(static_cast<std::uint64_t>(d(rng)));
  check_all(v);
}

TEST_CASE("Histogram percentiles: uniform over 1 ns .. 10 s, and few samples", "[bench][histogram]") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> d(1, 10'000'000'000ULL);
  std::vector<std::uint64_t> v;
  for (int i = 0; i < 50'000; ++i) v.push_back(d(rng));
  check_all(v);
  check_all({5});
  check_all({3, 1'000'000});
  check_all({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
}

TEST_CASE("Histogram counts small values exactly and covers all of uint64", "[bench][histogram]") {
  Histogram h;
  for (std::uint64_t x = 0; x < 256; ++x) h.record(x);
  CHECK(h.percentile(50) == 127);
  CHECK(h.percentile(100) == 255);
  CHECK(h.mean() == 127.5);
  h.record(~std::uint64_t{0});
  CHECK(h.max() == ~std::uint64_t{0});
  CHECK(Histogram::index_of(~std::uint64_t{0}) == Histogram::bucket_count - 1);
  for (std::uint64_t x : {256ULL, 257ULL, 1000ULL, 123456789ULL, 1ULL << 40, (1ULL << 63) + 12345}) {
    auto i = Histogram::index_of(x);
    INFO(x);
    CHECK(Histogram::lower_bound_of(i) <= x);
    CHECK(x < Histogram::lower_bound_of(i) + Histogram::width_of(i));
    CHECK(Histogram::width_of(i) * 128 <= Histogram::lower_bound_of(i));
  }
}

TEST_CASE("Merged histograms equal one histogram of all samples", "[bench][histogram]") {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> d(1e-5);
  Histogram a, b, all;
  for (int i = 0; i < 30'000; ++i) {
    auto x = static_cast<std::uint64_t>(d(rng));
    (i % 3 ? a : b).record(x);
    all.record(x);
  }
  a.merge(b);
  CHECK(a.count() == all.count());
  CHECK(a.buckets() == all.buckets());
  for (double q : {50.0, 99.0, 99.9}) CHECK(a.percentile(q) == all.percentile(q));
  Histogram empty;
  CHECK(empty.percentile(99) == 0);
  CHECK(empty.max() == 0);
}
