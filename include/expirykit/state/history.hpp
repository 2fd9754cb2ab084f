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

/// The model's side of step `s` on one line, as the scripts show it: "(unmodelled: <why>)" for
/// a command outside the model; "any reply drawn from [...]" for a random reply, alone or inside
/// an EXEC's or a script's array (Step::model_text: HRANDFIELD, HSCAN); else the model's reply
/// (oneline).
inline std::string model_line(const Step& s) {
  if (!s.unmodelled.empty()) return "(unmodelled: " + s.unmodelled + ")";
  return s.model_text([](const Reply& r) { return oneline(r); });
}

/// Step `s` as lines of a replayable script: the command (resp::cli_line), "#   on <node>" when
/// `node` is given, "#   server: ..." and "#   model:  ..." (model_line), the last followed by
/// "   <-- MISMATCH" when the step failed.
inline std::string script_entry(const Step& s, const std::string& node = {}) {
  std::string out = resp::cli_line(s.argv) + "\n";
  if (!node.empty()) out += "#   on " + node + "\n";
  out += "#   server: " + oneline(s.server) + "\n";
  if (s.server_resp3) out += "#   server (RESP3): " + s.server_resp3->oneline() + "\n";
  if (!s.resp3_diff.empty()) out += "#   " + s.resp3_diff + "\n";
  return out + "#   model:  " + model_line(s) + (s.ok ? "" : "   <-- MISMATCH") + "\n";
}

/// "HELLO 3\n" (or "HELLO 2\n") when step `s` ran on another protocol than `*protocol` (the
/// previous step's; a script starts on 2), which it then updates; "" otherwise. A replay with
/// valkey-cli / redis-cli then switches where the twin did (Twin::use_protocol).
inline std::string protocol_switch(const Step& s, int& protocol) {
  if (s.protocol == protocol) return {};
  protocol = s.protocol;
  return "HELLO " + std::to_string(protocol) + "\n";
}

/// `history` as a replayable script: script_entry() of each step, with a HELLO line where the
/// protocol changes (protocol_switch).
inline std::string script(const std::vector<Step>& history) {
  std::string out;
  int protocol = 2;
  for (const auto& s : history) out += protocol_switch(s, protocol) + script_entry(s);
  return out;
}

}  // namespace expirykit::state
