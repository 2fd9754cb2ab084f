// expirykit/state/release_report.hpp: what changed from one release to the next, as data.
//
//   state::Twin a(ca, *model::Dialect::for_server("redis", 8, 0), oa);  // the previous release
//   state::Twin b(cb, a.dialect(), ob);                                  // the new one, same model
//   auto r = state::run_release_comparison(a, b, cmds);                  // per sequence
//   std::cout << state::release_report(all, "redis 8.0.6", "redis 8.6.3");
//
// The previous release's model (its Dialect) is the record of what it does: both servers run the
// same generated sequences, each checked against that one model. A command the previous release
// answers as its model says and the new one does not is a CHANGE since the previous release:
// the command, what the previous release answers (the model, and the older server itself) and
// what the new one answers, of one kind:
//   error text  both answer an error, with other texts (or the other check fires first)
//   reply       another reply (not both errors)
//   event       the same reply, other keyspace notifications
//   tracking    the same reply, other client-tracking invalidations
//   state       after the sequence, the data differs (values, deadlines, HLEN)
//   encoding    after the sequence, OBJECT ENCODING differs
//   counter     after the sequence, an INFO counter differs
//   crash       the new release died (triaged: triage/crash_triage.hpp)
//   fixed       a known issue of the previous line no longer shows (known_issues/table.hpp)
// A command the previous release itself answers against its model is a gap of the model, listed
// apart ("previous release disagrees with its own model"). After the first change in a sequence
// the new release's model no longer holds its data, so the sequence stops there; more sequences
// find more changes. The report groups changes by kind and command, with counts and examples.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <expirykit/resp/reply.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::state {

struct Change {
  std::string kind;          ///< see the file comment
  Argv argv;                 ///< the command (for state/encoding/counter: the sequence's last)
  Reply before;              ///< the previous release's reply (agrees with the model)
  Reply after;               ///< the new release's reply
  std::string detail;        ///< events / tracking / state difference, the triage, the row id
  std::vector<Argv> script;  ///< the sequence up to and including the command (a replay)
  /// What the change is about: the command's name; for a state, encoding or counter change
  /// (seen after the sequence) the read-back command or the INFO field that differs.
  std::string subject() const {
    if (kind == "counter") {  // "INFO stats expired_keys: server 14, model 13"
      const auto colon = detail.find(':');
      const auto space = detail.rfind(' ', colon);
      if (colon != std::string::npos && space != std::string::npos) return detail.substr(space + 1, colon - space - 1);
    }
    if (kind == "state" || kind == "encoding") {  // "h1: HPEXPIRETIME h1 FIELDS ..."
      const auto colon = detail.find(": ");
      if (colon != std::string::npos) return detail.substr(colon + 2, detail.find(' ', colon + 2) - colon - 2);
    }
    return argv.empty() ? std::string("?") : model::upper(argv[0]);
  }
  /// The group a change is counted in: kind, subject, and for errors both texts.
  std::string group() const {
    std::string g = kind + " | " + subject();
    if (kind == "error text") g += " | " + before.to_string() + " -> " + after.to_string();
    return g;
  }
};

struct ReleaseComparison {
  std::vector<Change> changes;
  std::vector<Change> model_gaps;  ///< the previous release disagreeing with its own model
  std::map<std::string, int> known_issues;  ///< rows met on the new release (held back, excused)
  std::size_t commands = 0;
  bool crashed = false;  ///< the new release died: a fresh server is needed
};

namespace detail {
inline std::string oneline(const Reply& r) {
  std::string t = r.to_string();
  for (auto& ch : t)
    if (ch == '\n') ch = ' ';
  return t;
}
}  // namespace detail

/// Runs `cmds` on both twins (each after FLUSHALL SYNC), command by command, then compares each
/// side's state and counters with its model. Throws what Twin::run throws for the previous
/// release; a new release that dies is a "crash" change (crashed = true).
inline ReleaseComparison run_release_comparison(Twin& a, Twin& b, const std::vector<Argv>& cmds) {
  ReleaseComparison res;
  a.prepare_stale_templates(cmds);  // before the counters' base (state/stale_templates.hpp)
  b.prepare_stale_templates(cmds);
  a.flushall();
  b.flushall();
  if (a.observing_counters()) a.observe_counters();
  if (b.observing_counters()) b.observe_counters();
  std::vector<Argv> sent;
  for (const auto& c : cmds) {
    Step sa = a.run(c);
    Step sb;
    sent.push_back(c);
    try {
      sb = b.run(c);
    } catch (const resp::ConnectionError& e) {
      res.crashed = true;
      res.changes.push_back({"crash", c, sa.server, Reply::error(e.what()), "", sent});
      return res;
    }
    ++res.commands;
    if (!sb.known_issue.empty()) ++res.known_issues[sb.known_issue];
    if (!sa.ok) {  // the model does not describe the previous release here: not a change
      res.model_gaps.push_back({"model gap", c, sa.server, sa.model, sa.describe(), sent});
      return res;
    }
    if (!sb.fixed_issue.empty()) res.changes.push_back({"fixed", c, sa.server, sb.server, sb.fixed_issue, sent});
    if (sb.ok) continue;
    Change ch{"", c, sa.server, sb.server, "", sent};
    const bool same_reply =
        sb.batch.empty() ? replies_match(c, sb.model, sb.server, 0) : batch_match(sb.batch, sb.model, sb.server, 0);
    if (!same_reply && !sb.batch.empty() && sb.server.is_array() && sb.model.is_array() &&
        sb.server.size() == sb.model.size() && sb.batch.size() == sb.server.size()) {
      // A transaction or the sequence script: the first element that differs names the change.
      for (std::size_t i = 0; i < sb.batch.size(); ++i) {
        if (replies_match(sb.batch[i], sb.model[i], sb.server[i], 0)) continue;
        ch.argv = sb.batch[i];
        ch.before = sa.server.is_array() && i < sa.server.size() ? sa.server[i] : sb.model[i];
        ch.after = sb.server[i];
        ch.detail = "inside " + model::upper(c[0]) + ": " + resp::cli_line(c);
        break;
      }
    }
    if (!same_reply) {
      ch.kind = ch.before.is_error() && ch.after.is_error() ? "error text" : "reply";
    } else if (!sb.events_diff.empty()) {
      ch.kind = "event";
      ch.detail = sb.events_diff;
    } else if (!sb.tracking_diff.empty()) {
      ch.kind = "tracking";
      ch.detail = sb.tracking_diff;
    } else {
      ch.kind = "reply";
    }
    // The previous release answered what the new one answers (inside a batch, where the model
    // disagreed with the new one for another reason, e.g. a deadline it could not adopt): not a
    // change; the new release's model no longer holds its data, so the sequence stops.
    if ((ch.kind == "reply" || ch.kind == "error text") && ch.before == ch.after) return res;
    if (ch.detail.empty()) ch.detail = sb.describe();
    // (Not after a batch: the twin adopts the deadlines the server computed only for a step that
    // agreed, so after a transaction with a changed error inside, its model is off by the
    // window's width.)
    const bool only_errors = ch.kind == "error text" && sb.batch.empty();
    res.changes.push_back(std::move(ch));
    // An error that both answer changed nothing on either side (the models still hold the
    // data): go on. Anything else: the new release's model no longer holds its data.
    if (only_errors && sb.events_diff.empty()) continue;
    return res;
  }
  if (b.in_transaction()) b.run(Argv{"DISCARD"});
  if (a.in_transaction()) a.run(Argv{"DISCARD"});
  const Argv last = cmds.empty() ? Argv{} : cmds.back();
  const auto sa_state = a.compare_state();
  if (!sa_state.empty()) {
    res.model_gaps.push_back({"model gap", last, {}, {}, sa_state.front(), sent});
    return res;
  }
  for (const auto& d : b.compare_state())
    res.changes.push_back({d.find("encoding") != std::string::npos ? "encoding" : "state", last, {}, {}, d, sent});
  if (a.observing_counters() && a.compare_counters().empty())
    for (const auto& d : b.compare_counters()) res.changes.push_back({"counter", last, {}, {}, d, sent});
  return res;
}

/// The Markdown report of `all` (from every sequence): changes by kind and command with counts
/// and up to `examples` examples each (command, both replies, detail, a replay of the sequence),
/// then the known issues met and the model gaps.
inline std::string release_report(const ReleaseComparison& all, const std::string& from, const std::string& to,
                                  std::size_t examples = 3) {
  std::map<std::string, std::vector<const Change*>> groups;
  std::map<std::string, int> per_kind;
  for (const auto& c : all.changes) {
    groups[c.group()].push_back(&c);
    ++per_kind[c.kind];
  }
  std::ostringstream os;
  os << "# Changed since " << from << ": " << to << "\n\n"
     << all.commands << " commands of generated sequences ran on both, each checked against " << from
     << "'s model (state/release_report.hpp). " << all.changes.size() << " changes in " << groups.size()
     << " groups";
  if (!per_kind.empty()) {
    os << " (";
    bool first = true;
    for (const auto& [k, n] : per_kind) {
      os << (first ? "" : ", ") << k << " " << n;
      first = false;
    }
    os << ")";
  }
  os << ".\n";
  std::string kind;
  for (const auto& [g, items] : groups) {
    const Change& c0 = *items.front();
    if (c0.kind != kind) {
      kind = c0.kind;
      os << "\n## " << kind << "\n";
    }
    os << "\n### " << c0.subject() << ": " << items.size() << "\n\n";
    for (std::size_t i = 0; i < items.size() && i < examples; ++i) {
      const Change& c = *items[i];
      const bool after_sequence = c.kind == "state" || c.kind == "encoding" || c.kind == "counter";
      os << "```text\n" << (after_sequence ? std::string("after the sequence below:") : resp::cli_line(c.argv)) << "\n";
      if (!after_sequence) {
        os << "  " << from << " (and its model): " << detail::oneline(c.before) << "\n";
        os << "  " << to << ": " << detail::oneline(c.after) << "\n";
      }
      if (!c.detail.empty() && (c.kind != "reply" && c.kind != "error text")) os << "  " << c.detail << "\n";
      if (c.script.size() > 1 && c.kind != "error text") {  // an error text shows on any state
        os << "  replay:\n";
        for (const auto& a : c.script) os << "    " << resp::cli_line(a) << "\n";
      }
      os << "```\n";
    }
  }
  if (!all.known_issues.empty()) {
    os << "\n## Known issues met on " << to << " (known_issues/table.hpp)\n\n";
    for (const auto& [id, n] : all.known_issues) os << "- " << id << ": " << n << " commands\n";
  }
  if (!all.model_gaps.empty()) {
    os << "\n## " << from << " disagrees with its own model: " << all.model_gaps.size() << "\n\n";
    for (std::size_t i = 0; i < all.model_gaps.size() && i < 5; ++i)
      os << "```text\n" << all.model_gaps[i].detail << "\n```\n";
  }
  return os.str();
}

/// The report's changes as tab-separated lines for ci/conformance and the matrix:
/// kind, command name, count, first example (command -> before | after).
inline std::string release_summary(const ReleaseComparison& all) {
  std::map<std::string, std::vector<const Change*>> groups;
  for (const auto& c : all.changes) groups[c.group()].push_back(&c);
  std::ostringstream os;
  for (const auto& [g, items] : groups) {
    const Change& c = *items.front();
    std::string ex = resp::cli_line(c.argv);
    if (c.kind == "state" || c.kind == "encoding" || c.kind == "counter") ex = c.detail;
    else ex += " -> " + detail::oneline(c.before) + " | " + detail::oneline(c.after);
    for (auto& ch : ex)
      if (ch == '\t' || ch == '\n') ch = ' ';
    os << c.kind << "\t" << c.subject() << "\t" << items.size() << "\t"
       << ex << "\n";
  }
  return os.str();
}

}  // namespace expirykit::state
