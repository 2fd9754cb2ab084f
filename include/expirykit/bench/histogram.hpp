// expirykit/bench/histogram.hpp: a small log-linear histogram of non-negative integers
// (latencies in nanoseconds), in the manner of HdrHistogram, which Debian 12 does not package.
//
//   bench::Histogram h;
//   h.record(183'000);                 // one request took 183 us (the unit is the caller's: ns here)
//   h.percentile(99.9);                // a value within 1/256 of the exact nearest-rank p99.9
//
// Buckets: values below 256 are counted exactly; above, every power of two [2^m, 2^(m+1)) is
// split into 128 equal sub-buckets, so a bucket is at most 1/128 of its lower bound wide and the
// reported value (the bucket's midpoint) is within 1/256 (0.4 %) of any value in it. min, max,
// count and sum are kept exactly. 7,424 counters (58 KiB) cover all of uint64_t; recording is a
// count-leading-zeros and an increment, so one histogram per load thread, merged at the end.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace expirykit::bench {

class Histogram {
 public:
  /// log2 of the sub-buckets per power of two: 7 -> 128 sub-buckets, relative width <= 1/128.
  static constexpr unsigned sub_bits = 7;
  static constexpr std::uint64_t sub_count = std::uint64_t{1} << sub_bits;
  /// Number of counters: exact values [0, 2*sub_count), then 56 octaves of sub_count each.
  static constexpr std::size_t bucket_count = (65 - sub_bits) * sub_count;

  Histogram() : counts_(bucket_count, 0) {}

  /// Counts `n` occurrences of `value`.
  void record(std::uint64_t value, std::uint64_t n = 1) {
    counts_[index_of(value)] += n;
    count_ += n;
    sum_ += static_cast<long double>(value) * static_cast<long double>(n);
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  /// Adds all counts of `other` (e.g. another thread's histogram).
  void merge(const Histogram& other) {
    for (std::size_t i = 0; i < bucket_count; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    sum_ += other.sum_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  void clear() {
    std::fill(counts_.begin(), counts_.end(), 0);
    count_ = 0;
    sum_ = 0;
    min_ = std::numeric_limits<std::uint64_t>::max();
    max_ = 0;
  }

  std::uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// Smallest recorded value (exact); 0 when empty.
  std::uint64_t min() const { return count_ ? min_ : 0; }
  /// Largest recorded value (exact); 0 when empty.
  std::uint64_t max() const { return max_; }
  /// Arithmetic mean (exact up to long double rounding); 0 when empty.
  double mean() const { return count_ ? static_cast<double>(sum_ / static_cast<long double>(count_)) : 0.0; }

  /// The nearest-rank q-th percentile (q in [0, 100]): the value of the ceil(q/100 * count)-th
  /// smallest sample, approximated by its bucket's midpoint (within 1/256 of it, clamped to
  /// [min, max]). percentile(100) is max() exactly, percentile(0) is min(). 0 when empty.
  std::uint64_t percentile(double q) const {
    if (count_ == 0) return 0;
    if (q <= 0) return min();
    if (q >= 100) return max_;
    auto rank = static_cast<std::uint64_t>(std::ceil(q / 100.0 * static_cast<double>(count_)));
    rank = std::clamp<std::uint64_t>(rank, 1, count_);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
      seen += counts_[i];
      if (seen >= rank) {
        std::uint64_t mid = lower_bound_of(i) + (width_of(i) - 1) / 2;
        return std::clamp(mid, min(), max_);
      }
    }
    return max_;
  }

  /// The counter a value falls in (public for tests).
  static std::size_t index_of(std::uint64_t v) {
    if (v < 2 * sub_count) return static_cast<std::size_t>(v);
    unsigned msb = 63u - static_cast<unsigned>(std::countl_zero(v));
    unsigned shift = msb - sub_bits;  // >= 1
    return static_cast<std::size_t>(shift * sub_count + (v >> shift));
  }
  /// Smallest value counted in counter `i`.
  static std::uint64_t lower_bound_of(std::size_t i) {
    if (i < 2 * sub_count) return i;
    std::uint64_t shift = i / sub_count - 1;
    return (i % sub_count + sub_count) << shift;
  }
  /// How many distinct values counter `i` holds (1 for the exact ones).
  static std::uint64_t width_of(std::size_t i) {
    if (i < 2 * sub_count) return 1;
    return std::uint64_t{1} << (i / sub_count - 1);
  }

  /// Non-empty counters as (lower bound, count) pairs, ascending, e.g. for a latency plot.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> buckets() const {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (std::size_t i = 0; i < bucket_count; ++i)
      if (counts_[i]) out.emplace_back(lower_bound_of(i), counts_[i]);
    return out;
  }

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  long double sum_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ = 0;
};

}  // namespace expirykit::bench
