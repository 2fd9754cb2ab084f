// suites/semantics/known_issue_examples.hpp: one live example per server defect the model can
// replay (known_issues/table.hpp rows with `reproduce`), run through state::Twin.
//
// Each example sends a short script to the server and the model of the twin's dialect (the
// specification), and says from the server's own replies whether the server showed the row's
// defect. The twin checks every step: a server covered by the row is excused step by step
// (Step::known_issue names the row, and the model follows the server), a covered server that
// behaves as specified is noticed (Step::fixed_issue), and any other divergence fails the step.
//
// suites/semantics/known_issues.cpp turns each example into a conformance check (KNOWN ISSUE on
// the affected server, the specified replies elsewhere); checks/dialect/known_issue_examples_test.cpp
// runs the same examples on a server without the defect under an identity the row covers, which
// is what a fixed release looks like, and expects FIXED.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <expirykit/resp/reply.hpp>
#include <expirykit/state/twin.hpp>

namespace expirykit::examples {

using resp::Argv;
using resp::Reply;
using state::Step;
using state::Twin;

/// What one example saw.
struct Observation {
  bool defect = false;                 ///< the server showed the row's defect (from its own replies)
  std::string observed;                ///< the decisive commands with the server's replies
  std::vector<Step> steps;             ///< every step, in order
  std::vector<std::string> state_diffs;  ///< Twin::compare_state() at the end: empty when the model followed
  std::set<std::string> known_issues;  ///< Step::known_issue values met
  std::set<std::string> fixed_issues;  ///< Step::fixed_issue values met
  /// The steps the twin could not match (neither the specification nor an excuse).
  std::vector<const Step*> failed() const {
    std::vector<const Step*> out;
    for (const auto& s : steps)
      if (!s.ok) out.push_back(&s);
    return out;
  }
};

/// A running example: records each step and what the twin concluded.
class Script {
 public:
  explicit Script(Twin& t) : t_(t) {}
  Step run(const std::string& line) { return record(t_.run(line)); }
  Step run(const Argv& a) { return record(t_.run(a)); }
  /// Active expiry off, a 1 ms TTL on `field` of `key`, then wait on the server clock until it
  /// has logically expired (the "expired but unreclaimed" state).
  void expire_unreclaimed(const std::string& key, const std::string& field) {
    t_.set_active_expire(false);
    const Step s = run(Argv{"HPEXPIRE", key, "1", "FIELDS", "1", field});
    t_.wait_until_past(s.after_ms + 1, 5);
  }
  /// `line -> server reply`, for Observation::observed.
  static std::string seen(const Step& s) { return resp::cli_line(s.argv) + " -> " + Twin::oneline(s.server); }
  Observation finish(bool defect, std::string observed) {
    o_.defect = defect;
    o_.observed = std::move(observed);
    o_.state_diffs = t_.compare_state();
    t_.set_active_expire(true);
    return std::move(o_);
  }

 private:
  Step record(Step s) {
    if (!s.known_issue.empty()) o_.known_issues.insert(s.known_issue);
    if (!s.fixed_issue.empty()) o_.fixed_issues.insert(s.fixed_issue);
    o_.steps.push_back(s);
    return s;
  }
  Twin& t_;
  Observation o_;
};

struct Example {
  std::string id;     ///< the known_issues/table.hpp row
  std::string title;  ///< the specified behaviour, as a check name
  /// True when every reply of the script is the same on both server lines as specified, so it
  /// can run on the other line under the row's dialect (checks/dialect); else same flavor only.
  bool portable = true;
  /// Runs the script on a flushed twin (any dialect the example can run under).
  std::function<Observation(Twin&)> run;
};

/// The examples, one per replayable row.
inline const std::vector<Example>& known_issue_examples() {
  static const std::vector<Example> v = {
      {"valkey-copy-skips-expired-fields", "COPY copies logically expired fields with their deadlines", true,
       [](Twin& t) {
         Script x(t);
         x.run("HSET h a 1 b 2");
         x.run("HSET g a 1");
         x.expire_unreclaimed("h", "a");
         x.expire_unreclaimed("g", "a");
         x.run("COPY h h2");
         x.run("COPY g g2");
         const Step h2 = x.run("HLEN h2"), g2 = x.run("HLEN g2");  // specified: 2 and 1
         x.run("HPEXPIRETIME h2 FIELDS 2 a b");                      // specified: [-2, -1]
         const bool defect = h2.server != Reply::integer(2) || g2.server != Reply::integer(1);
         return x.finish(defect, Script::seen(h2) + "; " + Script::seen(g2) + " (specified: 2; 1)");
       }},
      {"valkey-fields-keyword-scan-includes-key", "HSETEX and HGETEX on a key named fields", true,
       [](Twin& t) {
         Script x(t);
         const Step set = x.run("HSETEX fields FIELDS 1 a 1");  // specified: 1
         const Step get = x.run("HGETEX fields FIELDS 1 a");    // specified: ["1"]
         const bool defect = set.server.is_error() || get.server.is_error();
         return x.finish(defect, Script::seen(set) + "; " + Script::seen(get) + " (specified: 1; [\"1\"])");
       }},
      {"valkey-fields-token-unchecked", "HTTL, HPERSIST and HGETDEL check their FIELDS token", false,
       [](Twin& t) {
         Script x(t);
         x.run("HSET key field value");
         const Step p = x.run("HPERSIST key a 1 field");  // specified: an error
         const Step l = x.run("HTTL key FOO 1 field");    // specified: an error
         bool defect = !p.server.is_error() || !l.server.is_error();
         std::string observed = Script::seen(p) + "; " + Script::seen(l);
         if (t.dialect().has_hgetdel) {
           const Step d = x.run("HGETDEL key persist 1 field");
           defect = defect || !d.server.is_error();
           observed += "; " + Script::seen(d);
         }
         x.run("HGET key field");  // still there
         return x.finish(defect, observed + " (specified: errors)");
       }},
      {"redis-hexpire-revives-expired-field", "HEXPIRE on a logically expired field answers -2 and changes nothing", true,
       [](Twin& t) {
         Script x(t);
         x.run("HSET h a 1 b 2");
         x.expire_unreclaimed("h", "a");
         x.run("HTTL h FIELDS 1 a");                            // [-2]
         const Step e = x.run("HEXPIRE h 100 FIELDS 1 a");      // specified: [-2]
         x.run("HPERSIST h FIELDS 1 a");                        // specified: [-2]
         x.run("HLEN h");                                       // 2: nothing deleted
         const bool defect = e.server != Reply::ints({-2});
         return x.finish(defect, Script::seen(e) + " (specified: [-2])");
       }},
      {"redis-hsetex-keepttl-expired-deadline", "HSETEX KEEPTTL writes a logically expired field as a new one", true,
       [](Twin& t) {
         Script x(t);
         x.run("HSET h a 1 b 2");
         x.expire_unreclaimed("h", "a");
         x.run("HSETEX h KEEPTTL FIELDS 1 a 9");                  // 1
         const Step e = x.run("HPEXPIRETIME h FIELDS 1 a");       // specified: [-1]
         const Step g = x.run("HGET h a");                        // specified: "9"
         const bool defect = e.server != Reply::ints({-1}) || g.server != Reply::string("9");
         return x.finish(defect, Script::seen(e) + "; " + Script::seen(g) + " (specified: [-1]; \"9\")");
       }},
      {"redis-hmget-deletes-hash-silently", "HMGET that deletes a hash's last expired field notifies it", false,
       [](Twin& t) {
         Script x(t);
         t.observe_events("KEA");
         x.run("HSET h1 a 1");
         x.run("HSET h2 a 1");
         x.expire_unreclaimed("h1", "a");
         x.expire_unreclaimed("h2", "a");
         const Step m = x.run("HMGET h1 a");  // [nil]; Redis: deletes h1 lazily, specified: hexpired, del
         x.run("HGET h2 a");                  // nil; Redis: hexpired, del
         const Step e = x.run("EXISTS h1");
         std::vector<std::string> events;
         if (m.server_events)
           for (const auto& ev : m.server_events->keyevent) events.push_back(ev.to_string());
         bool del = false;
         for (const auto& ev : events) del = del || ev.rfind("del@", 0) == 0;
         // The key went (lazy deletion: Redis) without its `del`.
         const bool defect = e.server == Reply::integer(0) && !del;
         std::string seen = Script::seen(m) + " with events [";
         for (std::size_t i = 0; i < events.size(); ++i) seen += (i ? ", " : "") + events[i];
         return x.finish(defect, seen + "]; " + Script::seen(e) + " (specified with a lazy deletion: hexpired, del)");
       }},
  };
  return v;
}

/// The example for row `id`; throws std::out_of_range when there is none.
inline const Example& known_issue_example(const std::string& id) {
  for (const auto& e : known_issue_examples())
    if (e.id == id) return e;
  throw std::out_of_range("no known issue example for '" + id + "'");
}

}  // namespace expirykit::examples
