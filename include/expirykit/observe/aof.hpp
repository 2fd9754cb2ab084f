// expirykit/observe/aof.hpp: the commands a server appends to its AOF, read from the file.
//
//   process::ServerOptions o;
//   o.persistence = process::Persistence::aof;          // appendonly yes, appendfsync always
//   auto srv = fresh_server(o, "what the AOF holds");
//   observe::AofTail aof(srv->dir() / "appendonlydir");
//   aof.mark();
//   c("HEXPIRE", "h", "100", "FIELDS", "1", "a");
//   std::vector<resp::Argv> got = aof.since_mark();     // {{"HPEXPIREAT", "h", "<abs ms>", "FIELDS", "1", "a"}}
//
// The layout (Redis 7.0 and later, Valkey 7.2 and later): appendonlydir/ holds a manifest
// (`<appendfilename>.manifest`, one line per file: `file NAME seq N type b|h|i`), a base file
// (type b, written by a rewrite) and increment files (type i); writes go to the last increment.
// An increment is a sequence of RESP arrays of bulk strings, the commands as the server
// propagates them (absolute deadlines, rewritten forms: model/propagation.hpp), with a SELECT
// before the first command of a database, and lines starting with '#' where aof-timestamp-enabled
// is yes (annotations; skipped here). With appendfsync always the command is in the file when its
// reply arrives: the server writes and fsyncs the AOF in beforeSleep, before it writes the replies
// (src/server.c of both; live 2026-12-05, suites/durability/propagation.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <expirykit/resp/reply.hpp>

namespace expirykit::observe {

/// The AOF's files could not be read or parsed. what() names the file and the byte offset.
struct AofError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The commands of an AOF increment (RESP arrays of bulk strings; '#' annotation lines skipped),
/// in file order. A command cut off at the end (a write still under way) is left out; `consumed`
/// (if given) gets the offset after the last whole command. Throws AofError for bytes that are
/// neither: a line that is not `*N` / `$N` (N of 1 to 18 digits; N >= 1 for an array), a bulk
/// string not ended by CRLF (what the error names: `name` and the byte offset).
inline std::vector<resp::Argv> parse_aof(const std::string& bytes, const std::string& name = "AOF",
                                         std::size_t* consumed = nullptr) {
  std::vector<resp::Argv> out;
  std::size_t at = 0;
  auto fail = [&](std::size_t where, const std::string& why) {
    throw AofError(name + ": byte " + std::to_string(where) + ": " + why);
  };
  // The number after the `tag` at `p`, up to its CRLF (p moves past it); -1 if the line is not
  // complete yet.
  auto number = [&](std::size_t& p, char tag) -> long long {
    if (bytes[p] != tag) fail(p, std::string("expected '") + tag + "'");
    const std::size_t eol = bytes.find("\r\n", p);
    if (eol == std::string::npos) return -1;
    if (eol == p + 1 || eol - p - 1 > 18) fail(p, "not a length");
    long long n = 0;
    for (std::size_t i = p + 1; i < eol; ++i) {
      if (bytes[i] < '0' || bytes[i] > '9') fail(i, "not a length");
      n = n * 10 + (bytes[i] - '0');
    }
    p = eol + 2;
    return n;
  };
  while (at < bytes.size()) {
    if (bytes[at] == '#') {  // an annotation line (aof-timestamp-enabled yes)
      const std::size_t eol = bytes.find("\r\n", at);
      if (eol == std::string::npos) break;
      at = eol + 2;
      continue;
    }
    std::size_t p = at;
    const long long argc = number(p, '*');
    if (argc < 0) break;
    if (argc == 0) fail(at, "an empty command");
    resp::Argv argv;
    bool whole = true;
    for (long long i = 0; i < argc && whole; ++i) {
      if (p >= bytes.size()) { whole = false; break; }
      const long long len = number(p, '$');
      if (len < 0 || p + static_cast<std::size_t>(len) + 2 > bytes.size()) { whole = false; break; }
      const std::size_t end = p + static_cast<std::size_t>(len);
      if (bytes[end] != '\r' || bytes[end + 1] != '\n') fail(end, "a bulk string not ended by CRLF");
      argv.push_back(bytes.substr(p, static_cast<std::size_t>(len)));
      p = end + 2;
    }
    if (!whole) break;
    out.push_back(std::move(argv));
    at = p;
  }
  if (consumed) *consumed = at;
  return out;
}

/// Follows the last increment file of one AOF directory: mark() where it ends now, since_mark()
/// for the commands appended after that. Not thread-safe; reads the files only when asked.
class AofTail {
 public:
  /// `dir`: the server's appendonlydir (`dir` + appenddirname); `appendfilename`: the server's
  /// setting (default "appendonly.aof"). Nothing is read until mark().
  explicit AofTail(std::filesystem::path dir, std::string appendfilename = "appendonly.aof")
      : dir_(std::move(dir)), base_name_(std::move(appendfilename)) {}

  /// The increment writes go to now: the manifest's last `type i` file. Throws AofError if the
  /// manifest is missing (appendonly no) or names no increment.
  std::filesystem::path increment() const {
    const auto manifest = dir_ / (base_name_ + ".manifest");
    std::ifstream in(manifest);
    if (!in) throw AofError(manifest.string() + ": cannot be read (is appendonly yes?)");
    std::string last;
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string w, file, type;
      while (words >> w) {
        if (w == "file") words >> file;
        else if (w == "type") words >> type;
      }
      if (type == "i") last = file;
    }
    if (last.empty()) throw AofError(manifest.string() + ": names no increment file (type i)");
    return dir_ / last;
  }

  /// Remembers the current increment and its size: since_mark() reads from there.
  void mark() {
    file_ = increment();
    std::error_code ec;
    offset_ = std::filesystem::file_size(file_, ec);
    if (ec) throw AofError(file_.string() + ": " + ec.message());
  }

  /// The commands appended to the marked increment since mark(), in order (SELECT, MULTI and EXEC
  /// included, as the file has them). Throws AofError if mark() was not called, if writes now go
  /// to another increment (a rewrite ran since: mark() again after it), if the bytes are not RESP,
  /// or if they end inside a command (with appendfsync always, a command is whole in the file
  /// before its reply is sent).
  std::vector<resp::Argv> since_mark() const {
    if (file_.empty()) throw AofError("AofTail::since_mark() before mark()");
    if (increment() != file_)
      throw AofError("the AOF moved from " + file_.filename().string() + " to " + increment().filename().string() +
                     " since mark() (a rewrite): mark() after it");
    std::ifstream in(file_, std::ios::binary);
    if (!in) throw AofError(file_.string() + ": cannot be read");
    in.seekg(static_cast<std::streamoff>(offset_));
    std::ostringstream bytes;
    bytes << in.rdbuf();
    const std::string text = bytes.str();
    const std::string name = file_.filename().string() + " after byte " + std::to_string(offset_);
    std::size_t consumed = 0;
    auto cmds = parse_aof(text, name, &consumed);
    if (consumed != text.size())
      throw AofError(name + ": byte " + std::to_string(consumed) + ": a command cut off (" +
                     std::to_string(text.size() - consumed) + " bytes; is appendfsync always?)");
    return cmds;
  }

 private:
  std::filesystem::path dir_;
  std::string base_name_;
  std::filesystem::path file_;
  std::uintmax_t offset_ = 0;
};

}  // namespace expirykit::observe
