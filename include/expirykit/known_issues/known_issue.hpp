// expirykit/known_issues/known_issue.hpp: one row of the table of known server defects
// (known_issues/table.hpp): KnownIssue, and the Divergence its matcher is given.
//
// A row records the upstream report (or "unreported" and a replay script of valkey-cli /
// redis-cli lines), the affected versions and one sentence, and how state::Twin recognises it
// per step (state/known_divergence.hpp): `reproduce`, the defect as the model replays it
// (model::Defects); `matches`, a predicate on a divergence the model cannot replay; `crashes`, a
// predicate on a command that would crash a covered server (triage/crash_triage.hpp for the
// crashes no row predicts).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/dialect.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/server/identity.hpp>

namespace expirykit::known_issues {

/// A step where the server's observations differ from the specification (the model), as
/// state::Twin saw it: what a KnownIssue::matches predicate is given.
struct Divergence {
  resp::Argv argv;                       ///< the command as sent
  std::vector<resp::Argv> batch;         ///< the commands an EXEC / the sequence script ran; else empty
  resp::Reply model, server;             ///< the specification's reply and the server's
  std::string events_diff;               ///< "" when the keyspace notifications agree (or are not observed)
  std::string tracking_diff;             ///< "" when the tracking invalidations agree (or are not observed)
  /// Every command of the step (argv, or the batch for EXEC / the sequence script).
  std::vector<resp::Argv> commands() const { return batch.empty() ? std::vector<resp::Argv>{argv} : batch; }
};

struct KnownIssue {
  std::string id;                 ///< short name the checks use, e.g. "valkey-expired-fields-propagated"
  server::Flavor flavor = server::Flavor::valkey;
  server::Version from;                   ///< first affected version known
  std::optional<server::Version> until;  ///< first fixed release; nullopt: none known yet
  std::string report;             ///< "valkey-io/valkey#2618", or "unreported"
  std::string what;               ///< one sentence: what the server does instead of the specification
  std::string replay;             ///< valkey-cli / redis-cli lines reproducing it (newline-separated)
  /// Upper-case command names whose steps can show it to state::Twin; empty: the twin never
  /// meets it per step (a suite checks it: replicas, persistence, memory).
  std::vector<std::string> commands;
  /// The defect as the model replays it (model::Defects; all off: the model cannot).
  model::Defects reproduce;
  /// For a defect the model does not replay: true when a divergence on one of `commands` is this
  /// issue. Empty: none.
  std::function<bool(const Divergence&)> matches;
  /// For a crash: true when `argv`, sent to a server holding what `ks` holds (the model before
  /// the command, at `now_ms`), would crash it. state::Twin then does not send it and names the
  /// row (Step::known_issue); a crash no row predicts is a FAIL with its triage
  /// (triage/crash_triage.hpp). Empty: not a crash row.
  std::function<bool(const model::Keyspace& ks, const resp::Argv& argv, int64_t now_ms)> crashes;

  bool covers(const server::Identity& id) const {
    return id.flavor == flavor && id.version >= from && (!until || id.version < *until);
  }
  /// True when state::Twin can recognise it per step (a replayable defect or a matcher).
  bool recognisable() const { return !commands.empty() && (reproduce.any() || static_cast<bool>(matches)); }
  /// True when argv, or a command of the batch, is one of `commands`.
  bool concerns(const resp::Argv& argv, const std::vector<resp::Argv>& batch = {}) const {
    auto named = [&](const resp::Argv& a) {
      if (a.empty()) return false;
      std::string u = a[0];
      for (auto& ch : u) ch = (ch >= 'a' && ch <= 'z') ? char(ch - 'a' + 'A') : ch;
      for (const auto& c : commands)
        if (c == u) return true;
      return false;
    };
    if (named(argv)) return true;
    for (const auto& a : batch)
      if (named(a)) return true;
    return false;
  }
  /// The upstream page of `report` ("owner/repo#n" -> https://github.com/owner/repo/issues/n);
  /// "" for an unreported issue.
  std::string url() const {
    const auto hash = report.find('#');
    if (hash == std::string::npos || report.find('/') == std::string::npos) return {};
    return "https://github.com/" + report.substr(0, hash) + "/issues/" + report.substr(hash + 1);
  }
};

}  // namespace expirykit::known_issues
