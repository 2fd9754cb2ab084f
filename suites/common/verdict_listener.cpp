// Registers the conformance verdict listener once per suite binary.
#include <expirykit/catch2/verdict.hpp>

EXPIRYKIT_REGISTER_VERDICT_LISTENER()
