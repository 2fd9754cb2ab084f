# Build helpers for targets that include expirykit: shared by the kit's own build and the
# installed package (find_package(expirykit) includes this file).
#
#   expirykit_precompile_headers(<target>)
#     Precompiles <expirykit/pch.hpp> for <target>: the heavy third-party headers the kit
#     includes (Boost.Process, RapidCheck, Catch2 v3, nlohmann/json, hiredis, the standard
#     library), each where it is installed. One precompiled header per target, built before its
#     sources; the kit's own headers are not in it, so editing them never rebuilds it.
#     Measured in bench/RESULTS.md ("Compile cost").
function(expirykit_precompile_headers target)
  target_precompile_headers(${target} PRIVATE <expirykit/pch.hpp>)
endfunction()
