// expirykit/process/under_test.hpp: which servers a run tests, decided once from the
// configuration (config.hpp): servers the kit spawns, or servers you started.
//
//   if (auto s = process::external_server()) connect(s->host, s->port);   // EXPIRYKIT_SERVER_ADDR
//   if (auto c = process::external_cluster()) ...                           // EXPIRYKIT_CLUSTER_SEED
//   process::ClusterOptions o = process::cluster_shape();                   // EXPIRYKIT_CLUSTER_SHAPE
//
// The one place the kit asks: process::Target (the shared server of ServerFixture), the replica
// and cluster fixtures (catch2/), memory::Probe and the benchmarks. When an external server or
// cluster is named, the EXPIRYKIT_SERVER_PASSWORD / EXPIRYKIT_SERVER_USER credentials and the
// EXPIRYKIT_SERVER_TLS_CA / _CERT / _KEY TLS settings become the fallback of every connection the
// process opens (resp/credentials.hpp, resp/tls.hpp): the external server and the nodes and
// replicas behind it; the servers the kit spawns keep their own (process::Server).
// The binary the kit spawns is chosen in process/discovery.hpp (EXPIRYKIT_SERVER).
#pragma once

#include <optional>
#include <string>

#include <expirykit/config.hpp>
#include <expirykit/process/address.hpp>
#include <expirykit/process/cluster.hpp>
#include <expirykit/process/errors.hpp>
#include <expirykit/resp/credentials.hpp>
#include <expirykit/resp/tls.hpp>

namespace expirykit::process {

/// EXPIRYKIT_SERVER_PASSWORD (and EXPIRYKIT_SERVER_USER, an ACL user; unset: the default user)
/// as the configuration holds them; nullopt when no password is set. Throws ServerError
/// "EXPIRYKIT_SERVER_USER='<user>' is set without EXPIRYKIT_SERVER_PASSWORD", and
/// std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline std::optional<resp::Credentials> external_credentials() {
  const Config& c = config();
  if (c.server_user && !c.server_password)
    throw ServerError("EXPIRYKIT_SERVER_USER='" + *c.server_user + "' is set without EXPIRYKIT_SERVER_PASSWORD");
  if (!c.server_password) return std::nullopt;
  return resp::Credentials{c.server_user.value_or(""), *c.server_password};
}

/// EXPIRYKIT_SERVER_TLS_CA (and EXPIRYKIT_SERVER_TLS_CERT + EXPIRYKIT_SERVER_TLS_KEY, a client
/// certificate) as resp::Tls; nullopt when EXPIRYKIT_SERVER_TLS_CA is unset. Throws ServerError
/// when a client certificate is set without its key (or the key without it), or either without
/// EXPIRYKIT_SERVER_TLS_CA; std::invalid_argument for a bad EXPIRYKIT_* value (config()).
inline std::optional<resp::Tls> external_tls() {
  const Config& c = config();
  if (c.server_tls_cert.has_value() != c.server_tls_key.has_value())
    throw ServerError(std::string(c.server_tls_cert ? "EXPIRYKIT_SERVER_TLS_CERT" : "EXPIRYKIT_SERVER_TLS_KEY") +
                      " is set without " + (c.server_tls_cert ? "EXPIRYKIT_SERVER_TLS_KEY" : "EXPIRYKIT_SERVER_TLS_CERT") +
                      ": a client certificate needs both (PEM files)");
  if (!c.server_tls_ca) {
    if (c.server_tls_cert)
      throw ServerError("EXPIRYKIT_SERVER_TLS_CERT is set without EXPIRYKIT_SERVER_TLS_CA (the CA file that verifies the server)");
    return std::nullopt;
  }
  return resp::Tls{*c.server_tls_ca, c.server_tls_cert.value_or(""), c.server_tls_key.value_or(""), ""};
}

namespace detail {
/// external_credentials() and external_tls() as every connection's fallback.
inline void use_external_settings() {
  resp::set_fallback_credentials(external_credentials());
  resp::set_fallback_tls(external_tls());
}
}  // namespace detail

/// The external server of this run, EXPIRYKIT_SERVER_ADDR (as written, host, port); nullopt when
/// the kit spawns its servers. When set, external_credentials() and external_tls() become the
/// fallbacks of every connection (see the file comment). Throws as they do.
inline std::optional<Address> external_server() {
  const auto& a = config().server_addr;
  if (a) detail::use_external_settings();
  return a;
}

/// external_server() as written ("host:port"), for messages and callers that print it; nullopt
/// when unset. Registers the credentials and TLS settings as external_server() does.
inline std::optional<std::string> external_address() {
  const auto a = external_server();
  if (!a) return std::nullopt;
  return a->text;
}

/// The external cluster of this run, EXPIRYKIT_CLUSTER_SEED (any node of it); nullopt when the kit
/// spawns its clusters. When set, external_credentials() and external_tls() become the
/// fallbacks (its nodes are servers the kit did not spawn). Throws as they do.
inline std::optional<Address> external_cluster() {
  const auto& s = config().cluster_seed;
  if (s) detail::use_external_settings();
  return s;
}

/// The shape of the clusters the kit spawns (ClusterFixture's shared cluster, fresh_cluster()'s
/// default): EXPIRYKIT_CLUSTER_SHAPE, default 3 primaries with 1 replica each, as ClusterOptions
/// (every other option its default). Throws std::invalid_argument for a bad EXPIRYKIT_* value.
inline ClusterOptions cluster_shape() {
  const ClusterShape s = config().cluster_shape.value_or(ClusterShape{});
  ClusterOptions o;
  o.primaries = s.primaries;
  o.replicas = s.replicas;
  return o;
}

}  // namespace expirykit::process
