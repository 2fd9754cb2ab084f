// expirykit/observe/command_stats.hpp: INFO commandstats and INFO errorstats, read from a server
// and predicted from the commands sent and the model's replies.
//
//   c("CONFIG", "RESETSTAT");
//   std::vector<observe::Sent> sent;                       // each command and the model's reply
//   ... sent.push_back({argv, model_reply}) per command ...
//   auto diffs = observe::compare(observe::CommandStats::read(c), observe::CommandStats::of_model(sent));
//
// What the servers count (INFO docs, "commandstats" and "errorstats" sections: calls, rejected_calls
// "errors prior command execution", failed_calls "errors within the command execution"; live on
// Valkey 9.1.2, Redis 8.0.6 and 8.6.3, 2026-12-06, suites/semantics/command_stats.cpp):
//   - a command that fails the command table's arity check (model::arity_ok) is rejected: its
//     rejected_calls +1, calls unchanged. An arity error a command raises itself (Redis 8.0.6:
//     "HSETEX h EX 100 FIELDS 2 a 2" answers "wrong number of arguments for 'hsetex' command")
//     counts as failed;
//   - any other call counts in calls, and in failed_calls too when it answers an error
//     (WRONGTYPE, a syntax, numfields or time error);
//   - every error reply counts once in errorstat_<its first word> (ERR, WRONGTYPE), rejected ones
//     included.
// Only top-level commands of the model's command table (model::command_arity) are predicted, not
// OBJECT (servers count its subcommands, cmdstat_object|encoding) nor a command inside MULTI or a
// script (other rules, not modelled here). compare() looks only at the commands `sent` names, but
// every client's calls of those count on the server: send them on a connection of their own with
// nothing else calling the same commands meanwhile (a twin's read-backs call TYPE, HLEN and
// HPEXPIRETIME; an error any client gets shows in errorstats).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <expirykit/model/batch.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/server/info.hpp>

namespace expirykit::observe {

/// One command sent and the reply the specification gives for it (the model's, or the server's
/// after checking that it agrees).
struct Sent {
  resp::Argv argv;
  resp::Reply reply;
};

/// A command's line of INFO commandstats (cumulative since start or CONFIG RESETSTAT).
struct CallCounts {
  long long calls = 0;
  long long rejected_calls = 0;
  long long failed_calls = 0;
  friend bool operator==(const CallCounts&, const CallCounts&) = default;
};

/// INFO commandstats per command (lower-case name, "hexpire") and INFO errorstats per error
/// prefix ("ERR", "WRONGTYPE").
struct CommandStats {
  std::map<std::string, CallCounts> commands;
  std::map<std::string, long long> errors;

  /// INFO commandstats and INFO errorstats of `c`, in one round trip. Throws std::runtime_error
  /// if the server refuses INFO, resp::ConnectionError if the connection breaks.
  static CommandStats read(resp::Client& c) {
    const auto r = c.pipeline({{"INFO", "commandstats"}, {"INFO", "errorstats"}});
    for (const auto& x : r)
      if (!x.is_string()) throw std::runtime_error(c.address() + ": INFO failed: " + x.to_string());
    return parse(r[0].str(), r[1].str());
  }

  /// The INFO texts: "cmdstat_hexpire:calls=2,usec=..,rejected_calls=1,failed_calls=0" and
  /// "errorstat_ERR:count=3". A field a server does not print counts 0.
  static CommandStats parse(std::string_view commandstats, std::string_view errorstats) {
    CommandStats out;
    const auto info = server::Info::parse(commandstats), errs = server::Info::parse(errorstats);
    for (const auto& [_, section] : info.sections())
      for (const auto& [key, value] : section) {
        if (key.rfind("cmdstat_", 0) != 0) continue;
        const auto f = server::Info::keyspace_fields(value);
        auto get = [&f](const char* n) {
          const auto it = f.find(n);
          return it == f.end() ? 0LL : it->second;
        };
        out.commands[key.substr(8)] = {get("calls"), get("rejected_calls"), get("failed_calls")};
      }
    for (const auto& [_, section] : errs.sections())
      for (const auto& [key, value] : section) {
        if (key.rfind("errorstat_", 0) != 0) continue;
        const auto f = server::Info::keyspace_fields(value);
        const auto it = f.find("count");
        out.errors[key.substr(10)] = it == f.end() ? 0 : it->second;
      }
    return out;
  }

  /// What a server counts from a CONFIG RESETSTAT on for the top-level commands `sent`, each
  /// with the reply the specification gives it (see the file comment). Throws
  /// std::invalid_argument for an empty command, one outside model::command_arity's table, or
  /// OBJECT.
  static CommandStats of_model(const std::vector<Sent>& sent) {
    CommandStats out;
    for (const auto& s : sent) {
      if (s.argv.empty() || model::command_arity(s.argv[0]) == 0 || model::upper(s.argv[0]) == "OBJECT")
        throw std::invalid_argument("CommandStats::of_model predicts the commands of model::command_arity's table "
                                    "but OBJECT, not '" + (s.argv.empty() ? std::string() : s.argv[0]) + "'");
      std::string name = s.argv[0];
      for (auto& ch : name) ch = (ch >= 'A' && ch <= 'Z') ? char(ch - 'A' + 'a') : ch;
      auto& n = out.commands[name];
      if (!model::arity_ok(s.argv)) {
        ++n.rejected_calls;
      } else {
        ++n.calls;
        if (s.reply.is_error()) ++n.failed_calls;
      }
      if (s.reply.is_error()) {
        const std::string& e = s.reply.str();
        ++out.errors[e.substr(0, e.find(' '))];
      }
    }
    return out;
  }
};

/// One line per difference, for the commands `model` names and every error prefix either side
/// has: "cmdstat_hexpire: server calls=2 rejected_calls=0 failed_calls=1, model calls=2
/// rejected_calls=1 failed_calls=0", "errorstat_ERR: server 3, model 2".
inline std::vector<std::string> compare(const CommandStats& server, const CommandStats& model) {
  std::vector<std::string> out;
  auto line = [](const CallCounts& c) {
    return "calls=" + std::to_string(c.calls) + " rejected_calls=" + std::to_string(c.rejected_calls) +
           " failed_calls=" + std::to_string(c.failed_calls);
  };
  for (const auto& [name, want] : model.commands) {
    const auto it = server.commands.find(name);
    const CallCounts got = it == server.commands.end() ? CallCounts{} : it->second;
    if (!(got == want)) out.push_back("cmdstat_" + name + ": server " + line(got) + ", model " + line(want));
  }
  std::map<std::string, std::pair<long long, long long>> errs;
  for (const auto& [p, n] : server.errors) errs[p].first = n;
  for (const auto& [p, n] : model.errors) errs[p].second = n;
  for (const auto& [p, n] : errs)
    if (n.first != n.second)
      out.push_back("errorstat_" + p + ": server " + std::to_string(n.first) + ", model " + std::to_string(n.second));
  return out;
}

}  // namespace expirykit::observe
