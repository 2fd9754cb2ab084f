// expirykit/state/step.hpp: one command as state::Twin ran it on the server and in the model,
// with what each side said it emitted (replies, keyspace notifications, tracking invalidations).
#pragma once

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <expirykit/model/canonical.hpp>
#include <expirykit/model/effects.hpp>
#include <expirykit/model/tracking.hpp>
#include <expirykit/observe/keyspace_events.hpp>
#include <expirykit/resp/client.hpp>

namespace expirykit::state {

using resp::Argv;
using resp::Reply;

/// One command run on both sides.
struct Step {
  Argv argv;
  Reply server;
  Reply model;              ///< meaningless when `unmodelled` is set
  std::string unmodelled;   ///< the reason, if the model does not cover this command
  /// The commands an EXEC or the sequence script ran (model/batch.hpp); empty otherwise.
  std::vector<Argv> batch;
  /// The TIME window around the command (server clock, Unix ms); both 0 when no TIME was read:
  /// a step the twin did not send (a crash row held it back) or a cluster step the twin did not
  /// run (CROSSSLOT, a block EXEC refuses: state/cluster_twin.hpp).
  int64_t before_ms = 0, after_ms = 0;
  int64_t model_at_ms = 0;               ///< the millisecond of the window the model's reply is from
  bool ok = false;  ///< replies match (and their RESP3 form on RESP3), and events and invalidations when observed (false when unmodelled and not adopted)
  std::vector<model::Event> model_events;          ///< what the model says the command emitted
  std::optional<observe::Observed> server_events;  ///< what the subscriber saw (observe_events)
  std::string events_diff;                         ///< "" when the events agree
  model::Invalidations model_invalidations;        ///< what the model says tracking sends
  std::optional<model::Invalidations> server_invalidations;  ///< what was sent (observe_tracking)
  std::string tracking_diff;                       ///< "" when they agree
  /// Set when the step met a known issue of the server under test (Twin::Options::server;
  /// known_issues/table.hpp id): its events differ as the row says, or the model replayed the
  /// row's defect to agree with the server (state/known_divergence.hpp). The step counts as ok.
  std::string known_issue;
  /// Set when the server, covered by this known issue, behaved as specified where the issue's
  /// defect would have shown: the fix is to be recorded (state/known_divergence.hpp).
  std::string fixed_issue;
  /// The protocol the twin's connection spoke for this step (2 or 3: Twin::use_protocol).
  int protocol = 2;
  /// On RESP3: the reply as it arrived, RESP3 types included (`server` is its RESP2 form,
  /// model::resp2_form, which the model's reply is compared with).
  std::optional<Reply> server_resp3;
  /// On RESP3, for a modelled command: "" when the reply had the RESP3 form its command
  /// prescribes (model/resp3.hpp: model::resp3_difference), else that difference (the step fails).
  std::string resp3_diff;

  /// Whether `model` stands for every reply the server may draw at random, not for one: for
  /// HRANDFIELD and HSCAN an array reply holds the live fields and values an allowed reply is
  /// drawn from (model::allowed_random_reply, model/canonical.hpp). Any other reply (an error,
  /// nil, QUEUED, a step not sent) is one reply. Inside an EXEC's or a script's reply the
  /// elements of such commands are candidates too (model_text() marks them).
  bool model_reply_is_candidates() const { return model.is_array() && unmodelled.empty() && model::draws_reply(argv); }

  /// `model` as text by `fmt` (a Reply to a string), with what stands for candidates marked "any
  /// reply drawn from ...": the whole reply (model_reply_is_candidates()), or, in an EXEC's or a
  /// script's array (one element per command of `batch`), the array elements of HRANDFIELD and
  /// HSCAN commands, the array then on one line: "[(integer) 2, any reply drawn from [\"a\", \"1\"]]".
  template <class Fmt>
  std::string model_text(Fmt fmt) const {
    if (model_reply_is_candidates()) return "any reply drawn from " + fmt(model);
    if (unmodelled.empty() && model.is_array() && !batch.empty() && model.size() == batch.size() &&
        std::any_of(batch.begin(), batch.end(), [](const Argv& a) { return model::draws_reply(a); })) {
      std::string out = "[";
      for (std::size_t i = 0; i < batch.size(); ++i) {
        if (i) out += ", ";
        const bool drawn = model::draws_reply(batch[i]) && model[i].is_array();
        out += (drawn ? "any reply drawn from " : "") + fmt(model[i]);
      }
      return out + "]";
    }
    return fmt(model);
  }

  /// Multi-line report: the command as a valkey-cli line, both replies.
  std::string describe() const {
    std::ostringstream os;
    os << resp::cli_line(argv) << "\n  server: " << indent(server.to_string());
    if (server_resp3) os << "\n  server (RESP3, as it arrived): " << server_resp3->oneline();
    os << "\n  model:  "
       << (!unmodelled.empty() ? "(unmodelled: " + unmodelled + ")"
                               // the whole reply as valkey-cli shows it; an EXEC's elements on one line
                               : model_text([&](const Reply& r) { return &r == &model ? indent(r.to_string()) : r.oneline(); }))
       << "\n  at server time [" << before_ms << ", " << after_ms << "] ms";
    if (!known_issue.empty() && events_diff.empty())
      os << "\n  KNOWN ISSUE " << known_issue << " (known_issues/table.hpp): the model replayed its defect";
    if (!fixed_issue.empty())
      os << "\n  FIXED " << fixed_issue << " (known_issues/table.hpp): the server behaved as specified";
    if (server_events) {
      os << "\n  events: server " << model::to_string(server_events->keyevent) << ", model "
         << model::to_string(model_events);
      if (!events_diff.empty())
        os << "\n  EVENTS DIFFER" << (known_issue.empty() ? "" : " (KNOWN ISSUE " + known_issue + ")") << ": "
           << events_diff;
    }
    if (!resp3_diff.empty()) os << "\n  RESP3 DIFFERS: " << resp3_diff;
    if (server_invalidations) {
      os << "\n  tracking invalidations: server " << model::to_string(*server_invalidations) << ", model "
         << model::to_string(model_invalidations);
      if (!tracking_diff.empty()) os << "\n  TRACKING DIFFERS: " << tracking_diff;
    }
    return os.str();
  }
  static std::string indent(const std::string& s) {
    std::string out;
    for (char ch : s) {
      out += ch;
      if (ch == '\n') out += "          ";
    }
    return out;
  }
};

}  // namespace expirykit::state
