// expirykit_report: a known server issue (known_issues/table.hpp) as a bug report ready to
// paste upstream: title, the versions where it reproduces and where it does not (each
// provisioned release of the row's flavor, checked live now), the replay as a CLI script and as
// a test in the servers' own Tcl test style, the expected behaviour with its source, the actual.
// ci/report runs it.
//
//   expirykit_report --list
//   expirykit_report ID [--out FILE]
//
// How "reproduces" is decided, per release (a fresh server of it, started here):
//   a crash row (KnownIssue::crashes, or a replay that crashes)  the server logs a crash report
//   a replay for a primary with a replica ("# primary with one replica attached")
//                                          the replica answers a read of the "on the replica"
//                                          part otherwise than the primary does
//   any other replay                       a step of it disagrees with the model (the
//                                          specification, state::Twin without known issues)
// A release without hash field TTLs is "not applicable". Exit status: 0 report written, 2 usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <expirykit/model/model.hpp>
#include <expirykit/process/discovery.hpp>
#include <expirykit/process/replica_set.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/known_issues/table.hpp>
#include <expirykit/state/twin.hpp>
#include <expirykit/triage/crash_report.hpp>
#include <expirykit/triage/replay.hpp>

using namespace expirykit;

namespace expirykit_tools::report {
using resp::Argv;
using resp::Reply;

namespace {

struct Outcome {
  std::string server;      ///< "valkey 9.1.2"
  std::string verdict;     ///< "reproduces", "does not reproduce", "not applicable: ..."
  std::string evidence;    ///< one line: what showed it (or did not)
  std::string transcript;  ///< command -> reply, per line
  std::optional<Argv> failing;        ///< the first step that disagreed with the model
  std::optional<Reply> specified;     ///< the model's reply for it
};

std::string oneline(const Reply& r) {
  std::string t = r.to_string();
  for (auto& ch : t)
    if (ch == '\n') ch = ' ';
  return t;
}

/// HRANDFIELD or HSCAN: the server chooses the reply, and the model's reply is the live fields
/// the rules choose from (model/cmd/random_read_commands.hpp), not a reply.
bool server_chooses(const Argv& a) {
  return !a.empty() && (model::upper(a[0]) == "HRANDFIELD" || model::upper(a[0]) == "HSCAN");
}

/// What the specification says `a` answers, given the model's reply `m`, for people.
std::string specified_text(const Argv& a, const Reply& m) {
  if (!server_chooses(a) || m.is_error()) return "`" + oneline(m) + "`";
  return "a reply the documented rules allow, chosen from the live fields and values `" + oneline(m) +
         "` (HRANDFIELD: a live field without a count, min(count, live) distinct ones for a positive count, -count "
         "ones for a negative count; model/cmd/random_read_commands.hpp)";
}

/// For a HRANDFIELD with a count: how many elements the specified reply holds (fields, or fields
/// and values under WITHVALUES), given the model's live (field, value) pairs `m`; nullopt otherwise.
std::optional<long long> specified_length(const Argv& a, const Reply& m) {
  if (a.size() < 3 || model::upper(a[0]) != "HRANDFIELD" || !m.is_array()) return std::nullopt;
  long long n = 0;
  try {
    n = std::stoll(a[2]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const long long live = static_cast<long long>(m.size() / 2), step = a.size() == 4 ? 2 : 1;
  if (live == 0) return 0;
  return (n >= 0 ? std::min(n, live) : -n) * step;
}

/// The replay's lines up to the first comment that starts another part, and the replica part.
struct Parts {
  triage::ReplaySteps primary;
  std::vector<Argv> on_replica;  ///< the reads of "# on the replica" (empty: no replica part)
};
Parts parts_of(const std::string& replay) {
  Parts p;
  p.primary = triage::replay_steps(replay);
  const auto at = replay.find("# on the replica");
  if (at != std::string::npos) {
    const auto nl = replay.find('\n', at);
    if (nl != std::string::npos) {
      const auto rest = triage::replay_steps(replay.substr(nl + 1));
      for (const auto& s : rest.steps)
        if (!s.argv.empty()) p.on_replica.push_back(s.argv);
    }
  }
  return p;
}

Outcome check_on(const known_issues::KnownIssue& k, const std::string& line, const Parts& parts) {
  Outcome o;
  process::ServerOptions so;
  so.binary = process::provisioned_server(line);
  process::Server probe(so);
  auto pc = probe.client();
  const auto id = server::Identity::probe(pc);
  o.server = id.to_string();
  const auto d = model::Dialect::for_server(server::to_string(id.flavor), id.version.major, id.version.minor);
  if (!d || !id.caps.field_ttl()) {
    o.verdict = "not applicable";
    o.evidence = "no hash field TTLs";
    return o;
  }
  const bool replica = parts.primary.needs_replica && !parts.on_replica.empty();
  std::unique_ptr<process::ReplicaSet> set;
  process::Server* target = &probe;
  if (replica) {
    process::ReplicaSetOptions ro;
    ro.primary = so;
    set = std::make_unique<process::ReplicaSet>(ro);
    target = &set->primary();
  }
  auto c = target->client();
  state::Twin twin(c, *d);  // no Options::server: the specification, nothing excused
  std::ostringstream tr;
  bool diverged = false;
  try {
    for (const auto& st : parts.primary.steps) {
      if (st.argv.empty()) {
        std::this_thread::sleep_for(st.pause);
        tr << "(wait " << st.pause.count() << " ms)\n";
        continue;
      }
      const auto s = twin.run(st.argv);
      tr << resp::cli_line(st.argv) << "  ->  " << oneline(s.server) << "\n";
      if (!s.ok && !s.unmodelled.empty()) continue;  // not a statement about the specification
      if (!s.ok && !diverged) {
        diverged = true;
        o.failing = st.argv;
        o.specified = s.model;
        o.evidence = resp::cli_line(st.argv) + " answered " + oneline(s.server) + ", specified " +
                     specified_text(st.argv, s.model);
      }
    }
  } catch (const resp::ConnectionError&) {
    tr << "(the connection broke)\n";
  }
  for (int i = 0; i < 200 && target->running() && !triage::CrashReport::read(target->log_path()).found; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto crash = triage::CrashReport::read(target->log_path());
  if (crash.found) {
    o.verdict = "reproduces";
    o.evidence = "the server crashed: " + crash.headline();
  } else if (k.crashes) {
    o.verdict = "does not reproduce";
    o.evidence = "the server answered every command and did not crash";
  } else if (replica) {
    set->sync();
    auto rc = set->replica().client();
    std::string diff;
    for (const auto& a : parts.on_replica) {
      const Reply rp = c.call(a), rr = rc.call(a);
      tr << "(replica) " << resp::cli_line(a) << "  ->  " << oneline(rr) << "   (primary: " << oneline(rp) << ")\n";
      if (!(rp == rr) && diff.empty()) diff = resp::cli_line(a) + ": replica " + oneline(rr) + ", primary " + oneline(rp);
    }
    o.verdict = diff.empty() ? "does not reproduce" : "reproduces";
    o.evidence = diff.empty() ? "the replica answers as the primary does" : diff;
  } else {
    o.verdict = diverged ? "reproduces" : "does not reproduce";
    if (!diverged) o.evidence = "every step agrees with the specification";
  }
  o.transcript = tr.str();
  return o;
}

/// A Tcl test in the style of the servers' own suites (tests/unit/type/hash-field-expire.tcl and
/// tests/integration/replication*.tcl: `start_server`, `r` or `[srv 0 client]` as the client,
/// `after` to wait, `wait_for_sync` / `wait_for_ofs_sync` for a replica, `assert_equal`).
std::string tcl_test(const known_issues::KnownIssue& k, const Parts& parts, const std::vector<Outcome>& outs) {
  std::ostringstream t;
  std::string title = k.what.substr(0, k.what.find(':'));
  if (title.size() > 90) title = title.substr(0, 87) + "...";
  auto tcl_word = [](const std::string& w) {
    bool plain = !w.empty();
    for (char ch : w) plain = plain && ch > ' ' && ch != '{' && ch != '}' && ch != '"' && ch != '\\' && ch != '[' && ch != '$';
    return plain ? w : "{" + w + "}";
  };
  auto args = [&](const Argv& a) {
    std::string s;
    for (const auto& w : a) s += " " + tcl_word(w);
    return s;
  };
  // A reply as the Tcl client returns it: integers and strings as words, arrays as lists.
  std::function<std::string(const Reply&)> tcl_value = [&](const Reply& r) -> std::string {
    if (r.is_integer()) return std::to_string(r.as_integer());
    if (r.is_nil()) return "{}";
    if (r.is_array()) {
      std::string out = "{";
      for (std::size_t i = 0; i < r.size(); ++i) out += (i ? " " : "") + tcl_value(r[i]);
      return out + "}";
    }
    return tcl_word(r.str());
  };
  const Outcome* rep = nullptr;
  for (const auto& o : outs)
    if (o.verdict == "reproduces") rep = &o;
  const bool replica = parts.primary.needs_replica && !parts.on_replica.empty();
  const bool crash = k.crashes || (rep && rep->evidence.rfind("the server crashed", 0) == 0);
  if (!replica) {
    t << "start_server {tags {\"hash-field-expire external:skip needs:debug\"}} {\n"
      << "    test {" << title << "} {\n";
    for (const auto& st : parts.primary.steps) {
      if (st.argv.empty()) {
        t << "        after " << st.pause.count() << "\n";
        continue;
      }
      if (!crash && rep && rep->failing && *rep->failing == st.argv && rep->specified) {
        if (rep->specified->is_error())
          t << "        assert_error {" << rep->specified->str() << "*} {r" << args(st.argv) << "}\n";
        else if (const auto len = specified_length(st.argv, *rep->specified))
          t << "        assert_equal " << *len << " [llength [r" << args(st.argv) << "]]\n";
        else if (server_chooses(st.argv))
          t << "        assert_not_equal {} [r" << args(st.argv) << "]\n";
        else
          t << "        assert_equal " << tcl_value(*rep->specified) << " [r" << args(st.argv) << "]\n";
      }
      else
        t << "        r" << args(st.argv) << "\n";
    }
    if (crash) t << "        assert_equal PONG [r ping]\n";
    t << "    }\n}\n";
    return t.str();
  }
  t << "start_server {tags {\"repl external:skip needs:debug\"}} {\n"
    << "    set primary [srv 0 client]\n"
    << "    set primary_host [srv 0 host]\n"
    << "    set primary_port [srv 0 port]\n"
    << "    start_server {} {\n"
    << "        set replica [srv 0 client]\n"
    << "        test {" << title << "} {\n"
    << "            $replica replicaof $primary_host $primary_port\n"
    << "            wait_for_sync $replica\n";
  for (const auto& st : parts.primary.steps) {
    if (st.argv.empty()) t << "            after " << st.pause.count() << "\n";
    else t << "            $primary" << args(st.argv) << "\n";
  }
  t << "            wait_for_ofs_sync $primary $replica\n";
  for (const auto& a : parts.on_replica) t << "            assert_equal [$primary" << args(a) << "] [$replica" << args(a) << "]\n";
  t << "        }\n    }\n}\n";
  return t.str();
}

}  // namespace

/// The program expirykit_report (tools/main.cpp runs it by the name it was called with).
int run(int argc, char** argv) {
  std::string id, out;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << "usage: expirykit_report --list | ID [--out FILE]\n";
      return 0;
    }
    if (a == "--list") list = true;
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (!a.empty() && a[0] != '-') id = a;
    else {
      std::cerr << "expirykit_report: unknown argument " << a << " (--help)\n";
      return 2;
    }
  }
  if (list) {
    for (const auto& k : known_issues::table())
      std::cout << k.id << "\t" << server::to_string(k.flavor) << " " << k.from.to_string()
                << (k.until ? " until " + k.until->to_string() : "") << "\t" << k.report << "\n";
    return 0;
  }
  const auto* k = known_issues::find(id);
  if (!k) {
    std::cerr << "expirykit_report: no known issue '" << id << "' (expirykit_report --list)\n";
    return 2;
  }
  try {
    const Parts parts = parts_of(k->replay);
    std::vector<Outcome> outs;
    std::vector<std::string> lines;
    for (const auto& l : process::provisioned_lines())
      if (l.flavor == server::to_string(k->flavor)) lines.push_back(l.name);
    std::sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
      int am = 0, an = 0, bm = 0, bn = 0;
      std::sscanf(a.c_str() + a.rfind('-') + 1, "%d.%d", &am, &an);
      std::sscanf(b.c_str() + b.rfind('-') + 1, "%d.%d", &bm, &bn);
      return std::make_pair(am, an) < std::make_pair(bm, bn);
    });
    for (const auto& l : lines) outs.push_back(check_on(*k, l, parts));
    std::ostringstream r;
    std::string title = k->what.substr(0, k->what.find(':'));
    r << "# " << (k->flavor == server::Flavor::valkey ? "Valkey" : "Redis") << ": " << title << "\n\n"
      << "Known issue `" << k->id << "` of expirykit (known_issues/table.hpp); upstream: " << k->report
      << (k->url().empty() ? "" : " (" + k->url() + ")") << ". First affected release known: " << k->from.to_string()
      << (k->until ? ", fixed in " + k->until->to_string() : "") << ".\n\n"
      << "## What happens\n\n" << k->what << ".\n\n"
      << "## Versions (checked live on fresh servers now)\n\n| release | result | evidence |\n|---|---|---|\n";
    for (const auto& o : outs) r << "| " << o.server << " | " << o.verdict << " | " << o.evidence << " |\n";
    r << "\n## Steps to reproduce (" << (k->flavor == server::Flavor::valkey ? "valkey-cli" : "redis-cli")
      << ", a fresh server started with --enable-debug-command yes)\n\n```text\n" << k->replay << "\n```\n\n"
      << "## As a test in the server's own suite (Tcl, tests/unit/type/hash-field-expire.tcl style)\n\n```tcl\n"
      << tcl_test(*k, parts, outs) << "```\n\n## Expected\n\n";
    const Outcome* rep = nullptr;
    for (const auto& o : outs)
      if (o.verdict == "reproduces") rep = &o;
    if (rep && rep->specified)
      r << "`" << resp::cli_line(*rep->failing) << "` answers " << specified_text(*rep->failing, *rep->specified)
        << ": the specification as the documentation and the fixed behaviour state it (expirykit's model, "
           "model/ and docs/semantics/).\n\n";
    else if (k->crashes || (rep && rep->evidence.rfind("the server crashed", 0) == 0))
      r << "The server answers every command (an error at worst) and keeps running.\n\n";
    else
      r << "The replica holds what the primary holds: the replication stream reproduces the primary's state "
           "(Valkey and Redis docs, \"Replication\").\n\n";
    r << "## Actual\n\n";
    for (const auto& o : outs)
      if (!o.transcript.empty()) r << "### " << o.server << ": " << o.verdict << "\n\n```text\n" << o.transcript << "```\n\n";
    if (out.empty()) std::cout << r.str();
    else std::ofstream(out) << r.str();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "expirykit_report: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace expirykit_tools::report
