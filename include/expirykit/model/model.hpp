// expirykit/model/model.hpp: umbrella for the executable reference model (namespace
// expirykit::model). Pure C++: no process, client or test-framework header.
#pragma once

#include <expirykit/model/apply.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/model/canonical.hpp>
#include <expirykit/model/context.hpp>
#include <expirykit/model/dialect.hpp>
#include <expirykit/model/field_ttl_commands.hpp>
#include <expirykit/model/hash_commands.hpp>
#include <expirykit/model/key_commands.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/model/tracking.hpp>
