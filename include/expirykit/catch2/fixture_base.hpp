// expirykit/catch2/fixture_base.hpp: what the kit's Catch2 v3 fixtures share: the capability
// checks that SKIP with the server named, the model dialect and twin options of the server under
// test, a node's reset before a test and the after-test check that nodes still answer PING.
//
//   class MyFixture : public expirykit::catch2::FixtureBase {
//    protected:
//     const expirykit::server::Identity& identity() override { return probe_identity(client_); }
//     ...
//   };
//
// ServerFixture (catch2/fixture.hpp), ReplicaFixture (catch2/replica_fixture.hpp) and
// ClusterFixture (catch2/cluster_fixture.hpp) derive from it; a fixture of your own can too. A
// derived fixture says which server a test checks by overriding identity(); the rest asks it.
// Which servers a run tests (spawned, or external) is process/under_test.hpp's choice.
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/model/dialect.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/config.hpp>
#include <expirykit/server/dialect_choice.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::catch2 {

namespace detail {
/// "valkey 9.1.2" of the server the last fixture of this binary probed with probe_identity(), for
/// the verdict lines of fixtures that do not use the shared target (ReplicaFixture,
/// ClusterFixture); empty before any.
inline std::string& last_server_identity() {
  static std::string s;
  return s;
}
/// What the fixtures' first line adds when EXPIRYKIT_WIRE_DELAY_MS is on ("; every round trip
/// of the kit's connections waits 3 ms more (EXPIRYKIT_WIRE_DELAY_MS)"), else "": a failure in
/// such a run is a time margin, and the log must say the delay was on (a new-user trial).
inline std::string wire_delay_note() {
  const long long ms = partial_config().wire_delay_ms;
  return ms > 0 ? "; every round trip of the kit's connections waits " + std::to_string(ms) +
                      " ms more (EXPIRYKIT_WIRE_DELAY_MS)"
                : std::string();
}
/// How the kit reaches an external server, for the banner: "; over TLS[ with a client
/// certificate]" (EXPIRYKIT_SERVER_TLS_CA, _CERT), "; AUTH as user <name>" or "; AUTH as the
/// default user" (EXPIRYKIT_SERVER_PASSWORD, _USER; the password is never shown); "" for plain
/// TCP without AUTH. A new-user trial (issue 23) could not tell from the banner which it was.
inline std::string external_access_note() {
  const auto& c = partial_config();
  std::string s;
  if (c.server_tls_ca) s += c.server_tls_cert ? "; over TLS with a client certificate" : "; over TLS";
  if (c.server_password)
    s += "; AUTH as " + (c.server_user ? "user " + *c.server_user : std::string("the default user"));
  return s;
}
/// `items` one a line, each after `indent` and ending with a newline: the differences a failed
/// check of a fixture lists.
inline std::string one_per_line(const std::vector<std::string>& items, const std::string& indent = "") {
  std::string out;
  for (const auto& x : items) out += indent + x + "\n";
  return out;
}
/// The longest line (characters) a fixture's failure message shows whole: a longer one keeps its
/// first and last kMessageLineChars / 2 characters around a note of how many were cut. A test
/// that writes a 10,000-field hash of 1 KB values (suites/semantics/memory_release.cpp: HSETs of
/// 500 fields, half a megabyte a line) printed its 10 MB of steps so far with each failed check,
/// and HGETALL of the hash in a state difference: a 165 MB log of suite_semantics, and 540 s for
/// a fault that took 110 s before those tests (ci/kill-table, active-expiry-never-runs).
inline constexpr std::size_t kMessageLineChars = 4000;
/// `text` with each line (between newlines) over `max_chars` characters cut in its middle:
/// "<first max_chars / 2> ... [N characters cut from this message] ... <last max_chars / 2>".
/// Shorter lines, and the newlines, stay as they are. A script line cut so no longer replays:
/// the test has it whole in Twin::script().
inline std::string cut_long_lines(const std::string& text, std::size_t max_chars = kMessageLineChars) {
  const std::size_t half = std::max<std::size_t>(max_chars / 2, 1);
  std::string out;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::size_t len = end - at;
    if (len <= max_chars) {
      out.append(text, at, len);
    } else {
      out.append(text, at, half);
      out += " ... [" + std::to_string(len - 2 * half) + " characters cut from this message] ... ";
      out.append(text, end - half, half);
    }
    if (end == text.size()) break;
    out += '\n';
    at = end + 1;
  }
  return out;
}
/// The most lines a fixture's failure message shows of a list of differences or of a script: a
/// longer one keeps its first and last kMessageLines / 2 lines around a note of how many were
/// cut. The drain property on a server whose active expiry never ran listed 2,000 hashes'
/// differences and a 2,000-command script with each failed check: 4.4 MB of log.
inline constexpr std::size_t kMessageLines = 400;
/// `text` (lines ending in newlines) with more than `max_lines` lines cut in its middle:
/// its first and last max_lines / 2 lines around "... [N lines cut from this message] ...".
inline std::string cut_many_lines(const std::string& text, std::size_t max_lines = kMessageLines) {
  std::vector<std::size_t> starts{0};  // where each line starts
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n' && i + 1 < text.size()) starts.push_back(i + 1);
  const std::size_t half = std::max<std::size_t>(max_lines / 2, 1);
  if (starts.size() <= max_lines || starts.size() <= 2 * half) return text;
  const std::size_t cut = starts.size() - 2 * half;
  return text.substr(0, starts[half]) + "... [" + std::to_string(cut) + " lines cut from this message] ...\n" +
         text.substr(starts[starts.size() - half]);
}
/// "called at <file>:<line>" of `where`: the test line that called a fixture's check (Catch2
/// reports the line of the fixture's header).
inline std::string called_at(const std::source_location& where) {
  return "called at " + std::string(where.file_name()) + ":" + std::to_string(where.line());
}
}  // namespace detail

class FixtureBase {
 public:
  FixtureBase(const FixtureBase&) = delete;
  FixtureBase& operator=(const FixtureBase&) = delete;
  virtual ~FixtureBase() = default;

 protected:
  FixtureBase() = default;

  /// Flavor, version and capabilities of the server this test checks (ServerFixture: the shared
  /// server; ReplicaFixture: the primary; ClusterFixture: the first primary). May SKIP (a fixture
  /// that cannot have its servers here) or throw as setting them up does.
  virtual const server::Identity& identity() = 0;

  /// SKIPs the test on a server without hash field TTLs: NOT SUPPORTED, "not supported by valkey
  /// 8.0.1: hash field TTLs (HEXPIRE)".
  void require_field_ttl() { require(identity().caps.field_ttl(), "hash field TTLs (HEXPIRE)"); }
  /// SKIPs the test unless `have`: NOT SUPPORTED, "not supported by <server>: <what>"
  /// (catch2/verdict_kind.hpp).
  void require(bool have, const std::string& what) {
    if (!have) skip(Verdict::not_supported, "not supported by " + identity().to_string() + ": " + what);
  }
  /// SKIPs unless DEBUG is enabled on the server (always so on a server the kit spawns): NOT
  /// SUPPORTED, "not supported by <server> as started: the DEBUG command, for <why>
  /// (enable-debug-command is off: start it with --enable-debug-command local, or yes)".
  void require_debug(const std::string& why) {
    if (!identity().caps.debug)
      skip(Verdict::not_supported, "not supported by " + identity().to_string() + " as started: the DEBUG command, for " + why +
                                       " (enable-debug-command is off: start it with --enable-debug-command local, or yes)");
  }
  /// The model dialect that checks this server (server::dialect_for(identity()): its own, the
  /// newest older one of its flavor, or EXPIRYKIT_DIALECT's). SKIPs on a server without one: NOT
  /// SUPPORTED, "... no model dialect (no hash field TTLs)". Throws std::invalid_argument for an
  /// EXPIRYKIT_DIALECT that names no dialect of the server's flavor.
  model::Dialect require_dialect() {
    const auto& id = identity();
    auto d = server::dialect_for(id);
    if (!d) skip(Verdict::not_supported, "not supported by " + id.to_string() + ": no model dialect (no hash field TTLs)");
    return *d;
  }
  /// Twin options naming this server (Options::server = identity()): a divergence that is a
  /// known issue of it is excused and named, not failed (state/known_divergence.hpp).
  state::TwinOptions twin_options() {
    state::TwinOptions o;
    o.server = identity();
    return o;
  }

  /// The identity of the server behind `c`, probed the first time this fixture asks (so once per
  /// test) and remembered for the verdict line (detail::last_server_identity()). For an
  /// identity() override.
  const server::Identity& probe_identity(resp::Client& c) {
    if (!probed_) {
      probed_ = server::Identity::probe(c);
      detail::last_server_identity() = probed_->to_string();
    }
    return *probed_;
  }

  /// Before a test: FLUSHALL SYNC on `c` (a refusal FAILs the test: "FLUSHALL SYNC on <what>
  /// failed: <reply>"), then, when `debug`, active expiry switched back on (DEBUG
  /// SET-ACTIVE-EXPIRE 1; its reply is not checked).
  static void reset_node(resp::Client& c, const std::string& what, bool debug = true) {
    const auto r = c("FLUSHALL", "SYNC");
    if (r.is_error()) FAIL("FLUSHALL SYNC on " << what << " failed: " << r);
    if (debug) c("DEBUG", "SET-ACTIVE-EXPIRE", "1");
  }

  /// True when the kit-spawned node `s` runs and answers PING (1 s to connect, 5 s to answer).
  static bool answers_ping(process::Server& s) {
    try {
      return s.running() && s.client({std::chrono::milliseconds(1000), std::chrono::milliseconds(5000)})("PING").is_status();
    } catch (const std::exception&) {
      return false;
    }
  }
  /// "" when answers_ping(s); else why not: its exit status and log tail, or "stopped answering
  /// PING during this test" and the log tail.
  static std::string node_trouble(process::Server& s) {
    if (answers_ping(s)) return "";
    try {
      s.check_alive();
      return "stopped answering PING during this test\n" + s.log_tail();
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  /// After a test on nodes shared between tests: for the first of `nodes` in trouble
  /// (node_trouble()), FAIL_CHECKs "<name(node)> <trouble>" (without throwing) and returns false;
  /// true when every node answers.
  static bool nodes_answer(const std::vector<process::Server*>& nodes, const std::function<std::string(process::Server&)>& name) {
    for (process::Server* s : nodes) {
      const std::string why = node_trouble(*s);
      if (why.empty()) continue;
      FAIL_CHECK(name(*s) << " " << why);
      return false;
    }
    return true;
  }

 private:
  std::optional<server::Identity> probed_;
};

}  // namespace expirykit::catch2
