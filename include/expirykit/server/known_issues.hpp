// expirykit/server/known_issues.hpp: server defects the kit knows about, as one table.
//
// The model is the specification: what the documentation and the fixed behaviour say. When a
// released server does something else, that is a known server issue, recorded here with the
// upstream report (or "unreported" and a replay script), the affected versions, and one
// sentence; never a Dialect fact. A check that meets such behaviour asks the table
// (catch2/known_issue.hpp) and reports KNOWN ISSUE instead of failing, and the day a release in
// the recorded range no longer shows it, reports FIXED: narrow the range (`until`) here.
//
//   if (auto* k = server::find_known_issue("valkey-reload-replica-stale"); k && k->covers(id)) ...
//
// Add a row when a suite finds a divergence on a released server: an id the test names, the
// first affected version, `until` empty while no fixed release is known, the report, and a
// replay script of valkey-cli / redis-cli lines that shows it on a fresh server.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/server/identity.hpp>

namespace expirykit::server {

struct KnownIssue {
  std::string id;                 ///< short name the checks use, e.g. "valkey-reload-replica-stale"
  Flavor flavor = Flavor::valkey;
  Version from;                   ///< first affected version known
  std::optional<Version> until;   ///< first fixed release; nullopt: none known yet
  std::string report;             ///< "valkey-io/valkey#2618", or "unreported"
  std::string what;               ///< one sentence: what the server does instead of the specification
  std::string replay;             ///< valkey-cli / redis-cli lines reproducing it (newline-separated)

  bool covers(const Identity& id) const {
    return id.flavor == flavor && id.version >= from && (!until || id.version < *until);
  }
  /// "valkey-io/valkey#2618" or "unreported (replay: ...)" for messages.
  std::string reference() const { return report; }
};

inline const std::vector<KnownIssue>& known_issues() {
  static const std::vector<KnownIssue> table = {
  };
  return table;
}

/// The row with `id`, or nullptr.
inline const KnownIssue* find_known_issue(std::string_view id) {
  for (const auto& k : known_issues())
    if (k.id == id) return &k;
  return nullptr;
}

}  // namespace expirykit::server
