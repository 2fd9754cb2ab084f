// expirykit/resp/detail/by_address.hpp: a process-wide setting per server address ("host:port")
// with a fallback for every other address: what each connection the kit opens authenticates
// with (resp/credentials.hpp) and whether it speaks TLS (resp/tls.hpp).
//
// Lookup: the address's own entry (one set to std::nullopt means "none", even with a fallback
// set), else the fallback, else none. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace expirykit::resp::detail {

template <class T>
class ByAddress {
 public:
  /// `owner` (optional) marks who set the entry, so that forget(address, owner) leaves an entry
  /// someone else set since (a process::Server on a port another one used before).
  void set(const std::string& address, std::optional<T> v, const void* owner = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    by_address_[address] = Entry{std::move(v), owner};
  }
  /// Drops `address`'s entry; with `owner`, only if that owner set it last.
  void forget(const std::string& address, const void* owner = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = by_address_.find(address);
    if (it != by_address_.end() && (!owner || it->second.owner == owner)) by_address_.erase(it);
  }
  void set_fallback(std::optional<T> v) {
    std::lock_guard<std::mutex> lock(mu_);
    fallback_ = std::move(v);
  }
  std::optional<T> lookup(const std::string& address) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = by_address_.find(address); it != by_address_.end()) return it->second.value;
    return fallback_;
  }

 private:
  struct Entry {
    std::optional<T> value;
    const void* owner = nullptr;
  };
  std::mutex mu_;
  std::map<std::string, Entry> by_address_;
  std::optional<T> fallback_;
};

/// The one registry of T-settings of the process. Never destroyed: a Server in static storage
/// (a test binary's shared server) forgets its entry in its destructor, which may run after a
/// function-local static's.
template <class T>
ByAddress<T>& by_address() {
  static ByAddress<T>* r = new ByAddress<T>;
  return *r;
}

}  // namespace expirykit::resp::detail
