// expirykit/state/run_stats.hpp: what state::Twin::run_all (state/detail/run_all.hpp) did since
// the twin was made, counted for the pipelined checker's benchmark (bench/bench_checker.cpp
// prints them under each measurement; bench/RESULTS.md section 9).
#pragma once

#include <cstdint>

namespace expirykit::state {

/// Twin::run_stats() (Twin::RunStats): runs sent (round trips), the commands in them, commands
/// sent alone (run()), steps whose millisecond run_all had to choose without a read-back (choice
/// points), the other milliseconds it tried for them, the choices it changed, the compare_all()
/// pipelines it sent ahead that compare_all() used (Twin::compare_all_follows()), the DUMPs of a
/// `RESTORE ... @dump:` it sent ahead and used (state/detail/dump_ref.hpp), and the parts of runs
/// it sent while still deciding where the run ends (Twin::kStreamAfter). Counts, from 0.
struct RunStats {
  std::uint64_t runs = 0, run_commands = 0, alone = 0, choice_points = 0, tried = 0, changed = 0, compares_ahead = 0,
                dumps_ahead = 0, parts_early = 0;
};

}  // namespace expirykit::state
