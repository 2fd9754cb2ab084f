// expirykit/state/history.hpp: what a state::Twin (state/twin.hpp) recorded, written for people:
// its steps as a script valkey-cli / redis-cli can replay (each command followed by comment lines
// with the server's and the model's replies), and per command name how often it ran modelled
// and unmodelled.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <expirykit/resp/client.hpp>
#include <expirykit/state/keyspace_diff.hpp>
#include <expirykit/state/step.hpp>

namespace expirykit::state {

/// How often one command (upper-case name) ran modelled and unmodelled (Twin::coverage()).
struct CommandCoverage {
  long modelled = 0, unmodelled = 0;
};

/// `coverage` as lines "  HSET 120" / "  OBJECT 3 (3 unmodelled: server only, keys re-read)".
inline std::string coverage_table(const std::map<std::string, CommandCoverage>& coverage) {
  std::ostringstream os;
  for (const auto& [name, c] : coverage) {
    os << "  " << name << " " << (c.modelled + c.unmodelled);
    if (c.unmodelled) os << " (" << c.unmodelled << " unmodelled: server only, keys re-read)";
    os << "\n";
  }
  return os.str();
}

/// `history` as a replayable script: each command on a line (resp::cli_line), then
/// "#   server: ..." and "#   model:  ..." ("<-- MISMATCH" after a failed step).
inline std::string script(const std::vector<Step>& history) {
  std::ostringstream os;
  for (const auto& s : history) {
    os << resp::cli_line(s.argv) << "\n#   server: " << oneline(s.server) << "\n#   model:  "
       << (s.unmodelled.empty() ? oneline(s.model) : "(unmodelled)") << (s.ok ? "" : "   <-- MISMATCH") << "\n";
  }
  return os.str();
}

}  // namespace expirykit::state
