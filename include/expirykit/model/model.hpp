// expirykit/model/model.hpp: umbrella for the executable reference model (namespace
// expirykit::model). Pure C++: no process, client or test-framework header.
//
// The folder's public face: apply.hpp (the entry point), keyspace.hpp (the state), dialect.hpp
// (what differs between servers), effects.hpp, tracking.hpp, propagation.hpp (what replicas and the AOF are sent), batch.hpp, canonical.hpp and
// context.hpp. The command functions apply() dispatches to, one header per command family, and
// the argument parsers they share are in model/cmd/ (namespace expirykit::model::cmd).
#pragma once

#include <expirykit/model/apply.hpp>
#include <expirykit/model/batch.hpp>
#include <expirykit/model/canonical.hpp>
#include <expirykit/model/context.hpp>
#include <expirykit/model/dialect.hpp>
#include <expirykit/model/cmd/field_ttl_commands.hpp>
#include <expirykit/model/cmd/hash_commands.hpp>
#include <expirykit/model/cmd/key_commands.hpp>
#include <expirykit/model/keyspace.hpp>
#include <expirykit/model/propagation.hpp>
#include <expirykit/model/tracking.hpp>
