// expirykit/gen/commands.hpp: RapidCheck generators of whole commands (resp::Argv).
//
//   auto g = gen::command(dialect);                // one command, weighted mix
//   auto s = gen::sequence(dialect, 40);           // up to 40 commands
//   auto p = gen::property_sequence(dialect, 40);  // what property::check_sequences runs
//
// Mostly valid commands of the modelled set (model/apply.hpp), on a few colliding keys and
// fields (gen/names.hpp) with times from gen/ttl.hpp; about one in ten is malformed on purpose:
// numfields off by one or zero, FIELDS missing, an unknown or repeated flag, conflicting flags,
// too few arguments. Commands the dialect lacks (HSETEX on Redis 7.4) are not generated.
// Every generated time is either far from "now" or clearly past, so a sequence is deterministic;
// the main property's property_sequence() adds setups with logically expired fields, RESTOREd
// from a payload whose deadlines have passed or expired during a server sleep (DEBUG SLEEP),
// deterministic too.
// Speed: each generator builds its parts (the generators it draws from) once, when it is made,
// and keeps of the Dialect only what it reads; a draw then runs RapidCheck's picks and little
// else (bench_checker "gen"). The picks, their order and their generators are what they were,
// so a seed gives the same sequences and the same shrinks.
#pragma once

#include <array>
#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include <expirykit/gen/names.hpp>
#include <expirykit/gen/once.hpp>
#include <expirykit/gen/ttl.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/model/dialect.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::gen {

using resp::Argv;

namespace detail {
inline void append(Argv& a, const std::vector<std::string>& more) { a.insert(a.end(), more.begin(), more.end()); }

/// rc::gen::inRange(lo, hi), built once for the program.
template <int lo, int hi>
const rc::Gen<int>& in_range() {
  static const rc::Gen<int> g = rc::gen::inRange(lo, hi);
  return g;
}

/// time_arg(t, d) for the four forms, by TimeArg{seconds, absolute}: {s, rel} (EX), {ms, rel}
/// (PX), {s, abs} (EXAT), {ms, abs} (PXAT).
using TimeGens = std::array<rc::Gen<std::string>, 4>;
inline std::shared_ptr<const TimeGens> time_gens(const model::Dialect& d) {
  return std::make_shared<const TimeGens>(TimeGens{time_arg(TimeArg{true, false}, d), time_arg(TimeArg{false, false}, d),
                                                   time_arg(TimeArg{true, true}, d), time_arg(TimeArg{false, true}, d)});
}

/// One of `alts`, picked by weight (the same draw and shrinking as before it was shared).
inline rc::Gen<Argv> weighted(std::vector<std::pair<std::size_t, rc::Gen<Argv>>> alts) {
  struct Parts {
    std::vector<std::pair<std::size_t, rc::Gen<Argv>>> alts;
    rc::Gen<std::size_t> pick;
  };
  std::size_t total = 0;
  for (const auto& [w, g] : alts) total += w;
  auto p = std::make_shared<const Parts>(Parts{std::move(alts), rc::gen::inRange<std::size_t>(0, total)});
  return full(exec_once([p] {
    std::size_t pick = *p->pick;
    for (const auto& [w, g] : p->alts) {
      if (pick < w) return *g;
      pick -= w;
    }
    return *p->alts.back().second;
  }));
}

/// numfields values at the edges of the servers' parsing (state/coverage.hpp "numfields"
/// table): 0, INT_MAX, INT_MAX + 1 (Redis HSETEX reads numfields as a long long but checks it
/// against INT_MAX), 2^63 - 1.
inline const std::vector<std::string>& extreme_numfields() {
  static const std::vector<std::string> v = {"0", "2147483647", "2147483648", "9223372036854775807"};
  return v;
}

/// "FIELDS n f1 .. fn" (with values when `values`), sometimes malformed when `mistakes`; when
/// `extremes`, 1 in 12 gives numfields one of extreme_numfields() (with the fields as drawn).
inline void fields_block(Argv& a, const std::vector<std::string>& fields, bool values, bool mistakes, bool extremes = true) {
  static const auto kinds = rc::gen::weightedElement<int>({{90, 0}, {3, 1}, {3, 2}, {2, 3}, {2, 4}});
  static const auto words = rc::gen::elementOf(std::vector<std::string>{"FIELD", "NX", "fields"});
  static const auto off_by_one = rc::gen::elementOf(std::vector<int>{-1, 1}), zero = rc::gen::elementOf(std::vector<int>{0, -1});
  static const auto extreme = rc::gen::elementOf(extreme_numfields());
  static const auto values_g = value();
  int n = static_cast<int>(fields.size());
  const int kind = mistakes ? *kinds : 0;
  if (kind == 4) return;  // FIELDS block missing entirely
  a.push_back(kind == 3 ? *words : "FIELDS");
  if (kind == 1) n += *off_by_one;
  if (kind == 2) n = *zero;
  const bool extreme_n = extremes && *in_range<0, 12>() == 0;
  a.push_back(extreme_n ? *extreme : std::to_string(n));
  for (const auto& f : fields) {
    a.push_back(f);
    if (values) a.push_back(*values_g);
  }
}
}  // namespace detail

/// One HEXPIRE-family command.
inline rc::Gen<Argv> hexpire_command(const model::Dialect& d) {
  return full(exec_once([times = detail::time_gens(d)] {
    using detail::in_range;
    static const auto keys = key_name();
    static const auto fields = field_list();
    static const auto extra = rc::gen::elementOf(std::vector<std::string>{"NX", "GT", "XX", "FOO"});
    const int which = *in_range<0, 4>();
    static const char* names[] = {"HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"};
    // which: seconds for 0 and 2, absolute for 2 and 3 (detail::time_gens' order)
    Argv a{names[which], *keys, *(*times)[static_cast<std::size_t>(which)]};
    const bool mistakes = *in_range<0, 10>() == 0;
    auto cond = *in_range<0, 5>();  // none, NX, XX, GT, LT: each a row of state/coverage.hpp
    static const char* conds[] = {"", "NX", "XX", "GT", "LT"};
    if (cond) a.push_back(conds[cond]);
    if (mistakes && *in_range<0, 2>()) a.push_back(*extra);
    detail::fields_block(a, *fields, false, mistakes);
    return a;
  }));
}

/// One HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME / HPERSIST command.
inline rc::Gen<Argv> field_query_command() {
  return full(exec_once([] {
    // HPERSIST twice: it is a row of state/coverage.hpp on its own, the other four share one.
    static const auto names =
        rc::gen::elementOf(std::vector<std::string>{"HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST", "HPERSIST"});
    static const auto keys = key_name();
    static const auto fields = field_list();
    Argv a{*names, *keys};
    // Drawn before the fields, as GCC's right-to-left arguments did when both were arguments.
    const bool mistakes = *detail::in_range<0, 12>() == 0;
    detail::fields_block(a, *fields, false, mistakes);
    return a;
  }));
}

/// One HSETEX command (key-level NX/XX are generated for every dialect: an error where absent).
inline rc::Gen<Argv> hsetex_command(const model::Dialect& d) {
  return full(exec_once([times = detail::time_gens(d)] {
    static const auto key_conds = rc::gen::weightedElement<int>({{85, 0}, {8, 1}, {7, 2}});
    static const auto extra = rc::gen::elementOf(std::vector<Argv>{{"FNX"}, {"EX", "10"}, {"KEEPTTL"}, {"PERSIST"}, {"FOO"}});
    Argv a{"HSETEX", *key_name()};
    const bool mistakes = *detail::in_range<0, 10>() == 0;
    std::vector<Argv> opts;
    const int key_cond = *key_conds;
    if (key_cond) opts.push_back({key_cond == 1 ? "NX" : "XX"});
    // Each FNX/FXX/none x expiry form is a row of state/coverage.hpp: drawn evenly.
    const int fcond = *detail::in_range<0, 3>();
    if (fcond) opts.push_back({fcond == 1 ? "FNX" : "FXX"});
    const int exp = *detail::in_range<0, 6>();
    static const char* exps[] = {"", "EX", "PX", "EXAT", "PXAT", "KEEPTTL"};
    if (exp == 5) opts.push_back({"KEEPTTL"});
    else if (exp) opts.push_back({exps[exp], *(*times)[static_cast<std::size_t>(exp - 1)]});  // EX, PX, EXAT, PXAT
    if (mistakes && *detail::in_range<0, 2>()) opts.push_back(*extra);
    if (opts.size() > 1 && *detail::in_range<0, 3>() == 0) std::swap(opts.front(), opts.back());  // any order
    for (const auto& o : opts) detail::append(a, o);
    detail::fields_block(a, *field_list(3), true, mistakes);
    return a;
  }));
}

/// One HGETEX command.
inline rc::Gen<Argv> hgetex_command(const model::Dialect& d) {
  return full(exec_once([times = detail::time_gens(d)] {
    static const auto extra = rc::gen::elementOf(std::vector<std::string>{"PERSIST", "KEEPTTL"});
    Argv a{"HGETEX", *key_name()};
    const bool mistakes = *detail::in_range<0, 10>() == 0;
    const int exp = *detail::in_range<0, 6>();  // each form a row of state/coverage.hpp
    static const char* exps[] = {"", "EX", "PX", "EXAT", "PXAT", "PERSIST"};
    if (exp == 5) a.push_back("PERSIST");
    else if (exp) detail::append(a, {exps[exp], *(*times)[static_cast<std::size_t>(exp - 1)]});  // EX, PX, EXAT, PXAT
    if (mistakes && *detail::in_range<0, 2>()) a.push_back(*extra);
    detail::fields_block(a, *field_list(), false, mistakes);
    return a;
  }));
}

/// The classic hash commands.
inline rc::Gen<Argv> hash_command() {
  return full(exec_once([] {
    static const auto forms =
        rc::gen::weightedElement<int>({{16, 0}, {4, 1}, {4, 2}, {8, 3}, {5, 4}, {6, 5}, {4, 6}, {7, 7}, {7, 8}, {4, 9}, {4, 10}, {2, 11}});
    static const auto exists_strlen = rc::gen::elementOf(std::vector<std::string>{"HEXISTS", "HSTRLEN"});
    static const auto getall = rc::gen::elementOf(std::vector<std::string>{"HGETALL", "HGETALL", "HKEYS", "HVALS"});
    static const auto incr = rc::gen::weightedOneOf<std::string>(
        {{9, rc::gen::map(rc::gen::inRange(-100, 100), [](int v) { return std::to_string(v); })},
         {1, rc::gen::elementOf(std::vector<std::string>{"1.5", "x", "9223372036854775807"})}});
    static const auto incr_float = rc::gen::elementOf(std::vector<std::string>{"0.5", "-1.25", "2", "1e2", "x"});
    const std::string k = *key_name();
    switch (*forms) {
      case 0: {
        Argv a{"HSET", k};
        for (const auto& f : *field_list(3)) detail::append(a, {f, *value()});
        if (*detail::in_range<0, 40>() == 0) a.pop_back();  // odd argument count
        return a;
      }
      case 1: {
        Argv a{"HMSET", k};
        for (const auto& f : *field_list(2)) detail::append(a, {f, *value()});
        return a;
      }
      case 2: return Argv{"HSETNX", k, *field_name(), *value()};
      case 3: return Argv{"HGET", k, *field_name()};
      case 4: {
        Argv a{"HMGET", k};
        detail::append(a, *field_list());
        return a;
      }
      case 5: {
        Argv a{"HDEL", k};
        detail::append(a, *field_list(3));
        return a;
      }
      case 6: return Argv{"HLEN", k};
      case 7: return Argv{*exists_strlen, k, *field_name()};
      case 8: return Argv{*getall, k};
      case 9: return Argv{"HINCRBY", k, *field_name(), *incr};
      case 10: return Argv{"HINCRBYFLOAT", k, *field_name(), *incr_float};
      default: return Argv{"HLEN"};  // arity error
    }
  }));
}

/// Key-level commands.
inline rc::Gen<Argv> key_command() {
  return full(exec_once([] {
    static const auto forms = rc::gen::weightedElement<int>({{4, 0}, {3, 1}, {3, 2}, {9, 3}, {2, 4}, {4, 5}, {2, 6}, {2, 7}, {2, 8}, {2, 9}});
    static const auto set_keys = rc::gen::weightedElement<std::string>({{6, "s1"}, {1, "h1"}});
    static const auto seconds = rc::gen::map(rc::gen::inRange(1000, 1000000), [](int v) { return std::to_string(v); });
    static const auto expire_seconds =
        rc::gen::weightedOneOf<std::string>({{8, rc::gen::map(rc::gen::inRange(1000, 1000000), [](int v) { return std::to_string(v); })},
                                             {2, rc::gen::elementOf(std::vector<std::string>{"0", "-1"})}});
    static const auto conds = rc::gen::elementOf(std::vector<std::string>{"NX", "XX", "GT", "LT"});
    static const auto ttl_pttl = rc::gen::elementOf(std::vector<std::string>{"TTL", "PTTL"});
    const std::string k = *key_name();
    switch (*forms) {
      case 0: return Argv{"DEL", k};
      case 1: return Argv{"EXISTS", k, *key_name()};
      case 2: return Argv{"TYPE", k};
      case 3: {
        Argv a{"SET", *set_keys, *value()};
        if (*detail::in_range<0, 3>() == 0) detail::append(a, {"EX", *seconds});
        return a;
      }
      case 4: return Argv{"GET", k};
      case 5: {
        Argv a{"EXPIRE", k, *expire_seconds};
        if (*detail::in_range<0, 3>() == 0) a.push_back(*conds);
        return a;
      }
      case 6: return Argv{"PERSIST", k};
      case 7: return Argv{*ttl_pttl, k};
      case 8: return Argv{"RENAME", k, *key_name()};
      default: {
        Argv a{"COPY", k, *key_name()};
        if (*detail::in_range<0, 2>()) a.push_back("REPLACE");
        return a;
      }
    }
  }));
}

/// The commands around hashes: HRANDFIELD (every count form), HSCAN 0, UNLINK, DBSIZE,
/// OBJECT ENCODING, MOVE / COPY ... DB to db 1, SWAPDB 0 1 (which brings keys back), DUMP,
/// RESTORE of a key's DUMP payload (named `@dump:<key>`, resolved by state::Twin), and now and
/// then FLUSHALL or FLUSHDB, SYNC, ASYNC or neither (volatile fields flushed, lazily freed,
/// must not come back nor expire later: issue 22).
inline rc::Gen<Argv> around_command() {
  return full(exec_once([] {
    static const auto forms =
        rc::gen::weightedElement<int>({{6, 0}, {3, 1}, {2, 2}, {1, 3}, {3, 4}, {2, 5}, {2, 6}, {1, 7}, {3, 8}, {4, 9}, {1, 10}});
    static const auto flushes = rc::gen::elementOf(std::vector<Argv>{
        {"FLUSHALL", "ASYNC"}, {"FLUSHALL", "SYNC"}, {"FLUSHALL"}, {"FLUSHDB", "ASYNC"}, {"FLUSHDB"}});
    static const auto counts = rc::gen::elementOf(std::vector<std::string>{"0", "1", "2", "5", "-1", "-3", "-6", "x"});
    static const auto withvalues = rc::gen::weightedElement<std::string>({{9, "WITHVALUES"}, {1, "VALUES"}});
    static const auto scan_counts = rc::gen::elementOf(std::vector<std::string>{"1", "10", "0"});
    static const auto move_dbs = rc::gen::weightedElement<std::string>({{9, "1"}, {1, "0"}});
    static const auto abs_ttls = rc::gen::elementOf(std::vector<std::string>{"1", "4102444800000"});
    static const auto rel_ttls = rc::gen::elementOf(std::vector<std::string>{"0", "0", "100000000"});
    const std::string k = *key_name();
    switch (*forms) {
      case 0: {
        Argv a{"HRANDFIELD", k};
        if (*detail::in_range<0, 4>()) {
          a.push_back(*counts);
          if (*detail::in_range<0, 2>()) a.push_back(*withvalues);
        }
        return a;
      }
      case 1: {
        Argv a{"HSCAN", k, "0"};
        if (*detail::in_range<0, 3>() == 0) detail::append(a, {"COUNT", *scan_counts});
        if (*detail::in_range<0, 2>()) a.push_back("NOVALUES");
        return a;
      }
      case 2: return Argv{"UNLINK", k, *key_name()};
      case 3: return Argv{"DBSIZE"};
      case 4: return Argv{"OBJECT", "ENCODING", k};
      case 5: return Argv{"MOVE", k, *move_dbs};
      case 6: {
        Argv a{"COPY", k, *key_name(), "DB", "1"};
        if (*detail::in_range<0, 2>()) a.push_back("REPLACE");
        return a;
      }
      case 7: return Argv{"SWAPDB", "0", "1"};
      case 8: return Argv{"DUMP", k};
      case 10: return *flushes;
      default: {
        // The payload of DUMP <source> taken when the command runs (state::Twin::dump_ref).
        // TTLs far or clearly past (ABSTTL 1), never near "now".
        const bool abs = *detail::in_range<0, 4>() == 0;
        Argv a{"RESTORE", *key_name(), abs ? *abs_ttls : *rel_ttls, std::string("@dump:") + k};
        if (*detail::in_range<0, 2>()) a.push_back("REPLACE");
        if (abs) a.push_back("ABSTTL");
        if (*detail::in_range<0, 6>() == 0) detail::append(a, {"IDLETIME", "10"});
        return a;
      }
    }
  }));
}

/// One command of the whole modelled set, weighted towards field TTLs.
inline rc::Gen<Argv> command(const model::Dialect& d) {
  // Weights: each command form x field state of state/coverage.hpp comes up in a default run
  // (HSETEX has 18 flag forms, HGETEX 6), with field TTLs still the bulk.
  std::vector<std::pair<std::size_t, rc::Gen<Argv>>> alts = {
      {18, hexpire_command(d)}, {12, field_query_command()}, {24, hash_command()}, {14, key_command()},
      {12, around_command()}};
  if (d.has_hsetex) alts.push_back({24, hsetex_command(d)});
  if (d.has_hgetex) alts.push_back({12, hgetex_command(d)});
  if (d.has_hgetdel)
    alts.push_back({6, exec_once([] {
                      Argv a{"HGETDEL", *key_name()};
                      const bool mistakes = *detail::in_range<0, 12>() == 0;  // before the fields (field_query_command)
                      detail::fields_block(a, *field_list(3), false, mistakes);
                      return a;
                    })});
  return detail::weighted(std::move(alts));
}

/// A command that gives existing or new fields a TTL of 1..20 ms: HPEXPIRE, HSETEX PX (where the
/// dialect has it) or HGETEX PX. Only for sequences that pause active expiry and wait on the
/// server clock past each such deadline before the next command (state/durability.hpp), so
/// that later commands meet logically expired, unreclaimed fields deterministically.
inline rc::Gen<Argv> near_ttl_command(const model::Dialect& d) {
  return full(exec_once([has_hsetex = d.has_hsetex, has_hgetex = d.has_hgetex] {
    static const auto forms = rc::gen::weightedElement<int>({{6, 0}, {3, 1}, {1, 2}});
    const std::string ms = std::to_string(*detail::in_range<1, 21>());
    const std::string k = *key_name();
    int which = *forms;
    if ((which == 1 && !has_hsetex) || (which == 2 && !has_hgetex)) which = 0;
    Argv a;
    if (which == 0) a = {"HPEXPIRE", k, ms};
    if (which == 1) a = {"HSETEX", k, "PX", ms};
    if (which == 2) a = {"HGETEX", k, "PX", ms};
    detail::fields_block(a, *field_list(3), which == 1, false, false);
    return a;
  }));
}

/// A sequence of 1..max_len commands where about one in `near_every` gives fields a TTL of a
/// few ms (near_ttl_command); otherwise as sequence().
inline rc::Gen<std::vector<Argv>> sequence_with_near_ttls(const model::Dialect& d, int max_len = 40, int near_every = 6) {
  auto one = rc::gen::weightedOneOf<Argv>({{static_cast<std::size_t>(near_every - 1), command(d)}, {1, near_ttl_command(d)}});
  return once(rc::gen::nonEmpty(rc::gen::resize(max_len, rc::gen::container<std::vector<Argv>>(one))));
}

/// The commands a transaction or the sequence script batches: the hash, field TTL and key
/// commands (not the database commands).
inline rc::Gen<Argv> batchable_command(const model::Dialect& d) {
  std::vector<std::pair<std::size_t, rc::Gen<Argv>>> alts = {
      {22, hexpire_command(d)}, {14, field_query_command()}, {28, hash_command()}, {6, key_command()}};
  if (d.has_hsetex) alts.push_back({16, hsetex_command(d)});
  if (d.has_hgetex) alts.push_back({8, hgetex_command(d)});
  return detail::weighted(std::move(alts));
}

/// One step of a sequence: mostly one command; 1 in 25 a MULTI ... EXEC block of 1..4 commands
/// (1 in 8 of them ends with DISCARD), 1 in 25 the sequence script (EVAL) or function (FCALL)
/// over 1..4 commands
/// (model/batch.hpp: time is frozen for the whole block in both).
inline rc::Gen<std::vector<Argv>> chunk(const model::Dialect& d) {
  struct Parts {
    rc::Gen<Argv> one;
    rc::Gen<std::vector<Argv>> batch;
  };
  auto p = std::make_shared<const Parts>(
      Parts{command(d), rc::gen::resize(4, once(rc::gen::nonEmpty(rc::gen::container<std::vector<Argv>>(batchable_command(d)))))});
  return full(exec_once([p] {
    static const auto kinds = rc::gen::weightedElement<int>({{23, 0}, {1, 1}, {1, 2}});
    const int kind = *kinds;
    if (kind == 0) return std::vector<Argv>{*p->one};
    auto inner = *p->batch;
    if (kind == 2)
      return std::vector<Argv>{*detail::in_range<0, 2>() ? model::sequence_eval(inner) : model::sequence_fcall(inner)};
    std::vector<Argv> out{{"MULTI"}};
    out.insert(out.end(), inner.begin(), inner.end());
    out.push_back({*detail::in_range<0, 8>() == 0 ? "DISCARD" : "EXEC"});
    return out;
  }));
}

/// A sequence of 1..max_len steps (chunk(): single commands, transactions, scripts), flattened
/// (lengths spread over the whole range from the first test on; shrinking removes any step,
/// not only the last ones, and simplifies the rest).
inline rc::Gen<std::vector<Argv>> sequence(const model::Dialect& d, int max_len = 40) {
  return once(rc::gen::map(rc::gen::nonEmpty(rc::gen::resize(max_len, rc::gen::container<std::vector<std::vector<Argv>>>(chunk(d)))),
                           [](std::vector<std::vector<Argv>> chunks) {
                             std::vector<Argv> out;
                             for (auto& c : chunks) out.insert(out.end(), std::make_move_iterator(c.begin()), std::make_move_iterator(c.end()));
                             return out;
                           }));
}

/// How a stale set-up (setup_prefix) makes its logically expired fields.
enum class StaleBy {
  /// `RESTORE key 0 @stale:<fields>`: a payload whose field deadlines have passed, which
  /// state::Twin makes once per server (state/stale_templates.hpp); no wait at all.
  restore,
  /// HPEXPIRE of 1 ms and a DEBUG SLEEP of 2 ms: the fields expire as time passes.
  sleep,
};

/// The start of a main-property sequence: keys in every state for the commands after it.
/// On 1..3 of the keys h1, h2, h3: HSET of 2..4 of the fields a..d, then a far TTL (HPEXPIRE)
/// on some; with `stale`, others (at least one, always a) logically expired; and s1 SET to a
/// string. `stale` also starts with DEBUG SET-ACTIVE-EXPIRE 0: active expiry stays off for the
/// rest of the sequence, so the later commands meet logically expired, unreclaimed fields;
/// Redis's lazy deletion and Valkey's overwrite rules decide what they see (model/keyspace.hpp).
/// The stale fields are made `by`:
///  - StaleBy::restore: the key starts as `RESTORE key 0 @stale:a,c` (fields a and c, value
///    "stale", deadlines in the past), then HSET of its other fields. Needs state::Twin (or a
///    runner that resolves the reference: state/stale_templates.hpp).
///  - StaleBy::sleep: those fields get a TTL of 1 ms after the HSET, and the prefix ends with
///    DEBUG SLEEP for one millisecond more (2 ms): the server (single-threaded) runs nothing
///    meanwhile, so every short deadline has passed, by at least a millisecond, before the next
///    command reads the clock, whatever the machine's speed. The sleeps were about half of the
///    checker's wall time before the RESTORE set-ups, and with TTLs of 1..3 ms (a sleep of 2..4
///    ms) still a sixth of it (bench/RESULTS.md 9.9): the TTL is 1 ms.
/// The DEBUG commands are outside the model: state::Twin runs them on the server only (they name
/// no key). Needs DEBUG (enable-debug-command), as catch2::TwinFixture does.
inline rc::Gen<std::vector<Argv>> setup_prefix(const model::Dialect& d, bool stale, StaleBy by = StaleBy::sleep) {
  struct Parts {
    rc::Gen<std::string> far;
    rc::Gen<int> fate;
  };
  auto p = std::make_shared<const Parts>(Parts{time_arg(TtlClass::far, TimeArg{false, false}, d),
                                               rc::gen::weightedElement<int>({{1, 0}, {stale ? 2u : 0u, 1}, {stale ? 1u : 2u, 2}})});
  return full(exec_once([p, stale, by] {
    std::vector<Argv> out;
    if (stale) out.push_back({"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
    static const std::vector<std::string> keys = {"h1", "h2", "h3"}, fields = {"a", "b", "c", "d"};
    const bool restore = stale && by == StaleBy::restore;
    const int nkeys = *detail::in_range<1, 4>();
    for (int k = 0; k < nkeys; ++k) {
      const std::string& key = keys[static_cast<std::size_t>(k)];
      const int nf = *detail::in_range<2, 5>();
      Argv hset{"HSET", key}, near{"HPEXPIRE", key, "1", "FIELDS", "0"},
          far{"HPEXPIRE", key, *p->far, "FIELDS", "0"};
      std::string restored;  // StaleBy::restore: the stale fields, "a,c"
      for (int f = 0; f < nf; ++f) {
        const std::string& name = fields[static_cast<std::size_t>(f)];
        // per field: 0 persistent, 1 logically expired (stale only; the first one always), 2 far TTL
        const int fate = stale && f == 0 ? 1 : *p->fate;
        if (restore && fate == 1) {
          restored += (restored.empty() ? "" : ",") + name;
          continue;
        }
        detail::append(hset, {name, *value()});
        if (fate) (fate == 1 ? near : far).push_back(name);
      }
      if (!restored.empty()) out.push_back({"RESTORE", key, "0", std::string("@stale:") + restored});
      if (hset.size() > 2) out.push_back(hset);
      for (Argv* a : {&near, &far})
        if (a->size() > 5) {
          (*a)[4] = std::to_string(a->size() - 5);
          out.push_back(*a);
        }
    }
    out.push_back({"SET", "s1", *value()});
    if (stale && !restore) out.push_back({"DEBUG", "SLEEP", "0.002"});  // 1 ms past the short TTLs
    return out;
  }));
}

/// The main property's sequences (property::check_sequences): sequence(d, max_len) after a
/// setup_prefix() in 4 cases of 5, stale (logically expired fields) in 3 of them, so that every
/// command form meets every field state (state/coverage.hpp). With StaleBy::restore, 5 of those
/// 6 stale set-ups in 10 RESTORE their stale fields and 1 lets them expire in a DEBUG SLEEP
/// (the path a server takes when time passes, kept at a tenth of the sequences); with
/// StaleBy::sleep (a runner that cannot resolve `@stale:`, such as the cluster twin) all 6 sleep.
/// Other uses (durability, differential) keep sequence(), whose times all stay clear of "now".
inline rc::Gen<std::vector<Argv>> property_sequence(const model::Dialect& d, int max_len = 40,
                                                    StaleBy by = StaleBy::restore) {
  struct Parts {
    rc::Gen<int> start;
    rc::Gen<std::vector<Argv>> live, restored, slept, body;
  };
  auto p = std::make_shared<const Parts>(Parts{full(rc::gen::inRange(0, 10)), setup_prefix(d, false),
                                               setup_prefix(d, true, by), setup_prefix(d, true, StaleBy::sleep),
                                               sequence(d, max_len)});
  return exec_once([p] {
    // 0-1: empty keyspace, 2-3: live set-up, 4-8: stale set-up made `by`, 9: stale set-up by sleep
    const int start = *p->start;
    std::vector<Argv> out;
    if (start >= 2) out = start < 4 ? *p->live : start < 9 ? *p->restored : *p->slept;
    auto body = *p->body;
    out.insert(out.end(), std::make_move_iterator(body.begin()), std::make_move_iterator(body.end()));
    return out;
  });
}

}  // namespace expirykit::gen
