// gen/: generated commands stay inside the model (never Unmodelled) and collide on few keys.
#include <catch2/catch_test_macros.hpp>
#include <rapidcheck.h>

#include <map>

#include <expirykit/gen/commands.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/model/model.hpp>

using expirykit::model::Dialect;
using expirykit::resp::Argv;

TEST_CASE("Generated sequences are modelled on every dialect", "[gen]") {
  for (const auto& d : {Dialect::valkey_9_1(), Dialect::redis_8_0(), Dialect::redis_7_4()}) {
    CAPTURE(d.name);
    const bool ok = rc::check(d.name + ": no Unmodelled", [d] {
      const auto cmds = *expirykit::gen::sequence(d, 40);
      RC_ASSERT(!cmds.empty());
      RC_ASSERT(cmds.size() <= 40u * 6);  // 40 steps; a transaction is up to 6 commands
      expirykit::model::Keyspace ks;
      int64_t now = 1'800'000'000'000;
      for (const auto& c : cmds) {
        if (c[0] == "MULTI" || c[0] == "EXEC" || c[0] == "DISCARD") continue;  // state::Twin's part
        if (c[0] == "EVAL" || c[0] == "FCALL") {
          const auto inner = expirykit::model::sequence_eval_commands(c);
          RC_ASSERT(inner.has_value());
          expirykit::model::apply_batch(ks, d, *inner, now, true);  // throws Unmodelled otherwise
          continue;
        }
        RC_ASSERT(expirykit::model::is_modelled(c[0], d));
        Argv a = c;
        if (a[0] == "RESTORE" && a[3].rfind("@dump:", 0) == 0) {  // what state::Twin resolves
          const std::string src = a[3].substr(6);
          const auto* e = ks.raw(src);
          a[3] = e ? "payload of " + src : "";
          if (e) ks.remember_dump(a[3], *e);
        }
        expirykit::model::apply(ks, d, a, now);  // throws Unmodelled otherwise
        now += 3;
      }
    });
    CHECK(ok);
  }
}

TEST_CASE("Generated commands collide on a few keys and cover the HFE commands", "[gen]") {
  const Dialect d = Dialect::valkey_9_1();
  std::map<std::string, int> keys, names;
  int total = 0;
  rc::Random random(42);
  const auto g = expirykit::gen::command(d);
  for (int i = 0; i < 2000; ++i) {
    const Argv a = g(random.split(), 40).value();
    ++total;
    ++names[a[0]];
    if (a.size() > 1) ++keys[a[1]];
  }
  CHECK(keys["h1"] + keys["h2"] > total / 2);
  for (auto& [k, v] : names) UNSCOPED_INFO(k << "=" << v);
  for (auto n : {"HEXPIRE", "HPEXPIREAT", "HTTL", "HPERSIST", "HSETEX", "HGETEX", "HGETDEL", "HSET", "HINCRBY", "COPY"})
  {
    CAPTURE(n);
    CHECK(names[n] > 0);
  }
}
