// expirykit/memory/guard.hpp: "small hashes stay compact", with the servers' known gaps.
//
// A small hash (under hash-max-listpack-entries / -value) should stay in a compact encoding
// (listpack; Redis's listpackex when a field has a TTL). What a server does instead is judged
// here from an encoding census (Measurement::encodings), so the same rule serves the suite,
// the gate and a user's own test:
//   - compact everywhere        -> Guard::compact (pass). If the server is in a known-gap range
//                                  the message says the gap is closed and the memory baseline
//                                  must be rewritten (the layout got much cheaper).
//   - not compact, known gap    -> Guard::known_gap (report, do not fail), naming the issue.
//   - not compact, no known gap -> Guard::not_compact (fail).
//
// Known gaps (data, not code; add a row when a server is found wanting):
//   Valkey >= 9.0: any field TTL turns a listpack hash into a hashtable (no listpackex), and it
//   stays one after the TTLs are gone. Valkey issue #2618, closed by PR #3212 (listpack encoding
//   for hash field expiration) in unstable after 9.1; still present in 9.1.2 (checked live:
//   OBJECT ENCODING of `HSETEX k EX 900 FIELDS 1 f v` is "hashtable"). The release with the fix
//   is not confirmed, so the range is open-ended: the first release that keeps such hashes
//   compact turns this into a plain pass.
// Redis 7.4+/8.0 keep such hashes compact as "listpackex" (redis-hfe.md §8).
// Sources: shared/reference/valkey-hfe.md §13 and §18, redis-hfe.md §8,
// https://github.com/valkey-io/valkey/issues/2618
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/memory/baseline.hpp>
#include <expirykit/server/identity.hpp>

namespace expirykit::memory {

/// A known, reported-not-failed lack of compactness on a range of server versions.
struct KnownGap {
  server::Flavor flavor = server::Flavor::valkey;
  server::Version from;                 ///< first affected version
  std::optional<server::Version> until;  ///< first fixed version; nullopt: not known yet
  bool field_ttl_only = true;           ///< only hashes with field TTLs are affected
  std::string issue;                    ///< "valkey-io/valkey#2618"
  std::string url;
  std::string what;                     ///< one sentence
  bool covers(const server::Identity& id) const {
    return id.flavor == flavor && id.version >= from && (!until || id.version < *until);
  }
};

inline const std::vector<KnownGap>& known_gaps() {
  static const std::vector<KnownGap> gaps = {
      {server::Flavor::valkey, {9, 0, 0}, std::nullopt, true, "valkey-io/valkey#2618",
       "https://github.com/valkey-io/valkey/issues/2618",
       "a field TTL converts a small listpack hash to a hashtable (no compact encoding with TTLs); "
       "fixed in unstable after 9.1 by PR #3212"},
  };
  return gaps;
}

/// Encodings that count as compact for a hash.
inline bool compact_encoding(const std::string& e) {
  return e == "listpack" || e == "listpackex" || e == "ziplist";
}

struct Guard {
  enum class Status { compact, known_gap, not_compact, no_sample };
  Status status = Status::no_sample;
  std::string message;
  /// True unless not_compact (a known gap is reported, not failed).
  bool ok() const { return status != Status::not_compact; }
};

/// Judges the census of a small-hash layout on server `id`. `has_field_ttl`: the hashes carry
/// field TTLs. Throws nothing.
inline Guard judge_compact(const server::Identity& id, const std::string& layout,
                           const std::map<std::string, std::size_t>& encodings, bool has_field_ttl) {
  Guard g;
  std::size_t total = 0, compact = 0;
  std::string seen;
  for (const auto& [e, n] : encodings) {
    total += n;
    if (compact_encoding(e)) compact += n;
    seen += (seen.empty() ? "" : ", ") + e + " x" + std::to_string(n);
  }
  const KnownGap* gap = nullptr;
  for (const auto& k : known_gaps())
    if (k.covers(id) && (has_field_ttl || !k.field_ttl_only)) gap = &k;
  const std::string where = layout + " on " + id.to_string() + " (encodings " + (seen.empty() ? "none" : seen) + ")";
  if (total == 0) {
    g.status = Guard::Status::no_sample;
    g.message = "no keys sampled for " + where;
  } else if (compact == total) {
    g.status = Guard::Status::compact;
    g.message = "small hashes stay compact: " + where;
    if (gap)
      g.message += ". The known gap " + gap->issue + " (" + gap->what + ") is CLOSED on " + id.to_string() +
                   ": this layout is now much cheaper; rewrite the memory baseline: " + update_hint(id.line()) +
                   ", and narrow the gap's version range in memory/guard.hpp";
  } else if (gap) {
    g.status = Guard::Status::known_gap;
    g.message = "KNOWN GAP " + gap->issue + ": small hashes are not compact: " + where + ": " + gap->what + " (" +
                gap->url + "). Reported, not failed; this check passes the day a release keeps them compact.";
  } else {
    g.status = Guard::Status::not_compact;
    g.message = "small hashes are NOT compact: " + where + ", expected listpack" +
                (has_field_ttl ? std::string(" or listpackex") : std::string()) +
                " under hash-max-listpack-entries/-value; a server change or config (CONFIG GET hash-max-*) made them "
                "bigger. If the server is known to do this, add a KnownGap row in memory/guard.hpp.";
  }
  return g;
}

}  // namespace expirykit::memory
