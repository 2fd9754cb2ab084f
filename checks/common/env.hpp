// An environment variable set (or unset) for one scope; the value it had is put back at the
// end of the scope, also when a check throws. The kit reads its configuration once
// (expirykit::config(), config.hpp): both changes are followed by expirykit::reload_config(), so
// the kit sees the variable as set here (a bad value is then thrown by the next config() call,
// not here). The kit's own checks share it.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include <expirykit/config.hpp>

namespace ekcheck {

/// Sets `name` to `value` (nullptr: unsets it) until the end of the scope.
struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
    expirykit::reload_config();
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
    expirykit::reload_config();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace ekcheck
