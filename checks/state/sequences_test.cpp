// Tests of the property harness itself (the property runs in suites/properties): a planted
// model bug is caught and shrunk to at most 3 commands; and a hidden throughput measurement.
#include <catch2/catch_test_macros.hpp>

#include <chrono>

#include <expirykit/state/property.hpp>

#include <expirykit/catch2/twin_fixture.hpp>

using namespace expirykit::catch2;
using expirykit::state::check_sequences;
using expirykit::state::PropertyBudget;

TEST_CASE_METHOD(TwinFixture, "Harness: a planted model bug is caught and shrunk to <= 5 commands", "[state][harness]") {
  const auto& id = identity();
  auto d = Dialect::for_server(expirykit::server::to_string(id.flavor), id.version.major, id.version.minor);
  if (!d) SKIP("no dialect");
  // The bug: HPERSIST answers -1 where it removed a TTL (1).
  Twin::Options o;
  o.mutate_model_reply = [](const expirykit::resp::Argv& a, Reply& r) {
    if (expirykit::model::upper(a[0]) != "HPERSIST" || !r.is_array()) return;
    for (auto& e : r.elements())
      if (e == Reply::integer(1)) e = Reply::integer(-1);
  };
  Twin bad(client(), *d, o);
  auto r = check_sequences(bad, PropertyBudget{300, 40});
  INFO(r.report);
  REQUIRE_FALSE(r.ok);
  // Three commands show it; a transaction or script step that carries one of them shrinks as a
  // unit (gen::chunk), so MULTI and EXEC may remain around it.
  CHECK(r.shrunk_len <= 5);
  CHECK(r.report.find("HPERSIST") != std::string::npos);
  CHECK(r.report.find("<-- MISMATCH") != std::string::npos);
}

TEST_CASE_METHOD(TwinFixture, "Throughput: model-checked commands vs raw PING round trips", "[.bench][state]") {
  auto& t = twin();
  auto& c = client();
  const int n = 5000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) c("PING");
  const double ping = n / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t0 = std::chrono::steady_clock::now();
  auto r = check_sequences(t, PropertyBudget{200, 40});
  const double checked = r.commands / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  WARN(dialect().name << ": PING " << static_cast<long>(ping) << "/s; model-checked commands "
                      << static_cast<long>(checked) << "/s (" << r.commands << " commands incl. state checks)");
  CHECK(r.ok);
}
