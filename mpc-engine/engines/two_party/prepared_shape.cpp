#include "engines/two_party/prepared_shape.hpp"

#include <tuple>

namespace mpc::two_party_engine {
namespace {

auto fields(const PreparedShape& s) {
  return std::tie(s.key.name, s.key.version, s.key.algorithm, s.label_set, s.circuit.id, s.circuit.data_bytes,
                  s.circuit.combine, s.secret.offset, s.secret.bytes, s.public_bytes);
}

}  // namespace

bool PreparedShape::operator==(const PreparedShape& other) const { return fields(*this) == fields(other); }

bool operator<(const PreparedShape& a, const PreparedShape& b) { return fields(a) < fields(b); }

std::string describe(const PreparedShape& shape) {
  return wire::describe(shape.key) + " circuit " + std::to_string(static_cast<unsigned>(shape.circuit.id)) + " data " +
         std::to_string(shape.circuit.data_bytes) + " bytes";
}

}  // namespace mpc::two_party_engine
