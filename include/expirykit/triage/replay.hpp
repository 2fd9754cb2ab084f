// expirykit/triage/replay.hpp: a known issue's replay script (known_issues/table.hpp
// KnownIssue::replay) as steps a program can run.
//
//   for (const auto& st : triage::replay_steps(row.replay)) ...
//
// The scripts are valkey-cli / redis-cli lines, each optionally followed by "# what it answers".
// Comment lines carry the rest:
//   "# wait > 1 ms"                         -> a pause (10 ms: past any 1 ms TTL)
//   "# wait 1 s"                            -> a pause of that many seconds (plus 10 ms)
//   "# primary with one replica attached"   -> the script needs a replica (Steps::needs_replica)
//   "# on the replica ..." / "# on a primary with ..." / "# with ..." / "# a subscriber ..."
//                                          -> a part for another connection or setup: the steps
//                                             stop there (Steps::complete is false)
// Other comment lines are notes.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/resp/reply.hpp>

namespace expirykit::triage {

struct ReplayStep {
  resp::Argv argv;                     ///< the command; empty for a pause
  std::chrono::milliseconds pause{0};  ///< a pause before the next command
  std::string expect;                  ///< the comment after the command ("# 1"), without "# "
};

struct ReplaySteps {
  std::vector<ReplayStep> steps;
  bool needs_replica = false;  ///< "# primary with one replica attached"
  bool complete = true;        ///< false: a part for another connection follows (not in steps)
};

inline ReplaySteps replay_steps(std::string_view script) {
  ReplaySteps out;
  std::size_t pos = 0;
  while (pos <= script.size()) {
    const auto nl = script.find('\n', pos);
    std::string line(script.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? script.size() + 1 : nl + 1;
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    line = line.substr(first);
    if (line[0] == '#') {
      const std::string c = line.substr(line.find_first_not_of("# "));
      if (c.rfind("wait", 0) == 0) {
        ReplayStep p;
        p.pause = std::chrono::milliseconds(10);
        const auto s = c.find(" s");
        if (s != std::string::npos && c.find("ms") == std::string::npos) {
          const auto num = c.find_first_of("0123456789");
          if (num != std::string::npos && num < s) p.pause += std::chrono::milliseconds(1000 * std::stoi(c.substr(num)));
        }
        out.steps.push_back(p);
      } else if (c.rfind("primary with", 0) == 0) {
        out.needs_replica = true;
      } else if (c.rfind("on the replica", 0) == 0 || c.rfind("on a ", 0) == 0 || c.rfind("with ", 0) == 0 ||
                 c.rfind("a subscriber", 0) == 0) {
        out.complete = false;
        break;
      }
      continue;
    }
    ReplayStep st;
    std::string cmd = line;
    // "# " after the command starts its comment (the scripts never quote a '#').
    if (const auto hash = line.find(" #"); hash != std::string::npos) {
      cmd = line.substr(0, hash);
      st.expect = line.substr(line.find_first_not_of("# ", hash));
    }
    st.argv = resp::parse_cli_line(cmd);
    if (!st.argv.empty()) out.steps.push_back(st);
  }
  return out;
}

}  // namespace expirykit::triage
