// expirykit/property/differential.hpp: one command sequence against two servers, each checked
// against its own dialect, and the divergences BETWEEN the servers listed and classified.
//
//   state::Twin valkey(cv, model::Dialect::valkey_9_1()), redis(cr, model::Dialect::redis_8_0());
//   auto d = property::run_differential(valkey, redis, cmds);
//   for (auto& x : d.divergences) if (!x.explained) ...   // a finding
//
// A divergence is a command whose two server replies differ (unordered replies compared as
// sets). It is EXPLAINED when each server agrees with its own model and the two models differ
// the same way (the dialects predict it), or when a twin excused its server's step as a known
// issue of that server (Step::known_issue names the row). It is UNEXPLAINED when either server disagrees with
// its own model (a model or dialect gap: the finding to report). Once the states diverge (e.g.
// HSETEX NX accepted on Valkey, an error on Redis), later divergences are still explained as
// long as each side matches its model.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include <expirykit/gen/commands.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::property {

using resp::Argv;
using resp::Reply;
using state::Step;
using state::Twin;

struct Divergence {
  std::size_t index = 0;  ///< 0-based position in the sequence
  Argv argv;
  Step a, b;              ///< the step on each side (server and model replies)
  bool explained = false;
  /// Both replies are errors (the servers differ in text or in which check fires first).
  bool error_text_only() const { return a.server.is_error() && b.server.is_error(); }
};

struct DifferentialResult {
  std::vector<Divergence> divergences;
  std::size_t commands = 0;
  std::size_t unexplained() const {
    std::size_t n = 0;
    for (const auto& d : divergences) n += !d.explained;
    return n;
  }
};

/// Runs `cmds` on both twins (each after FLUSHALL SYNC and a model reset). The two servers run
/// each command at different moments: their clock-dependent replies (HTTL, HPTTL, TTL, ...:
/// replies_match) may differ by `time_tolerance_ms` without counting as a divergence (each
/// side's own model check stays exact).
inline DifferentialResult run_differential(Twin& a, Twin& b, const std::vector<Argv>& cmds,
                                           int64_t time_tolerance_ms = 1500) {
  DifferentialResult res;
  for (Twin* t : {&a, &b}) t->flushall();
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    Step sa = a.run(cmds[i]);
    Step sb = b.run(cmds[i]);
    ++res.commands;
    const int64_t tol = time_tolerance_ms;
    // A batch (EXEC, the sequence script) element by element with each command's rules.
    auto same = [&](const Reply& x, const Reply& y) {
      const auto& inner = !sa.batch.empty() ? sa.batch : sb.batch;
      if (!inner.empty() && x.is_array() && y.is_array()) return state::batch_match(inner, x, y, tol);
      return state::replies_match(cmds[i], x, y, tol);
    };
    // A reply the server picks (HRANDFIELD, HSCAN): two servers picking differently is no
    // divergence, the candidate sets (the models' replies, random_read_commands.hpp) are; they
    // are compared exactly, not through the allowed-reply check, which accepts a subset.
    const std::string u = cmds[i].empty() ? std::string() : model::upper(cmds[i][0]);
    const bool random = u == "HRANDFIELD" || u == "HSCAN";
    if (random ? (sa.model == sb.model && sa.ok && sb.ok) : same(sa.server, sb.server)) continue;
    Divergence d;
    d.index = i;
    d.argv = cmds[i];
    // Explained by the dialects (the two models differ as the servers do), or by a known issue
    // of one server that its twin excused (the models agree, one server does not: the row names it).
    d.explained = sa.ok && sb.ok &&
                  ((random ? !(sa.model == sb.model) : !same(sa.model, sb.model)) || !sa.known_issue.empty() ||
                   !sb.known_issue.empty());
    d.a = std::move(sa);
    d.b = std::move(sb);
    res.divergences.push_back(std::move(d));
  }
  return res;
}

/// `sequences` generated sequences (gen::sequence of `gen_dialect`, up to 40 commands each,
/// drawn from `random`) through run_differential(); the divergences of all of them, and the
/// commands run in `commands`.
inline DifferentialResult run_differential_sequences(Twin& a, Twin& b, const model::Dialect& gen_dialect,
                                                     long sequences, rc::Random random) {
  DifferentialResult all;
  const auto g = gen::sequence(gen_dialect, 40);
  for (long i = 0; i < sequences; ++i) {
    const auto cmds = g(random.split(), 40).value();
    auto res = run_differential(a, b, cmds);
    all.commands += res.commands;
    for (auto& d : res.divergences) all.divergences.push_back(std::move(d));
  }
  return all;
}

/// A table of divergences by command name: "HSETEX  12 explained, 0 unexplained", then every
/// unexplained one in full.
inline std::string summarize(const std::vector<Divergence>& ds, const std::string& name_a, const std::string& name_b) {
  struct Count {
    int explained = 0, unexplained = 0, errors = 0;
  };
  std::map<std::string, Count> by_cmd;
  for (const auto& d : ds) {
    auto& e = by_cmd[model::upper(d.argv[0])];
    (d.explained ? e.explained : e.unexplained)++;
    e.errors += d.error_text_only();
  }
  std::ostringstream os;
  os << "divergences between " << name_a << " and " << name_b << " by command:\n";
  for (const auto& [cmd, n] : by_cmd)
    os << "  " << cmd << ": " << n.explained << " explained, " << n.unexplained << " unexplained (" << n.errors
       << " of them error vs error)\n";
  for (const auto& d : ds) {
    if (d.explained) continue;
    os << "UNEXPLAINED at command " << d.index + 1 << ":\n  " << name_a << ": " << d.a.describe() << "\n  "
       << name_b << ": " << d.b.describe() << "\n";
  }
  return os.str();
}

/// The divergences as a Markdown report: the behaviours (command name, and whether both replies
/// are errors) on which the servers differ, first the UNEXPLAINED ones (a server disagrees with
/// its own model: a finding), then those EXPLAINED by the dialects; per behaviour its count and
/// up to `examples` commands with both servers' replies (unexplained ones with each side's step
/// in full: server and model replies, events, time window).
inline std::string differential_report(const std::vector<Divergence>& ds, const std::string& name_a,
                                       const std::string& name_b, std::size_t examples = 3) {
  auto oneline = [](const Reply& r) {
    std::string t = r.to_string();
    for (auto& ch : t)
      if (ch == '\n') ch = ' ';
    return t;
  };
  auto cell = [](std::string t) {  // a Markdown table cell
    std::string out;
    for (char ch : t) {
      if (ch == '|') out += "\\|";
      else if (ch == '\n') out += "<br>";
      else out += ch;
    }
    return out;
  };
  struct Group {
    std::vector<const Divergence*> items;
  };
  std::map<std::pair<bool, std::string>, Group> groups;  // (explained, behaviour)
  for (const auto& d : ds) {
    const std::string behaviour = model::upper(d.argv.empty() ? std::string("?") : d.argv[0]) +
                                  (d.error_text_only() ? " (error vs error)" : "");
    groups[{d.explained, behaviour}].items.push_back(&d);
  }
  std::size_t unexplained = 0;
  for (const auto& d : ds) unexplained += !d.explained;
  std::ostringstream os;
  os << "# Differential report: " << name_a << " vs " << name_b << "\n\n"
     << ds.size() << " divergent replies: " << unexplained << " unexplained, " << ds.size() - unexplained
     << " explained by the dialects. A divergence is a command whose two server replies differ; it is explained "
        "when each server agrees with its own model (model::Dialect) and the models differ the same way, "
        "unexplained when a server disagrees with its model (property/differential.hpp).\n";
  for (const bool explained : {false, true}) {
    os << "\n## " << (explained ? "Explained by the dialects" : "Unexplained") << "\n\n";
    bool any = false;
    for (const auto& [key, g] : groups) {
      if (key.first != explained) continue;
      any = true;
      os << "### " << key.second << ": " << g.items.size() << "\n\n";
      if (explained) {
        os << "| command | " << name_a << " | " << name_b << " |\n|---|---|---|\n";
        for (std::size_t i = 0; i < g.items.size() && i < examples; ++i) {
          const auto& d = *g.items[i];
          os << "| `" << cell(resp::cli_line(d.argv)) << "` | " << cell(oneline(d.a.server)) << " | "
             << cell(oneline(d.b.server)) << " |\n";
        }
        os << "\n";
      } else {
        for (std::size_t i = 0; i < g.items.size() && i < examples; ++i) {
          const auto& d = *g.items[i];
          os << "```text\n" << name_a << ": " << d.a.describe() << "\n" << name_b << ": " << d.b.describe() << "\n```\n\n";
        }
      }
    }
    if (!any) os << "none\n";
  }
  return os.str();
}

}  // namespace expirykit::property
