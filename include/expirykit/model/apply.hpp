// expirykit/model/apply.hpp: the model's single entry point.
//
//   resp::Reply apply(Keyspace& ks, const Dialect& d, const resp::Argv& argv, int64_t now_ms);
//
// Computes the reply the server of dialect `d` is expected to give to `argv` when it executes it
// at absolute Unix time `now_ms` (milliseconds, from the server's TIME), and mutates `ks` the way
// the server mutates its data. Errors are Replies (exact dialect text), never exceptions.
//
// Throws model::Unmodelled for a command outside the model (unknown name, HSETEX/HGETEX/HGETDEL
// on a dialect without them, SET IFEQ, HSCAN MATCH, ...): the model never guesses.
//
// Commands: HSET HMSET HSETNX HGET HMGET HDEL HLEN HEXISTS HGETALL* HKEYS* HVALS* HSTRLEN HINCRBY
// HINCRBYFLOAT HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT HTTL HPTTL HEXPIRETIME HPEXPIRETIME HPERSIST
// HSETEX HGETEX HGETDEL DEL EXISTS TYPE SET GET EXPIRE PEXPIRE EXPIREAT PEXPIREAT PERSIST TTL PTTL
// RENAME COPY (incl. DB) UNLINK DBSIZE OBJECT(ENCODING) MOVE SWAPDB DUMP*** RESTORE***,
// FLUSHALL FLUSHDB, HRANDFIELD** HSCAN**. (***) payloads: model/cmd/dump_commands.hpp.
// (*) unordered replies, (**) replies the server chooses: compare with canonical.hpp's
// same_reply(). Besides the reply, each command records its effects in the Keyspace (events,
// counters, encodings: effects.hpp).
//
// Active expiry is not applied here: call Keyspace::reclaim(now) to model it having run fully.
#pragma once

#include <map>
#include <string>

#include <expirykit/model/context.hpp>
#include <expirykit/model/cmd/db_commands.hpp>
#include <expirykit/model/cmd/dump_commands.hpp>
#include <expirykit/model/cmd/field_ttl_commands.hpp>
#include <expirykit/model/cmd/hash_commands.hpp>
#include <expirykit/model/cmd/key_commands.hpp>
#include <expirykit/model/cmd/random_read_commands.hpp>

namespace expirykit::model {

using CommandFn = Reply (*)(Context&);

/// Upper-case command name -> model function.
inline const std::map<std::string, CommandFn>& command_table() {
  static const std::map<std::string, CommandFn> table = {
      {"HSET", cmd::hset},           {"HMSET", cmd::hmset},
      {"HSETNX", cmd::hsetnx},       {"HGET", cmd::hget},
      {"HMGET", cmd::hmget},         {"HDEL", cmd::hdel},
      {"HLEN", cmd::hlen},           {"HEXISTS", cmd::hexists},
      {"HGETALL", cmd::hgetall},     {"HKEYS", cmd::hkeys},
      {"HVALS", cmd::hvals},         {"HSTRLEN", cmd::hstrlen},
      {"HINCRBY", cmd::hincrby},     {"HINCRBYFLOAT", cmd::hincrbyfloat},
      {"HEXPIRE", cmd::hexpire},     {"HPEXPIRE", cmd::hpexpire},
      {"HEXPIREAT", cmd::hexpireat}, {"HPEXPIREAT", cmd::hpexpireat},
      {"HTTL", cmd::httl},           {"HPTTL", cmd::hpttl},
      {"HEXPIRETIME", cmd::hexpiretime}, {"HPEXPIRETIME", cmd::hpexpiretime},
      {"HPERSIST", cmd::hpersist},   {"HSETEX", cmd::hsetex},
      {"HGETEX", cmd::hgetex},       {"HGETDEL", cmd::hgetdel},
      {"DEL", cmd::del},             {"EXISTS", cmd::exists},
      {"TYPE", cmd::type},           {"SET", cmd::set},
      {"GET", cmd::get},             {"EXPIRE", cmd::expire},
      {"PEXPIRE", cmd::pexpire},     {"EXPIREAT", cmd::expireat},
      {"PEXPIREAT", cmd::pexpireat}, {"PERSIST", cmd::persist},
      {"TTL", cmd::ttl},             {"PTTL", cmd::pttl},
      {"RENAME", cmd::rename},       {"COPY", cmd::copy},
      {"UNLINK", cmd::unlink},       {"DBSIZE", cmd::dbsize},
      {"OBJECT", cmd::object},       {"MOVE", cmd::move},
      {"SWAPDB", cmd::swapdb},       {"HRANDFIELD", cmd::hrandfield},
      {"HSCAN", cmd::hscan},         {"DUMP", cmd::dump},
      {"RESTORE", cmd::restore},     {"FLUSHALL", cmd::flushall},
      {"FLUSHDB", cmd::flushdb},
  };
  return table;
}

/// Upper-cased copy of a command name.
inline std::string upper(std::string s) {
  for (auto& ch : s) ch = (ch >= 'a' && ch <= 'z') ? char(ch - 'a' + 'A') : ch;
  return s;
}

/// True if apply() models this command name (any case) for dialect `d`.
inline bool is_modelled(std::string_view name, const Dialect& d) {
  const std::string u = upper(std::string(name));
  if (u == "HSETEX") return d.has_hsetex;
  if (u == "HGETEX") return d.has_hgetex;
  if (u == "HGETDEL") return d.has_hgetdel;
  return command_table().count(u) > 0;
}

/// See the file comment. `argv[0]` is the command name, any case.
inline Reply apply(Keyspace& ks, const Dialect& d, const Argv& argv, int64_t now_ms) {
  if (argv.empty()) throw Unmodelled("empty command");
  const auto& table = command_table();
  auto it = table.find(upper(argv[0]));
  if (it == table.end() || !is_modelled(argv[0], d)) throw Unmodelled("command not modelled: " + argv[0]);
  Context c{ks, d, argv, now_ms};
  return it->second(c);
}

}  // namespace expirykit::model
