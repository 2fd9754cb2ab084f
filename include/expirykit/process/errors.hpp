// expirykit/process/errors.hpp: what process::Server throws.
#pragma once

#include <stdexcept>
#include <string>

namespace expirykit::process {

/// A server could not be found, started, reached or stopped. The message names the binary,
/// the port or the directory involved, says what to do, and ends with the server's log tail
/// when there is one.
class ServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The server process exited while it was expected to run (crash, assertion, killed).
/// The message holds the exit status and the log tail.
class ServerDied : public ServerError {
 public:
  using ServerError::ServerError;
};

}  // namespace expirykit::process
