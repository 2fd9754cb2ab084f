// expirykit/resp/reply.hpp: a reply as a plain value type.
//
// A Reply is what a server answered (or what the model expects it to answer): nil, a status
// ("OK"), an error ("ERR ..."), an integer, a binary-safe bulk string, or an array of replies.
// Server errors are Replies, never exceptions. Equality is structural (type and content);
// printing follows valkey-cli / redis-cli, e.g. `1) (integer) -2`, `"v"`, `(nil)`,
// `(error) ERR syntax error`, `(empty array)`.
//
// RESP3 (a connection after HELLO 3: resp::Client::hello) adds types RESP2 lacks. A Reply keeps
// those as its RESP2 type, the one RESP2 sends the same data as, with the RESP3 type beside it
// (resp3_type()): a map is an array of its keys and values alternating, a set or a push an
// array, a double, a big number or a verbatim string a string (its text; a verbatim string
// without its "txt:" format), a boolean an integer (1 or 0); RESP3's null is nil. So every
// accessor and operator== read a RESP3 reply as RESP2 would send its data, and same_resp3()
// compares the RESP3 types too. (A reply whose shape differs between the two, like HRANDFIELD
// WITHVALUES's pairs, is told apart by the command: model/resp3.hpp.)
//
// This header includes no hiredis header: the model builds expected Replies from it alone.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace expirykit::resp {

enum class Type { nil, status, error, integer, string, array };

inline const char* to_string(Type t) {
  switch (t) {
    case Type::nil: return "nil";
    case Type::status: return "status";
    case Type::error: return "error";
    case Type::integer: return "integer";
    case Type::string: return "string";
    case Type::array: return "array";
  }
  return "?";
}

/// The RESP3 type a reply arrived as, where RESP2 has no such type (`plain`: its RESP2 type
/// is its RESP3 type). See the file comment for the RESP2 type each is kept as.
enum class Resp3Type : unsigned char { plain, map, set, push, double_, boolean, big_number, verbatim };

inline const char* to_string(Resp3Type t) {
  switch (t) {
    case Resp3Type::plain: return "plain";
    case Resp3Type::map: return "map";
    case Resp3Type::set: return "set";
    case Resp3Type::push: return "push";
    case Resp3Type::double_: return "double";
    case Resp3Type::boolean: return "boolean";
    case Resp3Type::big_number: return "big number";
    case Resp3Type::verbatim: return "verbatim string";
  }
  return "?";
}

/// Thrown when a Reply is read as a type it does not have (e.g. as_integer() on an error).
/// The message holds the reply as valkey-cli prints it.
class ReplyTypeError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class Reply {
 public:
  Reply() = default;  // nil

  static Reply nil() { return {}; }
  static Reply status(std::string s) { return Reply(Type::status, std::move(s)); }
  static Reply error(std::string s) { return Reply(Type::error, std::move(s)); }
  static Reply integer(long long v) {
    Reply r(Type::integer, {});
    r.int_ = v;
    return r;
  }
  static Reply string(std::string s) { return Reply(Type::string, std::move(s)); }
  static Reply array(std::vector<Reply> elems) {
    Reply r(Type::array, {});
    r.elems_ = std::move(elems);
    return r;
  }
  /// An array of integers, e.g. the per-field reply of HEXPIRE: Reply::ints({1, -2}).
  static Reply ints(std::initializer_list<long long> vs) {
    std::vector<Reply> e;
    for (auto v : vs) e.push_back(integer(v));
    return array(std::move(e));
  }
  static Reply ints(const std::vector<long long>& vs) {
    std::vector<Reply> e;
    for (auto v : vs) e.push_back(integer(v));
    return array(std::move(e));
  }
  /// An array of bulk strings, e.g. the reply of HKEYS.
  static Reply strings(const std::vector<std::string>& vs) {
    std::vector<Reply> e;
    for (const auto& v : vs) e.push_back(string(v));
    return array(std::move(e));
  }
  static Reply ok() { return status("OK"); }
  /// A RESP3 map of `keys_and_values` (k1, v1, k2, v2, ...: an even count), e.g. HGETALL's
  /// reply on a RESP3 connection. Throws std::invalid_argument on an odd count.
  static Reply map(std::vector<Reply> keys_and_values) {
    if (keys_and_values.size() % 2) throw std::invalid_argument("Reply::map: an odd number of keys and values");
    return array(std::move(keys_and_values)).as_resp3(Resp3Type::map);
  }
  /// This reply marked as arrived as RESP3 type `t` (its RESP2 type and data unchanged).
  /// Throws std::invalid_argument when `t` is not kept as this RESP2 type (file comment).
  Reply as_resp3(Resp3Type t) && {
    const bool fits = t == Resp3Type::plain ||
                      ((t == Resp3Type::map || t == Resp3Type::set || t == Resp3Type::push) && type_ == Type::array) ||
                      ((t == Resp3Type::double_ || t == Resp3Type::big_number || t == Resp3Type::verbatim) &&
                       type_ == Type::string) ||
                      (t == Resp3Type::boolean && type_ == Type::integer);
    if (!fits)
      throw std::invalid_argument(std::string("Reply::as_resp3: a ") + resp::to_string(type_) + " reply cannot be a RESP3 " +
                                  resp::to_string(t));
    if (t == Resp3Type::map && elems_.size() % 2) throw std::invalid_argument("Reply::as_resp3: a map of an odd length");
    r3_ = t;
    return std::move(*this);
  }
  /// The RESP3 type this reply arrived as (`plain` for every reply a RESP2 connection reads).
  Resp3Type resp3_type() const { return r3_; }
  /// This reply with every RESP3 type (its own and its elements') dropped: what RESP2 sends.
  Reply without_resp3() const {
    Reply r = *this;
    r.r3_ = Resp3Type::plain;
    for (auto& e : r.elems_) e = e.without_resp3();
    return r;
  }
  /// operator== and the same RESP3 types throughout.
  friend bool same_resp3(const Reply& a, const Reply& b) {
    if (a.r3_ != b.r3_ || a.type_ != b.type_) return false;
    if (a.type_ != Type::array) return a == b;
    if (a.elems_.size() != b.elems_.size()) return false;
    for (std::size_t i = 0; i < a.elems_.size(); ++i)
      if (!same_resp3(a.elems_[i], b.elems_[i])) return false;
    return true;
  }

  Type type() const { return type_; }
  bool is_nil() const { return type_ == Type::nil; }
  bool is_status() const { return type_ == Type::status; }
  bool is_error() const { return type_ == Type::error; }
  bool is_integer() const { return type_ == Type::integer; }
  bool is_string() const { return type_ == Type::string; }
  bool is_array() const { return type_ == Type::array; }

  /// The integer of an integer reply. Throws ReplyTypeError otherwise.
  long long as_integer() const {
    expect(Type::integer);
    return int_;
  }
  /// The text of a status, error or bulk-string reply. Throws ReplyTypeError otherwise.
  const std::string& str() const {
    if (type_ != Type::status && type_ != Type::error && type_ != Type::string)
      throw ReplyTypeError("expected a status, error or string reply, got " + to_string());
    return str_;
  }
  /// The elements of an array reply. Throws ReplyTypeError otherwise.
  const std::vector<Reply>& elements() const {
    expect(Type::array);
    return elems_;
  }
  std::vector<Reply>& elements() {
    expect(Type::array);
    return elems_;
  }
  /// Element i of an array reply (bounds-checked). Throws ReplyTypeError / std::out_of_range.
  const Reply& operator[](std::size_t i) const { return elements().at(i); }
  std::size_t size() const { return elements().size(); }
  /// Integers of an array-of-integers reply. Throws ReplyTypeError on any other shape.
  std::vector<long long> as_integers() const {
    std::vector<long long> out;
    for (const auto& e : elements()) out.push_back(e.as_integer());
    return out;
  }
  /// True for an error reply whose text starts with `prefix` (e.g. "WRONGTYPE", "ERR syntax").
  bool is_error_starting(std::string_view prefix) const {
    return type_ == Type::error && std::string_view(str_).substr(0, prefix.size()) == prefix;
  }

  friend bool operator==(const Reply& a, const Reply& b) {
    if (a.type_ != b.type_) return false;
    switch (a.type_) {
      case Type::nil: return true;
      case Type::integer: return a.int_ == b.int_;
      case Type::array: return a.elems_ == b.elems_;
      default: return a.str_ == b.str_;
    }
  }

  /// The command this reply answered, as a valkey-cli line (cli_line), when resp::Client::call
  /// or its operator() received it; "" for replies built in code, pipeline replies and array
  /// elements. Not part of equality. operator<< prints it after the reply, so a failed Catch2
  /// CHECK(c("HTTL", k, ...) == ...) shows the command it sent, with its values.
  const std::string& sent() const {
    static const std::string none;
    return sent_ ? *sent_ : none;
  }
  Reply& set_sent(std::string line) {
    sent_ = std::make_shared<const std::string>(std::move(line));
    return *this;
  }

  /// to_string() on one line: arrays as [a, b, ...], each element as to_string() would show it.
  /// A RESP3 type shows (as valkey-cli -3 names it): a map as {k => v, ...}, a set as ~[...], a
  /// push as >[...], a double as (double) 1.5, a boolean as (true) / (false), a big number as
  /// (big number) 123, a verbatim string as (verbatim) "text".
  std::string oneline() const {
    switch (r3_) {
      case Resp3Type::double_: return "(double) " + str_;
      case Resp3Type::boolean: return int_ ? "(true)" : "(false)";
      case Resp3Type::big_number: return "(big number) " + str_;
      case Resp3Type::verbatim: {
        std::string out = "(verbatim) ";
        quote(out, str_);
        return out;
      }
      default: break;
    }
    if (!is_array()) return to_string();
    const bool map = r3_ == Resp3Type::map;
    std::string out = map ? "{" : r3_ == Resp3Type::set ? "~[" : r3_ == Resp3Type::push ? ">[" : "[";
    for (std::size_t i = 0; i < size(); ++i)
      out += (i ? (map && i % 2 ? " => " : ", ") : "") + (*this)[i].oneline();
    return out + (map ? "}" : "]");
  }

  /// valkey-cli style rendering, multi-line for arrays.
  std::string to_string() const {
    std::string out;
    render(out, 0);
    return out;
  }

 private:
  Reply(Type t, std::string s) : type_(t), str_(std::move(s)) {}

  void expect(Type t) const {
    if (type_ != t)
      throw ReplyTypeError(std::string("expected a ") + resp::to_string(t) + " reply, got " +
                           to_string());
  }

  static void quote(std::string& out, std::string_view s) {
    static const char* hex = "0123456789abcdef";
    out += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\a': out += "\\a"; break;
        case '\b': out += "\\b"; break;
        default:
          if (c < 0x20 || c >= 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
          } else {
            out += static_cast<char>(c);
          }
      }
    }
    out += '"';
  }

  void render(std::string& out, std::size_t indent) const {
    switch (type_) {
      case Type::nil: out += "(nil)"; return;
      case Type::status: out += str_; return;
      case Type::error: out += "(error) " + str_; return;
      case Type::integer: out += "(integer) " + std::to_string(int_); return;
      case Type::string: quote(out, str_); return;
      case Type::array: {
        if (elems_.empty()) {
          out += "(empty array)";
          return;
        }
        const std::size_t width = std::to_string(elems_.size()).size();
        for (std::size_t i = 0; i < elems_.size(); ++i) {
          std::string label = std::to_string(i + 1);
          if (i) out += "\n" + std::string(indent, ' ');
          out += std::string(width - label.size(), ' ') + label + ") ";
          elems_[i].render(out, indent + width + 2);
        }
        return;
      }
    }
  }

  Type type_ = Type::nil;
  Resp3Type r3_ = Resp3Type::plain;  // beside type_: no larger a Reply
  std::string str_;
  long long int_ = 0;
  std::vector<Reply> elems_;
  std::shared_ptr<const std::string> sent_;
};

/// The reply as to_string() shows it, then "  (reply to: <command>)" when sent() is known.
inline std::ostream& operator<<(std::ostream& os, const Reply& r) {
  os << r.to_string();
  if (!r.sent().empty()) os << "  (reply to: " << r.sent() << ")";
  return os;
}

/// One command as sent: binary-safe argument vector, e.g. {"HEXPIRE", "k", "10", "FIELDS", "1", "f"}.
using Argv = std::vector<std::string>;

/// Quote one argument the way valkey-cli accepts it on its command line / stdin
/// (double quotes with \xHH escapes when needed), so printed scripts replay verbatim.
inline std::string cli_quote(std::string_view arg) {
  bool plain = !arg.empty();
  for (unsigned char c : arg)
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '\\') plain = false;
  if (plain) return std::string(arg);
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : arg) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

/// `v` always in double quotes, with cli_quote()'s escapes (\" \\ \xHH): a value in a message,
/// on one line and replayable, e.g. quoted("a b") is "a b" with its quotes, quoted("") is "".
inline std::string quoted(std::string_view v) {
  std::string q = cli_quote(v);
  return !q.empty() && q.front() == '"' ? q : "\"" + q + "\"";
}

/// The arguments of one valkey-cli line, the inverse of cli_line(): words split on spaces;
/// "double quotes" with the escapes \" \\ \n \r \t \a \b \xHH, and 'single quotes' with \', each a
/// single argument (e.g. `HSET k "a b" ''` gives HSET, k, "a b" and an empty argument). Throws
/// std::invalid_argument on an unbalanced quote or a quote not followed by a space.
inline Argv parse_cli_line(std::string_view line) {
  Argv out;
  std::size_t i = 0;
  auto hexval = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) return out;
    std::string arg;
    const char q = line[i];
    if (q == '"' || q == '\'') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == q) {
          closed = true;
          break;
        }
        if (c == '\\' && i < line.size()) {
          const char e = line[i++];
          if (q == '\'') {
            arg += e == '\'' ? "'" : std::string("\\") + e;
            continue;
          }
          switch (e) {
            case 'n': arg += '\n'; break;
            case 'r': arg += '\r'; break;
            case 't': arg += '\t'; break;
            case 'a': arg += '\a'; break;
            case 'b': arg += '\b'; break;
            case 'x':
              if (i + 1 < line.size() && hexval(line[i]) >= 0 && hexval(line[i + 1]) >= 0) {
                arg += static_cast<char>(hexval(line[i]) * 16 + hexval(line[i + 1]));
                i += 2;
              } else {
                arg += 'x';
              }
              break;
            default: arg += e;
          }
          continue;
        }
        arg += c;
      }
      if (!closed) throw std::invalid_argument("unbalanced quotes in: " + std::string(line));
      if (i < line.size() && line[i] != ' ' && line[i] != '\t')
        throw std::invalid_argument("closing quote must be followed by a space in: " + std::string(line));
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') arg += line[i++];
    }
    out.push_back(std::move(arg));
  }
}

/// A command as one valkey-cli line, e.g. `HSET k "a b" 1`.
inline std::string cli_line(const Argv& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    out += cli_quote(argv[i]);
  }
  return out;
}

}  // namespace expirykit::resp
