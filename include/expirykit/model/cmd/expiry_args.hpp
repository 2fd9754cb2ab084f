// expirykit/model/cmd/expiry_args.hpp: the time and expiry-option arguments of the hash field TTL
// commands, shared by the command functions (field_ttl_commands.hpp, setex_getex_commands.hpp)
// and Redis 8.6's keyword parser (keyword_args.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <expirykit/model/context.hpp>

namespace expirykit::model::cmd {

enum class Unit { seconds, milliseconds };

namespace detail {

/// A time argument to an absolute deadline in ms, or an error Reply.
/// Both servers: not an integer -> not_integer; negative -> negative_time; seconds above
/// max/1000 -> expire_time; then deadline above max -> expire_time (redis-hfe.md §4 [V],
/// valkey-hfe.md §2 [L]; max = dialect.max_field_expire_ms).
inline std::optional<int64_t> deadline(Context& c, const std::string& arg, Unit unit, bool absolute,
                                      Reply& err) {
  long long t = 0;
  if (!parse_ll(arg, t)) {
    err = Reply::error(c.d.err.not_integer);
    return std::nullopt;
  }
  if (t < 0) {
    err = c.error(c.d.err.negative_time);
    return std::nullopt;
  }
  const int64_t max = c.d.max_field_expire_ms;
  if (unit == Unit::seconds) {
    if (t > max / 1000) {
      err = c.error(c.d.err.expire_time);
      return std::nullopt;
    }
    t *= 1000;
  }
  const int64_t base = absolute ? 0 : c.now;
  if (t > max - base) {
    err = c.error(c.d.err.expire_time);
    return std::nullopt;
  }
  return t + base;
}

/// An expiry option of HSETEX / HGETEX as written.
struct ExpiryOpt {
  enum Kind { none, ex, px, exat, pxat, keepttl, persist } kind = none;
  std::string value;  ///< the time argument, unparsed (Valkey parses it after the type check)
  Unit unit() const { return (kind == ex || kind == exat) ? Unit::seconds : Unit::milliseconds; }
  bool absolute() const { return kind == exat || kind == pxat; }
  bool timed() const { return kind == ex || kind == px || kind == exat || kind == pxat; }
};
inline ExpiryOpt::Kind expiry_kind(const std::string& tok) {
  if (iequals(tok, "EX")) return ExpiryOpt::ex;
  if (iequals(tok, "PX")) return ExpiryOpt::px;
  if (iequals(tok, "EXAT")) return ExpiryOpt::exat;
  if (iequals(tok, "PXAT")) return ExpiryOpt::pxat;
  if (iequals(tok, "KEEPTTL")) return ExpiryOpt::keepttl;
  if (iequals(tok, "PERSIST")) return ExpiryOpt::persist;
  return ExpiryOpt::none;
}

}  // namespace detail

}  // namespace expirykit::model::cmd
