// expirykit/property/durable_property.hpp: the durability property: random sequences on a primary
// with a replica and AOF on, then every copy of the data checked against the others and the
// model (property/durable_sequence.hpp), with shrinking and a replay script.
//
//   auto r = property::check_durable_sequences(twin, copies, {60, 30});   // sequences, max length
//   if (!r.ok) FAIL(r.report);   // seed, case, shrunk script, the copy and stage that differed
//
// Each case draws, besides its commands (gen::sequence, the same names, flags and TTL classes as
// suites/properties, adversarial names included):
//   - active expiry paused on the primary (1 in 3): the commands then include TTLs of a few ms
//     (gen::sequence_with_near_ttls) and the runner waits past them, so later commands meet
//     logically expired fields; resumed and compared again after reclamation;
//   - the AOF rewritten before it is reloaded: not (2 in 4), with the RDB preamble (1 in 4), as
//     commands without it (1 in 4);
//   - the primary restarted as a new process from its AOF (1 in 12; 0.06-0.1 s each, its replicas
//     told to reconnect at once: process::Relink::now) instead of DEBUG LOADAOF.
//   - the protocol of the commands' connection: RESP2 or RESP3 (property_protocols():
//     EXPIRYKIT_PROTOCOL, both by default with hiredis 1.1 or later; shrinks towards RESP2), or
//     one of DurableOptions::protocols when set.
// Budget, seed and re-run as property/property.hpp (EXPIRYKIT_PROP_SCALE, RC_PARAMS="seed=N").
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include <expirykit/gen/commands.hpp>
#include <expirykit/property/durable_sequence.hpp>
#include <expirykit/property/property.hpp>

namespace expirykit::property {

using resp::Argv;
using state::Cells;
using state::Snapshot;
using state::Step;
using state::Twin;

/// A random DurableCase with the weights of the file comment.
inline rc::Gen<DurableCase> durable_case(std::vector<int> protocols = property_protocols()) {
  return rc::gen::exec([protocols] {
    // Drawn so that shrinking (towards 0) leads to the plainest case: no pause, no rewrite, no
    // restart (a restart costs the most: 0.06-0.1 s).
    DurableCase c;
    c.pause_active_expiry = *gen::full(rc::gen::inRange(0, 3)) == 2;
    const int r = *gen::full(rc::gen::inRange(0, 4));
    c.rewrite = r < 2 ? AofRewrite::none : r == 2 ? AofRewrite::rdb_preamble : AofRewrite::commands;
    c.restart_primary = *gen::full(rc::gen::inRange(0, 12)) == 11;
    c.protocol = draw_protocol(protocols);
    return c;
  });
}

inline PropertyResult check_durable_sequences(Twin& twin, Copies& copies, PropertyBudget budget = {60, 30},
                                              DurableOptions opt = {}) {
  const model::Dialect d = twin.dialect();
  if (!budget.sent) budget.sent = [&twin] { return twin.sent(); };  // crash triage (property.hpp)
  const auto with_near_ttls = gen::sequence_with_near_ttls(d, budget.max_len), plain = gen::sequence(d, budget.max_len);
  check_protocols(opt.protocols, "DurableOptions::protocols");
  const auto case_gen = durable_case(opt.protocols.empty() ? property_protocols() : opt.protocols);
  return check_cases("every copy of the data agrees with " + d.name + "'s model", budget, [&] {
    const DurableCase dc = *case_gen;
    const auto cmds = dc.pause_active_expiry ? *with_near_ttls : *plain;
    return run_durable_sequence(twin, copies, cmds, dc, opt);
  });
}

}  // namespace expirykit::property
