// expirykit/model/cmd/random_read_commands.hpp: hash reads whose reply the server chooses:
// HRANDFIELD (random fields) and HSCAN (a cursor walk in hashtable order).
//
// The model cannot predict the server's choice, so these functions return the CANDIDATES and
// canonical.hpp's same_reply() checks that the server's reply is one the rules allow:
//   HRANDFIELD key               -> nil without live fields, else one live field name
//   HRANDFIELD key n [WITHVALUES] (n >= 0) -> min(n, live) DISTINCT live fields (with values)
//   HRANDFIELD key -n [WITHVALUES]         -> n live fields, repeats allowed; [] without live fields
//   HSCAN key 0 [COUNT c] [NOVALUES]       -> cursor "0" with every live field (with values), or
//                                           another cursor with some of them
// Never a logically expired field (valkey-hfe.md §10 [L]; live 9.1.2 and 8.0.6). Redis first
// deletes every logically expired field of the key on any HRANDFIELD (one `hexpired`, `del` when
// emptied, live 8.0.6); HSCAN deletes nothing on either server (live).
// The model's reply: for HRANDFIELD an array of (field, value) pairs of the live fields, or nil
// for a missing key; for HSCAN ["0", [field, value, ...]] with every live field.
#pragma once

#include <string>
#include <vector>

#include <expirykit/model/context.hpp>

namespace expirykit::model::cmd {

/// HRANDFIELD key [count [WITHVALUES]]: see the file comment. Errors: arity, "value is not an
/// integer" for count, "syntax error" for anything but WITHVALUES, WRONGTYPE.
inline Reply hrandfield(Context& c) {
  const Argv& a = c.argv;
  if (a.size() < 2 || a.size() > 4) return a.size() < 2 ? c.arity() : Reply::error(c.d.err.syntax);
  if (a.size() >= 3) {
    long long n = 0;
    if (!parse_ll(a[2], n)) return Reply::error(c.d.err.not_integer);
    if (a.size() == 4 && !iequals(a[3], "WITHVALUES")) return Reply::error(c.d.err.syntax);
    // Counts near LLONG_MIN with WITHVALUES are refused by both servers with a range error whose
    // text differs; not modelled.
    if (n < -(int64_t{1} << 40) || n > (int64_t{1} << 40)) throw Unmodelled("HRANDFIELD with a huge count");
  }
  bool wrong = false;
  Hash* h = lookup_hash(c, a[1], wrong);
  if (wrong) return c.wrongtype();
  if (!h) return Reply::nil();
  if (c.d.lazy_delete_on_read) {
    std::size_t gone = 0;
    for (auto it = h->fields.begin(); it != h->fields.end();) {
      if (it->second.expired(c.now)) {
        it = h->fields.erase(it);
        ++gone;
      } else {
        ++it;
      }
    }
    if (gone) {
      c.ks.counters().expired_fields += static_cast<int64_t>(gone);
      notify(c, "hexpired", a[1]);
      after_hash_write(c, a[1], false);
      if (c.ks.drop_if_empty(a[1])) return Reply::array({});
    }
  }
  std::vector<Reply> out;
  for (const auto& [name, f] : h->fields) {
    if (f.expired(c.now)) continue;
    out.push_back(Reply::string(name));
    out.push_back(Reply::string(f.value));
  }
  return Reply::array(std::move(out));
}

/// HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]: cursor 0 only (another cursor
/// depends on the server's table layout: Unmodelled), no MATCH (Unmodelled). NOVALUES exists on
/// both servers (live 9.1.2, 8.0.6).
inline Reply hscan(Context& c) {
  const Argv& a = c.argv;
  if (a.size() < 3) return c.arity();
  // The key is looked up first: a missing key answers an empty scan whatever the options, a
  // string WRONGTYPE (live 9.1.2 / 8.0.6: `HSCAN nokey 0 COUNT 0` gives ["0", []]).
  bool wrong = false;
  Hash* h = lookup_hash(c, a[1], wrong);
  if (wrong) return c.wrongtype();
  if (a[2] != "0") throw Unmodelled("HSCAN with a cursor other than 0");
  if (!h) return Reply::array({Reply::string("0"), Reply::array({})});
  bool novalues = false;
  for (std::size_t i = 3; i < a.size(); ++i) {
    if (iequals(a[i], "NOVALUES")) {
      novalues = true;
    } else if (iequals(a[i], "COUNT") && i + 1 < a.size()) {
      long long n = 0;
      if (!parse_ll(a[i + 1], n)) return Reply::error(c.d.err.not_integer);
      if (n < 1) return Reply::error(c.d.err.syntax);
      ++i;
    } else if (iequals(a[i], "MATCH")) {
      throw Unmodelled("HSCAN MATCH");
    } else {
      return Reply::error(c.d.err.syntax);
    }
  }
  std::vector<Reply> out;
  for (const auto& [name, f] : h->fields) {
    if (f.expired(c.now)) continue;
    out.push_back(Reply::string(name));
    if (!novalues) out.push_back(Reply::string(f.value));
  }
  return Reply::array({Reply::string("0"), Reply::array(std::move(out))});
}

}  // namespace expirykit::model::cmd
