// expirykit/expirykit.hpp: umbrella include for the server-facing parts of the kit
// (the configuration, process, resp, server). The Catch2 integration (expirykit/catch2/*.hpp) and the model
// (expirykit/model/*.hpp) are included on their own.
#pragma once

#include <expirykit/config.hpp>
#include <expirykit/process/address.hpp>
#include <expirykit/process/discovery.hpp>
#include <expirykit/process/errors.hpp>
#include <expirykit/process/options.hpp>
#include <expirykit/process/server.hpp>
#include <expirykit/process/target.hpp>
#include <expirykit/process/temp_dir.hpp>
#include <expirykit/process/under_test.hpp>
#include <expirykit/resp/client.hpp>
#include <expirykit/resp/reply.hpp>
#include <expirykit/server/clock.hpp>
#include <expirykit/server/identity.hpp>
#include <expirykit/server/info.hpp>
