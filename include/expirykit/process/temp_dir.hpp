// expirykit/process/temp_dir.hpp: the private 0700 directory each server runs in.
//
// Named <root>/expirykit-<owner pid>-XXXXXX. A directory whose owner process is gone (it was
// SIGKILLed before it could clean up) is removed by the next TempDir created under the same
// root, so killed test runs do not pile up data directories.
#pragma once

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <expirykit/process/errors.hpp>

namespace expirykit::process {

class TempDir {
 public:
  /// Creates the directory (mode 0700). Throws ServerError naming `root` if it cannot.
  explicit TempDir(std::filesystem::path root = {}) {
    if (root.empty()) {
      const char* t = std::getenv("TMPDIR");
      root = t && *t ? t : "/tmp";
    }
    sweep_stale(root);
    std::string tmpl = (root / ("expirykit-" + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data()))
      throw ServerError("cannot create a server directory under " + root.string() + ": " + std::strerror(errno) +
                        "; make it writable, or set TMPDIR / ServerOptions::temp_root to a writable directory");
    path_ = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!keep_) std::filesystem::remove_all(path_, ec);
    else std::fprintf(stderr, "expirykit: kept %s\n", path_.c_str());
  }
  const std::filesystem::path& path() const { return path_; }
  /// Whether the directory is kept after destruction (keep()).
  bool kept() const { return keep_; }
  /// Keep the directory after destruction (and mark it with a file ".keep" so that
  /// sweep_stale() leaves it alone too).
  void keep(bool k = true) {
    keep_ = k;
    if (k) std::ofstream(path_ / ".keep") << "kept on purpose (EXPIRYKIT_KEEP_DIRS or ServerOptions::keep_dir)\n";
  }

  /// Removes expirykit-<pid>-* directories under `root` whose pid no longer runs, except those
  /// marked ".keep".
  static void sweep_stale(const std::filesystem::path& root) {
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(root, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.rfind("expirykit-", 0) != 0) continue;
      auto dash = name.find('-', 10);
      if (dash == std::string::npos) continue;
      pid_t pid = 0;
      try {
        pid = static_cast<pid_t>(std::stol(name.substr(10, dash - 10)));
      } catch (...) {
        continue;
      }
      if (pid <= 0 || pid == ::getpid()) continue;
      std::error_code kec;
      if (std::filesystem::exists(it->path() / ".keep", kec)) continue;
      if (::kill(pid, 0) == -1 && errno == ESRCH) {
        std::error_code rec;
        std::filesystem::remove_all(it->path(), rec);
      }
    }
  }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace expirykit::process
