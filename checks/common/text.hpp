// Small text helpers the kit's own checks share.
#pragma once

#include <string>
#include <vector>

namespace ekcheck {

/// Each string on a line of its own (for INFO and failure messages).
inline std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

}  // namespace ekcheck
