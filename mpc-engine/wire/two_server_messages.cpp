#include "wire/two_server_messages.hpp"

#include "common/bytes.hpp"
#include "common/error.hpp"

namespace mpc::wire {
namespace {

constexpr std::uint8_t kVersion = 1;
enum class Type : std::uint8_t { Announce = 1, Data = 2, Abort = 3, Started = 4 };
constexpr std::size_t kMaxReasonBytes = 1024;

}  // namespace

std::vector<std::uint8_t> encode_two_server(const TwoServerMessage& message) {
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  writer.u8(kVersion);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, TwoServerAnnounce>) {
          writer.u8(static_cast<std::uint8_t>(Type::Announce));
          writer.u64(m.job);
          writer.u8(static_cast<std::uint8_t>(m.kind));
          writer.bytes(m.client);
          writer.bytes(m.request);
          writer.u64(m.pool_epoch);
          writer.u64(m.pool_start);
          writer.u64(m.pool_entries);
          writer.u64(m.dealer_batch);
        } else if constexpr (std::is_same_v<T, TwoServerData>) {
          if (m.bytes.size() > kMaxTwoServerDataBytes)
            throw FormatError(Component::Wire, "two-server data frame over " + std::to_string(kMaxTwoServerDataBytes) +
                                                   " bytes");
          out.reserve(10 + m.bytes.size());
          writer.u8(static_cast<std::uint8_t>(Type::Data));
          writer.u64(m.job);
          writer.bytes(m.bytes);
        } else if constexpr (std::is_same_v<T, TwoServerAbort>) {
          writer.u8(static_cast<std::uint8_t>(Type::Abort));
          writer.u64(m.job);
          writer.short_string(m.reason.substr(0, kMaxReasonBytes));
        } else {
          writer.u8(static_cast<std::uint8_t>(Type::Started));
          writer.u64(m.job);
        }
      },
      message);
  return out;
}

TwoServerMessage decode_two_server(std::span<const std::uint8_t> frame) {
  ByteReader reader(frame, Component::Wire);
  if (reader.u8() != kVersion) throw FormatError(Component::Wire, "two-server frame: unknown version");
  const std::uint8_t type = reader.u8();
  const std::uint64_t job = reader.u64();
  switch (static_cast<Type>(type)) {
    case Type::Announce: {
      TwoServerAnnounce m;
      m.job = job;
      const std::uint8_t kind = reader.u8();
      if (kind != static_cast<std::uint8_t>(TwoServerJobKind::ClientRequest) &&
          kind != static_cast<std::uint8_t>(TwoServerJobKind::LutPreprocessing))
        throw FormatError(Component::Wire, "two-server announce: unknown job kind " + std::to_string(kind));
      m.kind = static_cast<TwoServerJobKind>(kind);
      m.client = reader.array<32>();
      m.request = reader.array<16>();
      m.pool_epoch = reader.u64();
      m.pool_start = reader.u64();
      m.pool_entries = reader.u64();
      m.dealer_batch = reader.u64();
      reader.expect_end();
      return m;
    }
    case Type::Data: {
      TwoServerData m;
      m.job = job;
      const auto rest = reader.rest();
      if (rest.size() > kMaxTwoServerDataBytes) throw FormatError(Component::Wire, "two-server data frame too large");
      m.bytes.assign(rest.begin(), rest.end());
      return m;
    }
    case Type::Abort: {
      TwoServerAbort m;
      m.job = job;
      m.reason = reader.short_string(kMaxReasonBytes);
      reader.expect_end();
      return m;
    }
    case Type::Started: {
      reader.expect_end();
      return TwoServerStarted{job};
    }
  }
  throw FormatError(Component::Wire, "two-server frame: unknown type " + std::to_string(type));
}

}  // namespace mpc::wire
