// expirykit/model/resp3.hpp: the reply a modelled command gives on a RESP3 connection (HELLO 3),
// from the one it gives on RESP2.
//
// The model computes RESP2 replies (model/apply.hpp). On RESP3 a modelled command sends the same
// data with these differences only:
//   - HGETALL: a map (RESP3 `%`) of the fields and values, not an array;
//   - HRANDFIELD key count WITHVALUES: an array of [field, value] pairs, not one flat array;
//   - EXEC: each queued command's reply in its own RESP3 form;
//   - nil: RESP3's null (`_`), which resp::Reply keeps as nil;
//   - a script (EVAL, EVALSHA, FCALL, FCALL_RO): as on RESP2. Its redis.call / redis.pcall read
//     RESP2 replies unless the script calls redis.setresp(3), so an HGETALL inside the kit's
//     sequence script stays flat, and Lua true / false come back as 1 / nil.
// Sources: the reply sections of redis.io/docs/latest/commands/hgetall and .../hrandfield, and
// the same check on live servers (valkey-cli -3 --no-raw on Valkey 9.1.2, Redis 8.0.6 and Redis
// 8.6.3, 2026-12-06: HGETALL, HRANDFIELD -3 / 2 WITHVALUES, HMGET and HGETEX with a missing
// field, HSCAN, HINCRBYFLOAT (a string on both), EVAL returning pcall replies and booleans,
// MULTI / EXEC: every other modelled reply came back as on RESP2).
//
// resp3_form(argv, reply, batch) is the first direction; resp2_form(argv, reply, batch) the
// inverse, for a reply read on RESP3 (its RESP3 types dropped, HRANDFIELD's pairs made flat),
// which the model's RESP2 reply is compared with. A RESP3 reply `r` has the RESP3 form its
// command prescribes iff same_resp3(resp3_form(argv, resp2_form(argv, r)), r) (state::Twin checks
// that on a RESP3 connection: Step::resp3_diff).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <expirykit/model/apply.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::model {

namespace detail {
inline bool is_hrandfield_withvalues(const Argv& a) {
  return a.size() == 4 && upper(a[0]) == "HRANDFIELD" && upper(a[3]) == "WITHVALUES";
}
}  // namespace detail

/// The RESP3 reply of `argv` whose RESP2 reply is `r2` (file comment). `batch`: an EXEC's queued
/// commands (each element of its reply converted by its command); ignored for other commands.
/// A reply of another shape than the command's (an error, nil, an odd-length HGETALL array) is
/// returned unchanged.
inline Reply resp3_form(const Argv& argv, const Reply& r2, const std::vector<Argv>& batch = {}) {
  if (argv.empty() || !r2.is_array()) return r2;
  const std::string u = upper(argv[0]);
  if (u == "HGETALL" && r2.size() % 2 == 0) return Reply::map(r2.elements());
  if (detail::is_hrandfield_withvalues(argv) && r2.size() % 2 == 0) {
    std::vector<Reply> pairs;
    for (std::size_t i = 0; i < r2.size(); i += 2) pairs.push_back(Reply::array({r2[i], r2[i + 1]}));
    return Reply::array(std::move(pairs));
  }
  if (u == "EXEC" && r2.size() == batch.size()) {
    std::vector<Reply> out;
    for (std::size_t i = 0; i < batch.size(); ++i) out.push_back(resp3_form(batch[i], r2[i]));
    return Reply::array(std::move(out));
  }
  return r2;
}

/// The RESP2 reply of `argv` whose RESP3 reply is `r3`: its RESP3 types dropped (resp/reply.hpp
/// keeps the RESP2 type beside them) and HRANDFIELD WITHVALUES's [field, value] pairs made one
/// flat array. `batch` as for resp3_form. A reply of another shape is only stripped of its
/// RESP3 types.
inline Reply resp2_form(const Argv& argv, const Reply& r3, const std::vector<Argv>& batch = {}) {
  if (argv.empty() || !r3.is_array()) return r3.without_resp3();
  const std::string u = upper(argv[0]);
  if (detail::is_hrandfield_withvalues(argv)) {
    std::vector<Reply> flat;
    for (const auto& p : r3.elements()) {
      if (!p.is_array() || p.size() != 2) return r3.without_resp3();
      flat.push_back(p[0].without_resp3());
      flat.push_back(p[1].without_resp3());
    }
    return Reply::array(std::move(flat));
  }
  if (u == "EXEC" && r3.size() == batch.size()) {
    std::vector<Reply> out;
    for (std::size_t i = 0; i < batch.size(); ++i) out.push_back(resp2_form(batch[i], r3[i]));
    return Reply::array(std::move(out));
  }
  return r3.without_resp3();
}

/// "" when `r3`, read on a RESP3 connection for `argv`, has the RESP3 form its command prescribes
/// (file comment); else one line: "RESP3 form: server <r3>, expected <form>" (Reply::oneline,
/// which shows RESP3 types: {k => v} for a map).
inline std::string resp3_difference(const Argv& argv, const Reply& r3, const std::vector<Argv>& batch = {}) {
  const Reply want = resp3_form(argv, resp2_form(argv, r3, batch), batch);
  if (same_resp3(want, r3)) return {};
  return "RESP3 form: server " + r3.oneline() + ", expected " + want.oneline();
}

}  // namespace expirykit::model
