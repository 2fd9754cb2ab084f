// expirykit/resp/credentials.hpp: the password (and ACL user) each connection of the process
// authenticates with, by server address, so every resp::Client the kit opens (a test's, the
// twin's read-back and listener connections, a replica's, a cluster node's) sends AUTH without
// each caller passing it along.
//
//   resp::set_credentials("127.0.0.1:7000", resp::Credentials{"", "s3cret"});   // requirepass
//   resp::set_credentials("127.0.0.1:7001", resp::Credentials{"alice", "pw"});  // an ACL user
//   resp::set_fallback_credentials(resp::Credentials{"", "s3cret"});             // any other address
//   resp::Client c("127.0.0.1", 7000);   // connects, then AUTH s3cret
//
// Lookup: the address's own entry (one set with std::nullopt means "no AUTH", e.g. a server the
// kit spawned without requirepass), else the fallback, else no AUTH. Who sets them:
// process::Server for its own address (its config's requirepass, or none), and external mode
// (process/target.hpp: EXPIRYKIT_SERVER_PASSWORD and EXPIRYKIT_SERVER_USER as the fallback).
// AUTH <password> and AUTH <user> <password> are the servers' commands (valkey.io/commands/auth,
// redis.io/docs/latest/commands/auth; the two-argument form needs ACLs: Redis 6.0+, Valkey 7.2+).
// Thread-safe (resp/detail/by_address.hpp). Passwords never appear in an error message.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <expirykit/resp/detail/by_address.hpp>

namespace expirykit::resp {

struct Credentials {
  std::string user;      ///< ACL user; empty: the default user (AUTH <password>)
  std::string password;  ///< sent as given
  friend bool operator==(const Credentials&, const Credentials&) = default;
};

/// The credentials of connections to `address` ("host:port"); std::nullopt: connect without AUTH
/// even when a fallback is set.
/// `owner` (optional): who sets it, for forget_credentials(address, owner).
inline void set_credentials(const std::string& address, std::optional<Credentials> c, const void* owner = nullptr) {
  detail::by_address<Credentials>().set(address, std::move(c), owner);
}
/// Drops `address`'s own entry: the fallback applies to it again. With `owner`, only an entry
/// that owner set last (process::Server: not one a newer server on the same port set since).
inline void forget_credentials(const std::string& address, const void* owner = nullptr) {
  detail::by_address<Credentials>().forget(address, owner);
}
/// The credentials of every address without an entry of its own; std::nullopt: none.
inline void set_fallback_credentials(std::optional<Credentials> c) {
  detail::by_address<Credentials>().set_fallback(std::move(c));
}
/// What a connection to `address` authenticates with (see the file comment); nullopt: no AUTH.
inline std::optional<Credentials> credentials_for(const std::string& address) {
  return detail::by_address<Credentials>().lookup(address);
}

}  // namespace expirykit::resp
