// expirykit/model/batch.hpp: several commands executed at one frozen time: MULTI/EXEC and the
// kit's sequence script (EVAL).
//
//   model::apply_batch(ks, d, {{"HSET","h","a","1"}, {"HPEXPIRE","h","5","FIELDS","1","a"}}, now)
//     -> [1, [1]]
//   EVAL <model::kSequenceScript> 0 4 HSET h a 1 6 HPEXPIRE h 5 FIELDS 1 a   (same reply)
//
// Time inside a transaction or a script is frozen at its start on both servers: a field given
// HPEXPIRE 5 and read after 50 ms of work in the same EXEC or EVAL is still there
// (valkey-hfe.md §14 [L], redis-hfe.md §6 [V]); so every command of a batch is applied at one
// `now`. A command with a wrong number of arguments for the server's command table is refused
// when queued (MULTI: "ERR wrong number of arguments for '<cmd>' command", then EXECABORT) or
// when called from a script ("ERR Wrong number of args calling command from script" on Valkey,
// "... calling Redis command from script" on Redis; live 9.1.2 / 8.0.6).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <expirykit/model/apply.hpp>

namespace expirykit::model {

/// The server command table's arity of a modelled command: n > 0 exactly n arguments (the name
/// included), n < 0 at least -n; 0 for a name the model does not know. (COMMAND INFO on Valkey
/// 9.1.2 and Redis 8.0.6 agree for all of these.)
inline int command_arity(const std::string& name) {
  static const std::map<std::string, int> t = {
      {"HSET", -4},       {"HMSET", -4},       {"HSETNX", 4},        {"HGET", 3},           {"HMGET", -3},
      {"HDEL", -3},       {"HLEN", 2},         {"HEXISTS", 3},       {"HGETALL", 2},        {"HKEYS", 2},
      {"HVALS", 2},       {"HSTRLEN", 3},      {"HINCRBY", 4},       {"HINCRBYFLOAT", 4},   {"HEXPIRE", -6},
      {"HPEXPIRE", -6},   {"HEXPIREAT", -6},   {"HPEXPIREAT", -6},   {"HTTL", -5},          {"HPTTL", -5},
      {"HEXPIRETIME", -5}, {"HPEXPIRETIME", -5}, {"HPERSIST", -5},   {"HSETEX", -6},        {"HGETEX", -5},
      {"HGETDEL", -5},    {"DEL", -2},         {"EXISTS", -2},       {"TYPE", 2},           {"SET", -3},
      {"GET", 2},         {"EXPIRE", -3},      {"PEXPIRE", -3},      {"EXPIREAT", -3},      {"PEXPIREAT", -3},
      {"PERSIST", 2},     {"TTL", 2},          {"PTTL", 2},          {"RENAME", 3},         {"COPY", -3},
      {"UNLINK", -2},     {"DBSIZE", 1},       {"OBJECT", -2},       {"MOVE", 3},           {"SWAPDB", 3},
      {"HRANDFIELD", -2}, {"HSCAN", -3},       {"DUMP", 2},          {"RESTORE", -4},       {"FLUSHALL", -1},
      {"FLUSHDB", -1},
  };
  auto it = t.find(upper(name));
  return it == t.end() ? 0 : it->second;
}

/// True if `argv` passes the command table's arity check (see command_arity).
inline bool arity_ok(const Argv& argv) {
  if (argv.empty()) return false;
  const int a = command_arity(argv[0]);
  const auto n = static_cast<int>(argv.size());
  return a > 0 ? n == a : (a < 0 && n >= -a);
}

/// The error a script gets for a call failing the command-table arity (see the file comment).
inline std::string script_arity_error(const Dialect& d) {
  return d.flavor == "redis" ? "ERR Wrong number of args calling Redis command from script"
                             : "ERR Wrong number of args calling command from script";
}

/// A reply as a script returns it: Lua numbers are doubles, so an integer reply comes back
/// rounded to a double and converted to an integer again (redis.io/docs/latest/develop/
/// programmability/lua-api "Lua to RESP2 type conversion"); values of 2^63 or more after
/// rounding come back as LLONG_MIN (live 9.1.2 / 8.0.6: HINCRBY to 9223372036854775707 inside
/// the sequence script replies -9223372036854775808). Arrays element by element.
inline Reply through_lua(const Reply& r) {
  if (r.is_integer()) {
    const double x = static_cast<double>(r.as_integer());
    if (x >= 9223372036854775807.0 || x < -9223372036854775807.0) return Reply::integer(std::numeric_limits<long long>::min());
    return Reply::integer(static_cast<long long>(x));
  }
  if (r.is_array()) {
    std::vector<Reply> out;
    for (const auto& e : r.elements()) out.push_back(through_lua(e));
    return Reply::array(std::move(out));
  }
  return r;
}

/// Applies `cmds` in order at one `now_ms`; returns the array of their replies. In a script
/// (`in_script`), a command failing the table arity gets script_arity_error() and the others
/// still run. Throws Unmodelled if any command is not modelled (checked before applying any).
inline Reply apply_batch(Keyspace& ks, const Dialect& d, const std::vector<Argv>& cmds, int64_t now_ms,
                         bool in_script = false) {
  for (const auto& c : cmds)
    if (c.empty() || !is_modelled(c[0], d)) throw Unmodelled("batch with " + (c.empty() ? std::string("()") : c[0]));
  std::vector<Reply> out;
  for (const auto& c : cmds) {
    if (in_script && !arity_ok(c)) {
      out.push_back(Reply::error(script_arity_error(d)));
      continue;
    }
    out.push_back(in_script ? through_lua(apply(ks, d, c, now_ms)) : apply(ks, d, c, now_ms));
  }
  return Reply::array(std::move(out));
}

/// The kit's sequence script: runs the commands packed in ARGV ("n arg1 .. argn" per command,
/// KEYS unused) with redis.pcall and returns their replies as an array. Time is frozen for the
/// whole script, so it models like a MULTI/EXEC block (apply_batch with in_script).
inline const std::string& sequence_script() {
  static const std::string s =
      "local out = {} local i = 1 while i <= #ARGV do local n = tonumber(ARGV[i]) local cmd = {} "
      "for j = 1, n do cmd[j] = ARGV[i + j] end out[#out + 1] = redis.pcall(unpack(cmd)) i = i + n + 1 end "
      "return out";
  return s;
}

/// The same as a function (FUNCTION LOAD this library; FCALL expirykit_seq 0 ...): functions run
/// with time frozen like scripts (redis.io/docs/latest/develop/programmability/functions-intro).
inline const std::string& sequence_function_library() {
  static const std::string s =
      "#!lua name=expirykit\nredis.register_function('expirykit_seq', function(keys, args) local out = {} "
      "local i = 1 while i <= #args do local n = tonumber(args[i]) local cmd = {} for j = 1, n do cmd[j] = "
      "args[i + j] end out[#out + 1] = redis.pcall(unpack(cmd)) i = i + n + 1 end return out end)";
  return s;
}

/// FCALL argv running the library's expirykit_seq over `cmds` (load the library first:
/// state::Twin does on first use).
inline Argv sequence_fcall(const std::vector<Argv>& cmds) {
  Argv a{"FCALL", "expirykit_seq", "0"};
  for (const auto& c : cmds) {
    a.push_back(std::to_string(c.size()));
    a.insert(a.end(), c.begin(), c.end());
  }
  return a;
}

/// EVAL argv running sequence_script() over `cmds`.
inline Argv sequence_eval(const std::vector<Argv>& cmds) {
  Argv a{"EVAL", sequence_script(), "0"};
  for (const auto& c : cmds) {
    a.push_back(std::to_string(c.size()));
    a.insert(a.end(), c.begin(), c.end());
  }
  return a;
}

/// The commands packed in an EVAL of sequence_script() or an FCALL of expirykit_seq (with 0
/// keys), or nullopt for any other EVAL / FCALL or a malformed packing.
inline std::optional<std::vector<Argv>> sequence_eval_commands(const Argv& a) {
  if (a.size() < 3 || a[2] != "0") return std::nullopt;
  const std::string u = upper(a[0]);
  if (!(u == "EVAL" && a[1] == sequence_script()) && !(u == "FCALL" && a[1] == "expirykit_seq")) return std::nullopt;
  std::vector<Argv> out;
  for (std::size_t i = 3; i < a.size();) {
    long long n = 0;
    if (!parse_ll(a[i], n) || n < 1 || static_cast<std::size_t>(n) > a.size() - i - 1) return std::nullopt;
    out.emplace_back(a.begin() + static_cast<std::ptrdiff_t>(i) + 1, a.begin() + static_cast<std::ptrdiff_t>(i + 1 + n));
    i += static_cast<std::size_t>(n) + 1;
  }
  return out;
}

}  // namespace expirykit::model
