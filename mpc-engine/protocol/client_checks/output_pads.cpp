#include "protocol/client_checks/output_pads.hpp"

#include <sodium.h>

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::client_checks {

PadSeed part_pad(const PadSeed& job, std::uint32_t part) {
  static constexpr char kContext[] = "mpc-kdc output pad part";
  std::uint8_t message[sizeof kContext + 4];
  std::copy_n(kContext, sizeof kContext, message);
  for (int b = 0; b < 4; ++b) message[sizeof kContext + b] = static_cast<std::uint8_t>(part >> (8 * b));
  PadSeed out{};
  crypto_generichash(out.data(), out.size(), message, sizeof message, job.data(), job.size());
  return out;
}

std::array<std::uint8_t, kPartReportBytes> serialize(const PartReport& report) {
  std::array<std::uint8_t, kPartReportBytes> out{};
  auto at = std::copy(report.check_seed.begin(), report.check_seed.end(), out.begin());
  at = std::copy(report.first_check.begin(), report.first_check.end(), at);
  std::copy(report.second_check.begin(), report.second_check.end(), at);
  return out;
}

PartReport parse_part_report(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kPartReportBytes)
    throw FormatError(Component::Protocol, "a padded part's report of " + std::to_string(bytes.size()) + " bytes, not " +
                                               std::to_string(kPartReportBytes));
  PartReport report;
  std::copy_n(bytes.begin(), report.check_seed.size(), report.check_seed.begin());
  std::copy_n(bytes.begin() + kSeedBytes, report.first_check.size(), report.first_check.begin());
  std::copy_n(bytes.begin() + kSeedBytes + report.first_check.size(), report.second_check.size(),
              report.second_check.begin());
  return report;
}

PadSeed pad_of_seed(std::span<const std::uint8_t, kSeedBytes> seed) {
  static constexpr char kContext[] = "mpc-kdc output pad of a seeded job";
  PadSeed out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(kContext), sizeof kContext,
                     seed.data(), seed.size());
  return out;
}

std::vector<std::uint8_t> pad_bits(const PadSeed& seed, std::size_t outputs) {
  const std::size_t count = outputs + kPadCheckBits;
  SecretBytes packed((count + 7) / 8);
  randombytes_buf_deterministic(packed.data(), packed.size(), seed.data());
  std::vector<std::uint8_t> bits(count);
  for (std::size_t i = 0; i < count; ++i) bits[i] = (packed[i / 8] >> (i % 8)) & 1;
  return bits;
}

namespace {

// The checked vector of one server: its pad's output bits, the known inputs, its check bits.
std::vector<std::uint8_t> checked_vector(const std::vector<std::uint8_t>& pad, std::size_t outputs,
                                         std::span<const std::uint8_t> known) {
  std::vector<std::uint8_t> out(pad.begin(), pad.begin() + static_cast<std::ptrdiff_t>(outputs));
  out.insert(out.end(), known.begin(), known.end());
  out.insert(out.end(), pad.begin() + static_cast<std::ptrdiff_t>(outputs), pad.end());
  return out;
}

}  // namespace

std::vector<std::uint8_t> open_part(std::span<const std::uint8_t> masked_bits, const PartReport& first,
                                    const PartReport& second, const PadSeed& first_pad, const PadSeed& second_pad,
                                    std::span<const std::uint8_t> first_known,
                                    std::span<const std::uint8_t> second_known) {
  if (!(first == second))
    throw VerificationError(Component::Protocol, "padded outputs: the two servers reported different pad checks",
                            "server_reports");
  const std::size_t outputs = masked_bits.size();
  std::vector<std::uint8_t> p1 = pad_bits(first_pad, outputs), p2 = pad_bits(second_pad, outputs);
  std::vector<std::uint8_t> v1 = checked_vector(p1, outputs, first_known), v2 = checked_vector(p2, outputs, second_known);
  const bool first_holds = CheckRows(first.check_seed, outputs + first_known.size()).check(v1) == first.first_check;
  const bool second_holds = CheckRows(first.check_seed, outputs + second_known.size()).check(v2) == first.second_check;
  wipe(v1.data(), v1.size());
  wipe(v2.data(), v2.size());
  if (!first_holds || !second_holds) {
    wipe(p1.data(), p1.size());
    wipe(p2.data(), p2.size());
    throw VerificationError(Component::Protocol,
                            std::string("padded outputs: server ") + (first_holds ? "2" : "1") +
                                " computed with another pad than the client's",
                            "pad_check", first_holds ? 1 : 0);
  }
  std::vector<std::uint8_t> out(outputs);
  for (std::size_t j = 0; j < outputs; ++j) out[j] = (masked_bits[j] ^ p1[j] ^ p2[j]) & 1;
  wipe(p1.data(), p1.size());
  wipe(p2.data(), p2.size());
  return out;
}

}  // namespace mpc::client_checks
