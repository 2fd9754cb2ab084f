// Scenario scripts run on the live server and the model side by side: every reply must agree.
// Lines: a command (space-separated, no quoting), "#OFF" (active expiry off), "#WAIT ms" (wait
// on the server clock). Commands the dialect lacks are skipped. Covers the error texts and
// check orders of redis-hfe.md §4 / valkey-hfe.md §2 and the expired-field rows of §6 / §9.
#include <catch2/catch_test_macros.hpp>

#include <sstream>

#include <expirykit/catch2/twin_fixture.hpp>

using namespace expirykit::catch2;

namespace {
void run_script(TwinFixture& f, Twin& twin, const std::string& text, int& compared) {
  (void)f;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line == "#OFF") {
      REQUIRE(twin.set_active_expire(false) == Reply::ok());
      continue;
    }
    if (line.rfind("#WAIT ", 0) == 0) {
      twin.wait_until_past(twin.server_time() + std::stoll(line.substr(6)));
      continue;
    }
    if (line[0] == '#') continue;
    std::istringstream w(line);
    std::string name;
    w >> name;
    if (!expirykit::model::is_modelled(name, twin.dialect())) continue;
    Step s = twin.run(line);
    INFO(s.describe());
    CHECK(s.ok);
    ++compared;
  }
}
}  // namespace

static const char* const k_s1 = R"EK(
SET s x
HSET h a 1
HEXPIRE h 10 NX XX FOO FIELDS 1 a
HEXPIRE h 10 FOO NX XX FIELDS 1 a
HEXPIRE h 10 NX NX FIELDS 1 a
HEXPIRE h 10 GT LT FIELDS 1 a
HEXPIRE h 10 XX GT FIELDS 1 a
HEXPIRE h 10 FIELDS 0 a
HEXPIRE h 10 FIELDS -1 a
HEXPIRE h 10 FIELDS abc a
HEXPIRE h 10 FIELDS 2 a
HEXPIRE h 10 FIELDS 9223372036854775808 a
HEXPIRE h abc FIELDS 1 a
HEXPIRE h abc FIELDS 0 a
HEXPIRE h -1 FIELDS 0 a
HEXPIRE s abc FIELDS 0 a
HEXPIRE s 10 FIELDS 0 a
HEXPIRE h 10 a FIELDS 1 a
HEXPIRE h 10 NX a b c
HEXPIRE h 10 FIELDS 1 a b
HEXPIRE h 10 XX FIELDS FIELDS
HEXPIRE h 10 FIELDS 1 FIELDS
HEXPIRE s 10 FOO FIELDS 1 a
HEXPIRE h 10 NX XX a b
HEXPIRE h 10 NX XX FIELDS 0 a
HEXPIRE h abc NX XX FIELDS 1 a
HTTL h FOO 1 a
HTTL h FIELDS 0 a
HTTL h FIELDS abc a
HTTL h FIELDS 2 a
HTTL s FIELDS 2 a
HTTL s FOO 2 a
HPERSIST s FIELDS 2 a
HPERSIST s FOO 1 a
HPERSIST h FIELDS 0 a
HPERSIST h FIELDS x a
HPERSIST h FIELDS 2 a
HGETDEL s FIELDS 2 a
HGETDEL s FOO 1 a
HGETDEL h FIELDS 0 a
HGETDEL h FIELDS x a
HGETDEL h FIELDS 2 a
HGETDEL h FOO 1 a
HPEXPIRETIME h FIELDS 1 a b
HSETEX h EX 10 EX 20 FIELDS 1 a 1
HSETEX h EX 10 PX 20 FIELDS 1 a 1
HSETEX h FNX FXX FIELDS 1 a 1
HSETEX h FNX FNX FIELDS 1 a 1
HSETEX h KEEPTTL EX 10 FIELDS 1 a 1
HSETEX h FOO FIELDS 1 a 1
HSETEX h NX FIELDS 1 a 1
HSETEX h EX FIELDS 1 a 1
HSETEX h EX abc FIELDS 1 a 1
HSETEX h EX -1 FIELDS 1 a 1
HSETEX h FIELDS 0 a 1
HSETEX h FIELDS x a 1
HSETEX h FIELDS 2 a 1
HSETEX h FIELDS 1 a 1 b
HSETEX s EX abc FIELDS 1 a 1
HSETEX s EX -1 FIELDS 1 a 1
HSETEX s FIELDS 2 a 1
HSETEX s FOO FIELDS 1 a 1
HSETEX h EX 10 a b c d
HSETEX h FIELDS 1 FIELDS 1
HSETEX h PX 5000 FXX FIELDS 1 a 2
HSETEX h EX 9223372036854 FIELDS 1 a 1
HSETEX h EX 9223372036854775 FIELDS 1 a 1
HSETEX h PXAT 70368744177664 FIELDS 1 a 1
HSETEX h EXAT 70368744178 FIELDS 1 a 1
HSETEX h KEEPTTL KEEPTTL FIELDS 1 a 1
HSETEX h FIELDS -1 a 1
HSETEX h EX -1 FOO FIELDS 1 a 1
HSETEX h EX abc FOO FIELDS 1 a 1
HSETEX h FXX EX 10 FIELDS 0 a 1
HSETEX h EX 10 EX -1 FIELDS 1 a 1
HGETEX h EX 10 EX 20 FIELDS 1 a
HGETEX h EX 10 PX 20 FIELDS 1 a
HGETEX h PERSIST PERSIST FIELDS 1 a
HGETEX h KEEPTTL FIELDS 1 a
HGETEX h EX FIELDS 1 a
HGETEX h EX abc FIELDS 1 a
HGETEX h EX -1 FIELDS 1 a
HGETEX h FIELDS 0 a
HGETEX h FIELDS x a
HGETEX h FIELDS 2 a
HGETEX h PXAT 1 1
HGETEX s EX abc FIELDS 1 a
HGETEX s FIELDS 2 a
HGETEX s FOO FIELDS 1 a
HGETEX h FOO FIELDS 1 a
HGETEX h FIELDS 1 a b
HGETEX h EX 10 a b c
HGETEX h PXAT 70368744177664 FIELDS 1 a
HGETEX h FIELDS -3 a
HGETEX h EX -1 FOO 1 a
HGETEX h EX abc FOO 1 a
HGETEX h EX 10 FOO 1 a
HPEXPIREAT h 9223372036854775807 FIELDS 1 a
HEXPIREAT h 9223372036854775 FIELDS 1 FIELDS
HEXPIRETIME h FIELDS 2 a FIELDS
HPEXPIRETIME h FIELDS 2 a FIELDS
HEXPIRE h 9223372036854 FIELDS 1 a
HEXPIRE h 9223372036854775 FIELDS 1 a
HPEXPIREAT h 70368744177663 FIELDS 1 a
HPEXPIREAT h 70368744177664 FIELDS 1 a
HEXPIREAT h 70368744177 FIELDS 1 a
HEXPIREAT h 70368744178 FIELDS 1 a
HEXPIRETIME h FIELDS 1 a
HEXPIRE h -9223372036854775808 FIELDS 1 a
HEXPIRE h 1.5 FIELDS 1 a
HEXPIRE h 10 fields 1 a
HSETEX h ex 100 fnx fields 1 zz 1
HGETEX h px 1000 fields 1 zz
HPEXPIRE h 100 FIELDS 1 a b c
HEXPIRE h 10 FIELDS 1
HTTL h FIELDS 1
)EK";
TEST_CASE_METHOD(TwinFixture, "Scenario: argument errors and check order", "[dialect][scenario]") {
  int compared = 0;
  run_script(*this, twin(), k_s1, compared);
  CHECK(compared > 20);
  check_same_state();
}

static const char* const k_s2 = R"EK(
#OFF
HSET h a 1 b 2 c 3 d 4 e 5 f 6 g 7 i 8 j 9 k 10 l 11 m 12 n 13 o 14 p 15
HPEXPIRE h 1 FIELDS 14 a b c d e f g i j k l m n o
SET s str
HSET g a 1
HPEXPIRE g 1 FIELDS 1 a
HSET q a 1
HPEXPIRE q 1 FIELDS 1 a
HSET w a 1 b 2
HPEXPIRE w 1 FIELDS 1 a
#WAIT 30
HLEN h
HDEL h a
HLEN h
HSET h b 22
HTTL h FIELDS 1 b
HLEN h
HEXISTS h c
HLEN h
HSTRLEN h d
HLEN h
HMGET h e zz
HLEN h
HGETDEL h FIELDS 1 f
HLEN h
HSETEX h FXX FIELDS 1 g 1
HLEN h
HSETEX h FNX FIELDS 1 i 1
HLEN h
HPTTL h FIELDS 1 i
HINCRBY h j 5
HPTTL h FIELDS 1 j
HEXPIRE h 0 FIELDS 1 k
HLEN h
HEXPIRE h 100 LT FIELDS 1 l
HGETEX h FIELDS 1 m
HLEN h
HSETEX h KEEPTTL FIELDS 1 n 9
HPTTL h FIELDS 1 n
HGET h n
HLEN h
HPERSIST h FIELDS 1 o
HTTL h FIELDS 1 o
HLEN h
HGETALL h
HKEYS h
HVALS h
COPY w w2
HLEN w2
HGETALL w2
COPY g g2
EXISTS g2
HLEN g2
TYPE g
EXISTS g
HGETALL g
EXISTS g
HGET g a
EXISTS g
TYPE g
RENAME q q2
HLEN q2
EXISTS q2
DEL q2
HSETEX w EX 0 FIELDS 2 a b
EXISTS w
HSET fx live 1 dead1 2 dead2 3
HPEXPIRE fx 1 FIELDS 2 dead1 dead2
#WAIT 5
HSETEX fx KEEPTTL FXX FIELDS 2 missing 1 dead1 1
HLEN fx
HSETEX fx KEEPTTL FNX FIELDS 2 live 1 dead2 1
HLEN fx
)EK";
TEST_CASE_METHOD(TwinFixture, "Scenario: logically expired fields, active expiry off", "[dialect][scenario]") {
  int compared = 0;
  run_script(*this, twin(), k_s2, compared);
  CHECK(compared > 20);
  check_same_state();
}

static const char* const k_s3 = R"EK(
#OFF
# Active expiry off: field d (400 ms) is due long before the state comparison at the end, and
# with active expiry on the server reclaims it at a time no command observes (a build-asan run of
# .ci/run: "h: HLEN server 3, model 4"); with it off both sides keep d stored until a lazy expiry.
HSET h a 1 b 2 c 3 d 4
HPEXPIRE h 2600 FIELDS 1 a
HPEXPIRE h 2400 FIELDS 1 b
HPEXPIRE h 1500 FIELDS 1 c
HPEXPIRE h 400 FIELDS 1 d
HTTL h FIELDS 4 a b c d
HPEXPIREAT h 1893456000500 FIELDS 1 a
HPEXPIREAT h 1893456000499 FIELDS 1 b
HPEXPIREAT h 1893456000001 FIELDS 1 c
HEXPIRETIME h FIELDS 3 a b c
HEXPIRE h 100 GT FIELDS 1 nope
HSET p x 1 y 2
HEXPIRE p 100 GT FIELDS 1 x
HEXPIRE p 100 LT FIELDS 1 x
HEXPIRE p 200 GT FIELDS 1 x
HEXPIRE p 50 GT FIELDS 1 x
HEXPIRE p 50 LT FIELDS 1 x
HEXPIRE p 50 NX FIELDS 2 x y
HEXPIRE p 60 XX FIELDS 2 x y
HEXPIRE p 0 GT FIELDS 1 x
HEXPIRE p 0 NX FIELDS 1 x
HEXPIRE p 0 XX FIELDS 1 y
HEXPIRE p 0 LT FIELDS 1 x
HEXPIRE p 100 FIELDS 3 y nope y
HEXPIRE p 0 FIELDS 3 y y nope
EXISTS p
HSET r a 1
HINCRBY r a 5
HPEXPIRE r 100000 FIELDS 1 a
HINCRBY r a 5
HINCRBYFLOAT r a 0.5
HPEXPIRETIME r FIELDS 1 a
HSET r a 2
HTTL r FIELDS 1 a
HSETEX r EX 100 FIELDS 2 a 1 b 2
HSETEX r KEEPTTL FIELDS 2 a 3 c 4
HTTL r FIELDS 3 a b c
HSETEX r FIELDS 1 a 5
HTTL r FIELDS 3 a b c
HSETEX r FXX EX 50 FIELDS 2 a 1 zz 1
HSETEX r FNX EX 50 FIELDS 2 a 1 zz 1
HSETEX r FXX EX 50 FIELDS 2 a 1 b 1
HTTL r FIELDS 3 a b c
HSETEX r FNX PX 0 FIELDS 1 a 1
HSETEX r PX 0 FIELDS 2 a 1 zz 2
HGETALL r
HGETEX r EX 0 FIELDS 2 b b
HGETALL r
HSETEX r FIELDS 2 d 1 d 2
HGET r d
HGETEX r PERSIST FIELDS 1 c
HGETEX r EXAT 4102444800 FIELDS 2 c nope
HEXPIRETIME r FIELDS 2 c nope
HSETEX nokey EXAT 0 FIELDS 1 foo bar
EXISTS nokey
HSETEX nokey FXX EX 10 FIELDS 1 a 1
EXISTS nokey
HGETEX nokey EX 10 FIELDS 2 a b
HEXPIRE nokey 10 FIELDS 2 a b
HTTL nokey FIELDS 1 a
HPERSIST nokey FIELDS 1 a
HGETDEL nokey FIELDS 1 a
HSET k a 1 b 2
HGETDEL k FIELDS 3 a a b
EXISTS k
SET s v
EXPIRE s 100
TTL s
EXPIRE s 50 GT
EXPIRE s 500 GT
EXPIRE s 50 LT
EXPIRE s 100 NX
EXPIRE s 100 XX NX
EXPIRE s 100 FOO
EXPIRE s abc
EXPIRE s 9223372036854775
PERSIST s
PERSIST s
TTL s
PTTL nokey
EXPIRE s -1
EXISTS s
SET s v EX 100
SET s v2 KEEPTTL
TTL s
SET s v3 NX
SET s v4 XX GET
GET s
SET s v EX 0
SET s v EX -5
SET s v PX abc
SET s v EX 10 PX 10
SET s v NX XX
HSET hh a 1
SET hh v GET
GET hh
SET hh v
GET hh
HGET hh a
HSET hh a 1
EXPIRE hh 100
HEXPIRE hh 50 FIELDS 1 a
PERSIST hh
HTTL hh FIELDS 1 a
TTL hh
RENAME hh hh2
HTTL hh2 FIELDS 1 a
RENAME nokey x
RENAME hh2 hh2
COPY hh2 hh2
COPY hh2 hh3
COPY hh2 hh3
COPY hh2 hh3 REPLACE
COPY hh2 hh3 FOO
HTTL hh3 FIELDS 1 a
TYPE hh3
TYPE s
TYPE nokey
DEL hh2 hh3 hh3 nokey
EXISTS hh2 hh2 s
HSET
HSET h a
HSET h a 1 b
HGET h
HMGET h
HLEN
HDEL h
)EK";
TEST_CASE_METHOD(TwinFixture, "Scenario: TTL semantics of hash and key commands", "[dialect][scenario]") {
  int compared = 0;
  run_script(*this, twin(), k_s3, compared);
  CHECK(compared > 20);
  check_same_state();
}

