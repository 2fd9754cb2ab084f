// expirykit/fault/detail/wire.hpp: RESP2 messages on a byte stream, for the fault proxy.
//
// Reading: fault::MessageReader wraps hiredis's redisReader (hiredis 0.14 and 1.x, read.h) and
// yields each complete message twice: as a resp::Reply (the value hooks look at) and as the
// exact bytes it arrived as (what the proxy forwards when nothing rewrites it, so a message goes
// through byte for byte: `*-1` stays a null array, `$-1` a null bulk, even though resp::Reply has
// one nil for both). The bytes of a message are found from the reader's public cursor: at any
// time the reader holds `len - pos` unconsumed bytes of everything fed to it (read.h: `pos` is
// the buffer cursor, `len` the buffer length; the reader drops consumed bytes only by moving
// both, in redisReaderFeed and after a reply in redisReaderGetReply), so when a reply comes out,
// everything fed minus that many bytes has been consumed.
//
// Writing: write_reply() and write_command() serialise a rewritten message as RESP2 (a request
// is an array of bulk strings: redis.io/docs/latest/develop/reference/protocol-spec, "Sending
// commands to a Redis server").
//
// Errors: MessageReader::next() throws ProtocolError on bytes that are not RESP (an inline
// command, a RESP3 type hiredis 0.14 does not know); after that the reader stays failed.
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <expirykit/resp/client.hpp>
#include <expirykit/resp/reply.hpp>

namespace expirykit::fault::detail {

/// The byte stream is not RESP2 as hiredis reads it. The message holds hiredis's error text.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One message off the stream: its value and the exact bytes it was sent as.
struct Message {
  resp::Reply value;
  std::string raw;
};

/// Cuts a RESP byte stream into messages with hiredis's redisReader. Not thread-safe; one per
/// direction of a connection.
class MessageReader {
 public:
  MessageReader() : reader_(redisReaderCreate()) {
    if (!reader_) throw std::bad_alloc();
  }
  MessageReader(const MessageReader&) = delete;
  MessageReader& operator=(const MessageReader&) = delete;

  /// Appends bytes read from the socket. Throws ProtocolError if the reader already failed.
  void feed(std::string_view bytes) {
    if (bytes.empty()) return;
    if (redisReaderFeed(reader_.get(), bytes.data(), bytes.size()) != REDIS_OK) fail();
    unparsed_.append(bytes);
  }

  /// The next complete message, or std::nullopt when more bytes are needed. Throws
  /// ProtocolError on bytes that are not RESP.
  std::optional<Message> next() {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) fail();
    if (!raw) return std::nullopt;
    std::unique_ptr<void, resp::detail::ReplyFree> guard(raw);
    const std::size_t held = reader_->len - reader_->pos;  // fed but not yet consumed
    const std::size_t used = unparsed_.size() - held;
    Message m{resp::detail::from_hiredis(static_cast<redisReply*>(raw)), unparsed_.substr(0, used)};
    unparsed_.erase(0, used);
    return m;
  }

  /// Bytes fed but not yet returned as a message (the start of an incomplete one, or what was
  /// left when parsing failed): what to forward as is when giving up on parsing.
  std::string take_unparsed() { return std::exchange(unparsed_, {}); }

 private:
  struct Free {
    void operator()(redisReader* r) const { redisReaderFree(r); }
  };
  [[noreturn]] void fail() {
    throw ProtocolError(std::string("RESP protocol error: ") + (reader_->err ? reader_->errstr : "unknown"));
  }

  std::unique_ptr<redisReader, Free> reader_;
  std::string unparsed_;
};

/// Appends `r` to `out` in RESP2: +status, -error, :integer, $bulk, $-1 for nil, *array.
inline void write_reply(std::string& out, const resp::Reply& r) {
  switch (r.type()) {
    case resp::Type::nil: out += "$-1\r\n"; return;
    case resp::Type::status: out += "+" + r.str() + "\r\n"; return;
    case resp::Type::error: out += "-" + r.str() + "\r\n"; return;
    case resp::Type::integer: out += ":" + std::to_string(r.as_integer()) + "\r\n"; return;
    case resp::Type::string:
      out += "$" + std::to_string(r.str().size()) + "\r\n";
      out += r.str();
      out += "\r\n";
      return;
    case resp::Type::array:
      out += "*" + std::to_string(r.size()) + "\r\n";
      for (const auto& e : r.elements()) write_reply(out, e);
      return;
  }
}

/// Appends one command to `out` as a RESP array of bulk strings.
inline void write_command(std::string& out, const resp::Argv& argv) {
  out += "*" + std::to_string(argv.size()) + "\r\n";
  for (const auto& a : argv) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
}

/// A request message as an argument vector; std::nullopt unless it is a non-empty array of
/// bulk strings (the only request shape RESP2 clients send besides inline commands).
inline std::optional<resp::Argv> as_argv(const resp::Reply& r) {
  if (!r.is_array() || r.size() == 0) return std::nullopt;
  resp::Argv out;
  out.reserve(r.size());
  for (const auto& e : r.elements()) {
    if (!e.is_string()) return std::nullopt;
    out.push_back(e.str());
  }
  return out;
}

/// ASCII upper case, for command names and option tokens (case-insensitive on the servers).
inline std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace expirykit::fault::detail
