// Differential mode (issue 3 item 7): the same generated sequences against Valkey 9.1 and
// Redis 8.0 (both spawned here), each checked against its own dialect; every divergence between
// the two servers must be explained by the dialects.
#include <catch2/catch_test_macros.hpp>

#include <memory>

#include <expirykit/gen/commands.hpp>
#include <expirykit/process/discovery.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/property/differential.hpp>
#include <expirykit/property/property.hpp>

using expirykit::model::Dialect;
using namespace expirykit;

TEST_CASE("Differential: Valkey 9.1 vs Redis 8.0 divergences are explained by the dialects", "[state][differential]") {
  if (process::external_server()) SKIP("spawns its own two servers; EXPIRYKIT_SERVER_ADDR is set");
  const auto vbin = process::provisioned_server("valkey-9.1"), rbin = process::provisioned_server("redis-8.0");
  if (vbin.empty() || rbin.empty()) SKIP("needs the provisioned valkey-9.1 and redis-8.0 (ci/provision-servers)");
  process::ServerOptions vo, ro;
  vo.binary = vbin;
  ro.binary = rbin;
  process::Server vs(vo), rs(ro);
  auto vc = vs.client();
  auto rc_ = rs.client();
  // Each twin excuses the known issues of its server (state/known_divergence.hpp), which the
  // models no longer predict: the models are the specification.
  state::Twin::Options vt, rt;
  vt.server = server::Identity::probe(vc);
  rt.server = server::Identity::probe(rc_);
  state::Twin v(vc, Dialect::valkey_9_1(), vt), r(rc_, Dialect::redis_8_0(), rt);
  // Commands both servers have, so divergences are about semantics (HSETEX NX/XX included).
  const Dialect common = Dialect::redis_8_0();
  const int n = static_cast<int>(50 * property::prop_scale());
  rc::Random random(static_cast<std::uint64_t>(rc::detail::configuration().testParams.seed));
  auto res = property::run_differential_sequences(v, r, common, n, random);
  const std::vector<property::Divergence>& all = res.divergences;
  const std::size_t commands = res.commands;
  const std::string table = property::summarize(all, "valkey-9.1", "redis-8.0");
  UNSCOPED_INFO(n << " sequences, " << commands << " commands, " << all.size() << " divergent replies\n" << table);
  std::size_t unexplained = 0;
  for (const auto& d : all) unexplained += !d.explained;
  CHECK(unexplained == 0);
  CHECK(all.size() > 0);  // the two servers do differ (error texts at least)
}
