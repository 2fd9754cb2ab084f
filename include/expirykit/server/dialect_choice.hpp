// expirykit/server/dialect_choice.hpp: which model dialect a server is checked against.
//
//   auto d = server::dialect_for(id);        // nullopt: no hash field TTLs, nothing to model
//   if (d && server::is_stand_in(*d, id)) ...  // a release without a dialect of its own
//
// The server's own dialect when the kit has one (model::Dialect::for_server: valkey-9.0,
// valkey-9.1, redis-7.4, redis-8.0, redis-8.6), else the newest older one of its flavor: a
// stand-in, under which every divergence is a change since that release (ci/conformance says
// so and adds the release report, state/release_report.hpp). EXPIRYKIT_DIALECT=<name> forces one
// (e.g. EXPIRYKIT_DIALECT=redis-8.0 checks Redis 8.6 against the 8.0 model, as before its own
// dialect existed); it must be of the server's flavor. Used by the three fixtures (TwinFixture,
// ReplicaFixture, ClusterFixture), the verdict listener and expirykit_release_report
// --dialect-of. Code that wants each release's own dialect whatever is forced (the upgrade
// suite's old and new release, expirykit_differential's two servers) calls
// model::Dialect::for_server itself.
#pragma once

#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include <expirykit/config.hpp>
#include <expirykit/model/dialect.hpp>
#include <expirykit/server/identity.hpp>

namespace expirykit::server {

/// The dialect named `name` ("redis-8.0"), or nullopt for a name the kit has no dialect of.
inline std::optional<model::Dialect> dialect_named(const std::string& name) {
  const auto dash = name.rfind('-');
  int major = 0, minor = 0;
  if (dash == std::string::npos || std::sscanf(name.c_str() + dash + 1, "%d.%d", &major, &minor) != 2) return std::nullopt;
  auto d = model::Dialect::for_server(name.substr(0, dash), major, minor);
  if (!d || d->name != name) return std::nullopt;
  return d;
}

/// See the file comment (EXPIRYKIT_DIALECT is config().dialect, config.hpp). Throws
/// std::invalid_argument when EXPIRYKIT_DIALECT names no dialect or one of another flavor, or for a
/// bad EXPIRYKIT_* value (config()).
inline std::optional<model::Dialect> dialect_for(const Identity& id) {
  if (const auto& forced = config().dialect) {
    auto d = dialect_named(*forced);
    if (!d)
      throw std::invalid_argument("EXPIRYKIT_DIALECT='" + *forced +
                                  "' names no model dialect (valkey-9.0, valkey-9.1, redis-7.4, redis-8.0, redis-8.6)");
    if (d->flavor != to_string(id.flavor))
      throw std::invalid_argument("EXPIRYKIT_DIALECT='" + *forced + "' is a " + d->flavor + " dialect; the server is " +
                                  id.to_string());
    if (!id.caps.field_ttl()) return std::nullopt;
    return d;
  }
  return model::Dialect::for_server(to_string(id.flavor), id.version.major, id.version.minor);
}

/// True when `d` is not `id`'s own dialect (a stand-in: the newest older one, or forced).
inline bool is_stand_in(const model::Dialect& d, const Identity& id) { return d.name != id.line(); }

}  // namespace expirykit::server
