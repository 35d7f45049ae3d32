// A fixture for tools/check-layers, never compiled: the two-party engine including the
// three-party one, which the layering rule forbids.
#include "engines/three_party/three_party_engine.hpp"
