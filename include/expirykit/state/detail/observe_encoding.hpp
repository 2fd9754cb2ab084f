// expirykit/state/detail/observe_encoding.hpp (internal to state::Twin): encodings as a step
// observes them. OBJECT ENCODING is a reply like any other (state/replies.hpp); the encoding of
// every hash is compared with the state (Twin::compare_state: state/keyspace_diff.hpp). One known
// issue shows only here: valkey-script-string-not-int-encoded (an integer string a script SET has
// OBJECT ENCODING embstr where the model says int), so the twin remembers the strings the kit's
// sequence script wrote, and excuses that reply on a server the row covers
// (script_string_excuse: state/known_divergence.hpp).
#pragma once

#include <set>
#include <string>

#include <expirykit/model/model.hpp>
#include <expirykit/state/known_divergence.hpp>
#include <expirykit/state/detail/model_step.hpp>
#include <expirykit/state/step.hpp>
#include <expirykit/state/twin_options.hpp>

namespace expirykit::state::detail {

/// After the first attempt at step `s`, when it disagrees: an OBJECT ENCODING reply that
/// valkey-script-string-not-int-encoded explains on o.server (once a script wrote strings,
/// `script_wrote_strings`) names the row in s.known_issue; the step is ok when its events and
/// invalidations agree.
inline void excuse_script_string(const TwinOptions& o, bool script_wrote_strings, Step& s) {
  if (s.ok || !o.server) return;
  if (auto id = script_string_excuse(*o.server, s, script_wrote_strings); !id.empty()) {
    s.known_issue = id;
    s.ok = s.events_diff.empty() && s.tracking_diff.empty();
  }
}

/// The keys the kit's sequence script `mc` SET (whatever the step's verdict), into `strings`.
inline void note_script_strings(const ModelCommand& mc, std::set<std::string>& strings) {
  if (!mc.in_script) return;
  for (const auto& c : *mc.batch)
    if (c.size() > 1 && model::upper(c[0]) == "SET") strings.insert(c[1]);
}

}  // namespace expirykit::state::detail
