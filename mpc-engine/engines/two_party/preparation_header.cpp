#include "engines/two_party/preparation_header.hpp"

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "wire/peer_messages.hpp"

namespace mpc::two_party_engine {
namespace {

void write_shape(ByteWriter& writer, const PreparedShape& shape) {
  writer.short_string(shape.key.name);
  writer.u32(shape.key.version);
  writer.u8(static_cast<std::uint8_t>(shape.key.algorithm));
  writer.u64(shape.label_set);
  writer.u8(static_cast<std::uint8_t>(shape.circuit.id));
  writer.u32(shape.circuit.data_bytes);
  writer.u32(shape.circuit.combine);
  writer.u32(static_cast<std::uint32_t>(shape.secret.offset));
  writer.u32(static_cast<std::uint32_t>(shape.secret.bytes));
  writer.u32(shape.public_bytes);
}

PreparedShape read_shape(ByteReader& reader) {
  PreparedShape shape;
  shape.key.name = reader.short_string(wire::kMaxKeyNameBytes);
  try {
    wire::validate_key_name(shape.key.name);
  } catch (const FormatError& error) {
    throw FormatError(Component::Server, std::string("preparation header: ") + error.what());
  }
  shape.key.version = reader.u32();
  const std::uint8_t algorithm = reader.u8();
  shape.key.algorithm = static_cast<wire::KeyAlgorithm>(algorithm);
  if (algorithm < static_cast<std::uint8_t>(wire::KeyAlgorithm::Aes128CtsHmacSha1) ||
      algorithm > static_cast<std::uint8_t>(wire::KeyAlgorithm::Aes256CtsHmacSha384) ||
      !wire::is_krb_algorithm(shape.key.algorithm))
    throw FormatError(Component::Server, "preparation header: not a Kerberos key algorithm");
  shape.label_set = reader.u64();
  const std::uint8_t circuit = reader.u8();
  if (!wire::is_valid_circuit_id(circuit) || !wire::is_krb_circuit(static_cast<wire::CircuitId>(circuit)))
    throw FormatError(Component::Server, "preparation header: not a Kerberos circuit");
  shape.circuit.id = static_cast<wire::CircuitId>(circuit);
  shape.circuit.data_bytes = reader.u32();
  shape.circuit.combine = reader.u32();
  shape.secret.offset = reader.u32();
  shape.secret.bytes = reader.u32();
  shape.public_bytes = reader.u32();
  return shape;
}

}  // namespace

std::vector<std::uint8_t> encode_preparation_header(const PreparationHeader& header) {
  if (header.dropped.size() > kMaxDroppedPerHeader)
    throw Error(Component::Server, "preparation header: too many dropped shapes");
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  writer.u32(kPreparationMagic);
  writer.u64(header.garbler);
  writer.u64(header.id);
  writer.u64(header.stream_bytes);
  write_shape(writer, header.shape);
  writer.u16(static_cast<std::uint16_t>(header.dropped.size()));
  for (const auto& shape : header.dropped) write_shape(writer, shape);
  return out;
}

PreparationHeader decode_preparation_header(std::span<const std::uint8_t> bytes) {
  ByteReader reader(bytes, Component::Server);
  if (reader.u32() != kPreparationMagic) throw FormatError(Component::Server, "preparation header: wrong magic");
  PreparationHeader header;
  header.garbler = reader.u64();
  if (header.garbler == 0) throw FormatError(Component::Server, "preparation header: garbler instance 0");
  header.id = reader.u64();
  header.stream_bytes = reader.u64();
  header.shape = read_shape(reader);
  const std::uint16_t dropped = reader.u16();
  if (dropped > kMaxDroppedPerHeader) throw FormatError(Component::Server, "preparation header: too many dropped shapes");
  for (std::uint16_t i = 0; i < dropped; ++i) header.dropped.push_back(read_shape(reader));
  reader.expect_end();
  return header;
}

}  // namespace mpc::two_party_engine
