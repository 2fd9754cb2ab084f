// expirykit/catch2/fixture.hpp: a server for each Catch2 v3 test.
//
//   TEST_CASE_METHOD(expirykit::catch2::ServerFixture, "HTTL of a missing key is -2 per field") {
//     require_field_ttl();                              // SKIP on servers without field TTLs
//     CHECK(client()("HTTL", "nokey", "FIELDS", 2, "a", "b") == Reply::ints({-2, -2}));
//   }
//
// Every test of a test binary shares one server (process::Target: spawned, or external via
// EXPIRYKIT_SERVER_ADDR); before each test it gets FLUSHALL SYNC, active expiry switched back on,
// and every CONFIG parameter an earlier test changed set back to what the first test found
// (CONFIG GET *), so tests see neither each other's keys nor each other's configuration. When a
// binary first reaches its server it prints one line on stderr: the server's identity, address
// and binary. A test that restarts or reconfigures a server
// asks for its own with fresh_server(), which is skipped in external mode.
// After each test the fixture checks that the shared server still answers PING; a crash fails
// that test with the server's exit status and crash report, and the next test gets a new server.
// The failure names the crash and the crashing command with the shortest sequence of what the
// test sent that crashes a fresh server, verified with the server's CLI (triage/crash_triage.hpp;
// the test's connection keeps its last 10,000 commands for it: resp::Client::record).
// The capability checks (require_field_ttl(), require(), require_debug()) come from FixtureBase
// (catch2/fixture_base.hpp), which ReplicaFixture and ClusterFixture share.
#pragma once

#include <catch2/catch_test_macros.hpp>
#include <catch2/interfaces/catch_interfaces_capture.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <expirykit/catch2/fixture_base.hpp>
#include <expirykit/catch2/verdict_kind.hpp>
#include <expirykit/process/target.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/triage/crash_triage.hpp>

namespace expirykit::catch2 {

/// A Catch2 test spec that selects exactly the test case named `name` (its special characters
/// , [ ] * ~ " \\ escaped with a backslash), for a replay command line.
inline std::string test_spec(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == ',' || c == '[' || c == ']' || c == '*' || c == '~' || c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

/// test_spec() of the Catch2 test case running now (e.g. for property::PropertyBudget::test_name).
inline std::string current_test_name() { return test_spec(Catch::getResultCapture().getCurrentTestName()); }

namespace detail {
inline std::unique_ptr<process::Target>& shared_target_slot() {
  static std::unique_ptr<process::Target> t;
  return t;
}
/// Counts the shared targets started (a crash starts a new one).
inline unsigned& shared_target_generation() {
  static unsigned g = 0;
  return g;
}
/// The shared server's configuration as the first test of its generation found it.
struct ConfigBaseline {
  unsigned generation = 0;
  std::map<std::string, std::string> values;
};
inline ConfigBaseline& config_baseline() {
  static ConfigBaseline b;
  return b;
}
/// CONFIG GET * as name -> value (empty if refused).
inline std::map<std::string, std::string> config_of(resp::Client& c) {
  std::map<std::string, std::string> out;
  const resp::Reply r = c("CONFIG", "GET", "*");
  if (!r.is_array()) return out;
  for (std::size_t i = 0; i + 1 < r.size(); i += 2)
    if (r[i].is_string() && r[i + 1].is_string()) out[r[i].str()] = r[i + 1].str();
  return out;
}
}  // namespace detail

/// The shared server of this test binary, started on first use. Throws process::ServerError
/// (std::invalid_argument for a bad EXPIRYKIT_* value, config.hpp) when it cannot be set up (an
/// unreachable external address, a server that does not start): the first test that asks gets
/// the full error, every later test of the binary a one-line error that points to it, without
/// trying again (issue 23: the same long message once per test said nothing new and a spawn
/// attempt cost seconds each time).
inline process::Target& shared_target() {
  auto& t = detail::shared_target_slot();
  static std::string setup_error;  // the first line of the first set-up failure
  if (t && t->owned() && !t->owned()->running()) t.reset();  // crashed earlier: start anew
  if (!t) {
    if (!setup_error.empty())
      throw process::ServerError("the shared server could not be set up, see the first failing test of this binary: " +
                                 setup_error);
    try {
      t = std::make_unique<process::Target>();
    } catch (const std::exception& e) {
      const std::string what = e.what();
      setup_error = what.substr(0, what.find('\n'));
      if (setup_error.empty()) setup_error = "(no message)";
      throw;
    }
    ++detail::shared_target_generation();
    const std::string external = t->external() ? detail::external_access_note() + "; every test FLUSHALLs it" : "";
    std::fprintf(stderr, "expirykit: tests run against %s%s%s\n", t->describe().c_str(), external.c_str(),
                 detail::wire_delay_note().c_str());
  }
  return *t;
}

class ServerFixture : public FixtureBase {
 public:
  ServerFixture() : target_(&shared_target()), client_(target_->client()) {
    reset_node(client_, target_->address(), target_->identity().caps.debug);
    restore_config();
    client_.record(10000);  // what this test sends, for a crash triage (see ~ServerFixture)
  }
  /// Fails the test (without throwing) if the shared server no longer answers PING: it died
  /// (the failure carries the exit status and crash report) or hangs (it is then killed).
  ~ServerFixture() override {
    auto* s = target_->owned();
    if (!s || answers_ping(*s)) {
      for (auto it = config_for_test_.rbegin(); it != config_for_test_.rend(); ++it) {
        try {
          (void)client_("CONFIG", "SET", it->first, it->second);
        } catch (...) {  // a broken connection: the next test's restore_config() sets it back
        }
      }
      return;
    }
    // A crashing server takes a moment to write its crash report and exit.
    for (int i = 0; i < 1000 && s->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    try {
      s->check_alive();
      FAIL_CHECK("the server " << s->address() << " stopped answering PING during this test; killed it\n" << s->log_tail());
      s->kill();
    } catch (const std::exception& e) {
      // A crash: shrink what this test sent on this connection to the shortest sequence that
      // crashes a fresh server (triage/crash_triage.hpp), unless a property did so already.
      std::string triage;
      if (triage::CrashReport::read(s->log_path()).found && !triage::already_triaged(s->log_path()) &&
          !client_.recorded().empty()) {
        try {
          triage = triage::triage_crash(s->options(), client_.recorded(), s->log_path()).message();
        } catch (const std::exception& te) {
          triage = std::string("(the crash triage failed: ") + te.what() + ")";
        }
      }
      if (!triage.empty()) FAIL_CHECK("the server died during this test: " << triage << "\n" << e.what());
      else FAIL_CHECK("the server died during this test: " << e.what());
    }
  }
  /// CONFIG SET `name` `value` on the server for the rest of this test; the value it has now is
  /// set back when the test ends (the destructor), whatever the test's fate, so that a server the
  /// kit does not own (external mode) is left as it was found. REQUIREs that CONFIG GET names the
  /// parameter and that the server accepts the value.
  void set_config_for_test(const std::string& name, const std::string& value) {
    const resp::Reply old = client_("CONFIG", "GET", name);
    INFO("CONFIG GET " << name << " answered " << old);
    REQUIRE((old.is_array() && old.size() == 2));
    REQUIRE(client_("CONFIG", "SET", name, value) == resp::Reply::ok());
    config_for_test_.emplace_back(name, old[1].str());
  }
  ServerFixture(const ServerFixture&) = delete;
  ServerFixture& operator=(const ServerFixture&) = delete;

 protected:
  /// A connection to the shared server, opened for this test.
  resp::Client& client() { return client_; }
  process::Target& target() { return *target_; }
  /// The shared server's identity (probed once per server, process::Target::identity()).
  const server::Identity& identity() override { return target_->identity(); }

  /// SKIPs when the server is external (the kit cannot restart or reconfigure it).
  void require_own_server(const std::string& why) {
    if (target_->external()) SKIP("needs a server the kit spawns (" << why << "); EXPIRYKIT_SERVER_ADDR is set");
  }
  /// A server of this test's own, started with `opts` (the same binary as the shared one
  /// unless opts.binary says otherwise). SKIPs in external mode.
  std::unique_ptr<process::Server> fresh_server(process::ServerOptions opts = {}, const std::string& why = "restart") {
    require_own_server(why);
    if (opts.binary.empty()) opts.binary = target_->owned()->binary();
    return std::make_unique<process::Server>(std::move(opts));
  }

 private:
  /// Sets back every parameter an earlier test changed (see the file comment); WARNs about one
  /// the server refuses to set back.
  void restore_config() {
    auto& base = detail::config_baseline();
    if (base.generation != detail::shared_target_generation()) {
      base.values = detail::config_of(client_);
      base.generation = detail::shared_target_generation();
      return;
    }
    const auto now = detail::config_of(client_);
    for (const auto& [name, value] : base.values) {
      const auto it = now.find(name);
      if (it == now.end() || it->second == value) continue;
      const resp::Reply r = client_("CONFIG", "SET", name, value);
      if (r.is_error()) WARN("could not set " << name << " back to '" << value << "' after an earlier test: " << r);
    }
  }

  process::Target* target_;
  resp::Client client_;
  std::vector<std::pair<std::string, std::string>> config_for_test_;  ///< set_config_for_test(): name, value to set back
};

}  // namespace expirykit::catch2
