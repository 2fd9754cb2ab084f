// expirykit/cluster/slot.hpp: the hash slot of a key, as Valkey Cluster and Redis Cluster
// compute it.
//
//   cluster::slot_of("foo")                   // 12182
//   cluster::slot_of("{user1000}.following")  // == slot_of("user1000"): the hash tag decides
//
// Source: the cluster specification (valkey.io/topics/cluster-spec, "Key distribution model"
// and "Hash tags"): HASH_SLOT = CRC16(key) mod 16384, CRC16 being the XMODEM variant
// (polynomial 0x1021, initial value 0, no reflection; CRC16("123456789") = 0x31C3). When the key
// holds a '{' followed later by a '}' with at least one byte between them, only the bytes between
// the first '{' and the first '}' after it are hashed. Checked against live servers with
// CLUSTER KEYSLOT in checks/cluster/slot_test.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace expirykit::cluster {

/// Hash slots in a cluster: 0 .. 16383.
inline constexpr int slot_count = 16384;

namespace detail {
constexpr std::array<std::uint16_t, 256> crc16_table() {
  std::array<std::uint16_t, 256> t{};
  for (unsigned i = 0; i < 256; ++i) {
    std::uint16_t c = static_cast<std::uint16_t>(i << 8);
    for (int b = 0; b < 8; ++b) c = static_cast<std::uint16_t>((c & 0x8000) ? (c << 1) ^ 0x1021 : (c << 1));
    t[i] = c;
  }
  return t;
}
inline constexpr auto crc16_lut = crc16_table();
}  // namespace detail

/// CRC16-XMODEM (CCITT polynomial 0x1021, initial 0) of `bytes`.
constexpr std::uint16_t crc16(std::string_view bytes) {
  std::uint16_t crc = 0;
  for (unsigned char ch : bytes)
    crc = static_cast<std::uint16_t>((crc << 8) ^ detail::crc16_lut[((crc >> 8) ^ ch) & 0xff]);
  return crc;
}

/// The part of `key` that is hashed: the hash tag (bytes between the first '{' and the first
/// '}' after it) when it is non-empty, else the whole key.
constexpr std::string_view hash_tag(std::string_view key) {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

/// The hash slot (0 .. 16383) of `key`.
constexpr int slot_of(std::string_view key) { return crc16(hash_tag(key)) % slot_count; }

}  // namespace expirykit::cluster
