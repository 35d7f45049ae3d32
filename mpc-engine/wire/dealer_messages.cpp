#include "wire/dealer_messages.hpp"

#include "common/bytes.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::wire {
namespace {

constexpr std::uint8_t kVersion = 1;
enum class Type : std::uint8_t { Hello = 1, BatchRequest = 2, BatchSeed = 3, BatchEntries = 4, BatchRefused = 5 };

void check_count(std::uint64_t count, const char* what) {
  if (count == 0 || count > kMaxDealerBatchEntries)
    throw FormatError(Component::Wire, std::string("dealer ") + what + ": " + std::to_string(count) +
                                           " entries, not 1.." + std::to_string(kMaxDealerBatchEntries));
}

void check_batch(std::uint64_t batch, const char* what) {
  if (batch == 0) throw FormatError(Component::Wire, std::string("dealer ") + what + ": batch id 0");
}

void write_entry(ByteWriter& writer, const lut2::Entry& entry) {
  for (const std::uint64_t word : entry.one_hot) writer.u64(word);
  writer.u8(entry.mask);
}

lut2::Entry read_entry(ByteReader& reader) {
  lut2::Entry entry;
  for (auto& word : entry.one_hot) word = reader.u64();
  entry.mask = reader.u8();
  return entry;
}

}  // namespace

DealerBatchSeed::~DealerBatchSeed() { wipe(seed.data(), seed.size()); }

DealerBatchEntries& DealerBatchEntries::operator=(DealerBatchEntries&& other) noexcept {
  if (this != &other) {
    wipe(entries.data(), entries.size() * sizeof(lut2::Entry));
    batch = other.batch;
    entries = std::move(other.entries);
  }
  return *this;
}

DealerBatchEntries::~DealerBatchEntries() { wipe(entries.data(), entries.size() * sizeof(lut2::Entry)); }

std::vector<std::uint8_t> encode_dealer(const DealerMessage& message) {
  std::vector<std::uint8_t> out;
  ByteWriter writer(out);
  writer.u8(kVersion);
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, DealerHello>) {
          writer.u8(static_cast<std::uint8_t>(Type::Hello));
        } else if constexpr (std::is_same_v<T, DealerBatchRequest>) {
          check_count(m.count, "batch request");
          writer.u8(static_cast<std::uint8_t>(Type::BatchRequest));
          writer.u64(m.request);
          writer.u32(m.count);
        } else if constexpr (std::is_same_v<T, DealerBatchSeed>) {
          check_count(m.count, "batch seed");
          check_batch(m.batch, "batch seed");
          writer.u8(static_cast<std::uint8_t>(Type::BatchSeed));
          writer.u64(m.request);
          writer.u64(m.batch);
          writer.u32(m.count);
          writer.bytes(m.seed);
        } else if constexpr (std::is_same_v<T, DealerBatchEntries>) {
          out = encode_dealer(m);
        } else {
          writer.u8(static_cast<std::uint8_t>(Type::BatchRefused));
          writer.u64(m.request);
          writer.short_string(m.reason.substr(0, kMaxDealerReasonBytes));
        }
      },
      message);
  return out;
}

std::vector<std::uint8_t> encode_dealer(const DealerBatchEntries& message) {
  check_count(message.entries.size(), "batch entries");
  check_batch(message.batch, "batch entries");
  std::vector<std::uint8_t> out;
  out.reserve(2 + 8 + 4 + message.entries.size() * kDealerEntryBytes);
  ByteWriter writer(out);
  writer.u8(kVersion);
  writer.u8(static_cast<std::uint8_t>(Type::BatchEntries));
  writer.u64(message.batch);
  writer.u32(static_cast<std::uint32_t>(message.entries.size()));
  for (const auto& entry : message.entries) write_entry(writer, entry);
  return out;
}

DealerMessage decode_dealer(std::span<const std::uint8_t> frame) {
  ByteReader reader(frame, Component::Wire);
  if (reader.u8() != kVersion) throw FormatError(Component::Wire, "dealer frame: unknown version");
  const std::uint8_t type = reader.u8();
  switch (static_cast<Type>(type)) {
    case Type::Hello:
      reader.expect_end();
      return DealerHello{};
    case Type::BatchRequest: {
      DealerBatchRequest m;
      m.request = reader.u64();
      m.count = reader.u32();
      check_count(m.count, "batch request");
      reader.expect_end();
      return m;
    }
    case Type::BatchSeed: {
      DealerBatchSeed m;
      m.request = reader.u64();
      m.batch = reader.u64();
      check_batch(m.batch, "batch seed");
      m.count = reader.u32();
      check_count(m.count, "batch seed");
      m.seed = reader.array<32>();
      reader.expect_end();
      return m;
    }
    case Type::BatchEntries: {
      DealerBatchEntries m;
      m.batch = reader.u64();
      check_batch(m.batch, "batch entries");
      const std::uint32_t count = reader.u32();
      check_count(count, "batch entries");
      // The length is checked before anything is allocated for the entries.
      if (reader.remaining() != count * kDealerEntryBytes)
        throw FormatError(Component::Wire, "dealer batch entries: " + std::to_string(reader.remaining()) +
                                               " bytes for " + std::to_string(count) + " entries");
      m.entries.resize(count);
      for (auto& entry : m.entries) entry = read_entry(reader);
      reader.expect_end();
      return m;
    }
    case Type::BatchRefused: {
      DealerBatchRefused m;
      m.request = reader.u64();
      m.reason = reader.short_string(kMaxDealerReasonBytes);
      reader.expect_end();
      return m;
    }
  }
  throw FormatError(Component::Wire, "dealer frame: unknown type " + std::to_string(type));
}

}  // namespace mpc::wire
