// expirykit/memory/guard.hpp: "small hashes stay compact", with the servers' known issues.
//
// A small hash (under hash-max-listpack-entries / -value) should stay in a compact encoding
// (listpack; Redis's listpackex when a field has a TTL). What a server does instead is judged
// here from an encoding census (Measurement::encodings), so the same rule serves the suite,
// the gate and a user's own test:
//   - compact everywhere          -> Guard::compact (pass)
//   - not compact, known issue    -> Guard::known_issue: "KNOWN ISSUE ..." (reported, not failed)
//   - compact, server in a known issue's range
//                                 -> Guard::fixed: "FIXED ...": record the fix in
//                                    known_issues/table.hpp and rewrite the memory baseline (the
//                                    layout got much cheaper)
//   - not compact, no known issue -> Guard::not_compact (fail)
// The known issues are rows of the kit's one table, known_issues/table.hpp, and the verdicts
// are known_issues::judge()'s, as everywhere else; compactness_issues() only says which rows are about
// compactness. Today: valkey-ttl-hash-not-compact (valkey-io/valkey#2618, Valkey >= 9.0: any
// field TTL turns a listpack hash into a hashtable, and it stays one after the TTLs are gone;
// closed by valkey-io/valkey#3212 after 9.1, still present in 9.1.2, live: OBJECT ENCODING of
// `HSETEX k EX 900 FIELDS 1 f v` is "hashtable"). Redis 7.4+/8.0 keep such hashes compact as
// "listpackex" (live 8.0.6).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/memory/baseline.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/known_issues/table.hpp>

namespace expirykit::memory {

/// A row of known_issues/table.hpp about small hashes that are not compact.
struct CompactnessIssue {
  std::string id;              ///< the row's id
  bool field_ttl_only = true;  ///< only hashes with field TTLs are affected
};

/// The rows of known_issues/table.hpp the guard consults (add one when a server is found
/// wanting: the row there, its id here).
inline const std::vector<CompactnessIssue>& compactness_issues() {
  static const std::vector<CompactnessIssue> v = {{"valkey-ttl-hash-not-compact", true}};
  return v;
}

/// The compactness row covering server `id` for hashes with (or without) field TTLs, or nullptr.
inline const known_issues::KnownIssue* compactness_issue_for(const server::Identity& id, bool has_field_ttl) {
  for (const auto& c : compactness_issues())
    if (const auto* k = known_issues::find(c.id); k && k->covers(id) && (has_field_ttl || !c.field_ttl_only))
      return k;
  return nullptr;
}

/// Encodings that count as compact for a hash.
inline bool compact_encoding(const std::string& e) {
  return e == "listpack" || e == "listpackex" || e == "ziplist";
}

struct Guard {
  enum class Status { compact, known_issue, fixed, not_compact, no_sample };
  Status status = Status::no_sample;
  std::string message;
  std::string issue;  ///< the known_issues/table.hpp id behind known_issue / fixed
  /// True unless not_compact (a known issue or a fix is reported, not failed).
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
  const known_issues::KnownIssue* issue = compactness_issue_for(id, has_field_ttl);
  const std::string where = layout + " on " + id.to_string() + " (encodings " + (seen.empty() ? "none" : seen) + ")";
  if (total == 0) {
    g.status = Guard::Status::no_sample;
    g.message = "no keys sampled for " + where;
  } else if (compact == total && !issue) {
    g.status = Guard::Status::compact;
    g.message = "small hashes stay compact: " + where;
  } else if (issue) {
    const bool defect = compact != total;
    const auto j = known_issues::judge(*issue, id, defect, "small hashes are not compact: " + where,
                                 "this layout is now much cheaper: rewrite the memory baseline: " + update_hint(id.line()));
    g.status = defect ? Guard::Status::known_issue : Guard::Status::fixed;
    g.issue = issue->id;
    g.message = j.message + (defect ? std::string() : " (small hashes stay compact: " + where + ")");
  } else {
    g.status = Guard::Status::not_compact;
    g.message = "small hashes are NOT compact: " + where + ", expected listpack" +
                (has_field_ttl ? std::string(" or listpackex") : std::string()) +
                " under hash-max-listpack-entries/-value; a server change or config (CONFIG GET hash-max-*) made them "
                "bigger. If a released server is known to do this, add a row to known_issues/table.hpp and its id "
                "to memory::compactness_issues() (memory/guard.hpp).";
  }
  return g;
}

}  // namespace expirykit::memory
