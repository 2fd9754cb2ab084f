// ServerOptions that put files in a server's directory or shape the ones it writes: seed_files
// (process/server.hpp copies them in before the first start) and aof_rdb_preamble
// (aof-use-rdb-preamble, process/options.hpp).
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <fstream>
#include <sstream>

#include <expirykit/process/server.hpp>
#include <expirykit/server/persistence.hpp>

using namespace expirykit;
using resp::Reply;

namespace {
/// The base file named by appendonlydir/<appendfilename>.manifest ("file <name> seq <n> type b").
std::filesystem::path aof_base_file(const std::filesystem::path& dir) {
  const auto aofdir = dir / "appendonlydir";
  std::ifstream m(aofdir / "appendonly.aof.manifest");
  for (std::string line; std::getline(m, line);) {
    std::istringstream in(line);
    std::string kw, name, seqkw, seq, typekw, type;
    in >> kw >> name >> seqkw >> seq >> typekw >> type;
    if (kw == "file" && typekw == "type" && type == "b") return aofdir / name;
  }
  return {};
}
std::string head_of(const std::filesystem::path& p, std::size_t n) {
  std::ifstream in(p, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}
}  // namespace

TEST_CASE("A server seeded with another server's dump.rdb loads its keys", "[process][seed]") {
  process::Server a;
  auto ca = a.client();
  REQUIRE(ca("SET", "s", "v") == Reply::ok());
  REQUIRE(ca("HSET", "h", "a", "1", "b", "2") == Reply::integer(2));
  REQUIRE(ca("PEXPIRE", "h", 600000) == Reply::integer(1));
  server::save(ca);
  const Reply deadline = ca("PEXPIRETIME", "h");
  REQUIRE(std::filesystem::exists(a.dir() / "dump.rdb"));

  process::ServerOptions o;
  o.seed_files = {a.dir() / "dump.rdb"};
  process::Server b(o);
  CHECK(b.dir() != a.dir());
  CHECK(std::filesystem::exists(b.dir() / "dump.rdb"));
  auto cb = b.client();
  CHECK(cb("DBSIZE") == Reply::integer(2));
  CHECK(cb("GET", "s") == Reply::string("v"));
  CHECK(cb("HGET", "h", "b") == Reply::string("2"));
  CHECK(cb("PEXPIRETIME", "h") == deadline);
  // The source file is copied, not moved.
  CHECK(std::filesystem::exists(a.dir() / "dump.rdb"));
}

TEST_CASE("aof_rdb_preamble: the rewritten AOF base file is an RDB, or commands without it", "[process][aof]") {
  const bool preamble = GENERATE(true, false);
  INFO("aof_rdb_preamble=" << preamble);
  process::ServerOptions o;
  o.persistence = process::Persistence::aof;
  o.aof_rdb_preamble = preamble;
  process::Server s(o);
  auto c = s.client();
  CHECK(c("CONFIG", "GET", "aof-use-rdb-preamble")[1] == Reply::string(preamble ? "yes" : "no"));
  CHECK(c("CONFIG", "GET", "appendfsync")[1] == Reply::string("always"));
  REQUIRE(c("HSET", "h", "a", "1") == Reply::integer(1));
  server::bgrewriteaof(c);
  const auto base = aof_base_file(s.dir());
  REQUIRE(!base.empty());
  REQUIRE(std::filesystem::exists(base));
  const std::string head = head_of(base, 9);
  INFO("base file " << base << " starts with " << resp::Reply::string(head));
  if (preamble) {
    // RDB magic: "REDIS00xx" (Redis, Valkey 8), "VALKEY0xx" (Valkey 9: RDB version 80, seen in
    // a base file written by Valkey 9.1.2).
    CHECK(base.extension() == ".rdb");
    CHECK((head.rfind("REDIS", 0) == 0 || head.rfind("VALKEY", 0) == 0));
  } else {
    CHECK(base.extension() == ".aof");
    CHECK(head.rfind("*", 0) == 0);  // a RESP array: the first command
  }
  // Either way the server loads it back.
  s.restart(process::Shutdown::nosave);
  CHECK(s.client()("HGET", "h", "a") == Reply::string("1"));
}
