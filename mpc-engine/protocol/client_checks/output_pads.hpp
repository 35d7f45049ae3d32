// One-time pads on the outputs of a two-party computation, so that a client that trusts
// neither server still gets the outputs right. With outputs kept as XOR shares, a deviating
// server shifts the client's result by a value of its choosing (its own share XOR anything),
// and the client cannot tell. Instead the client gives each server a pad (server 1 p_1, server
// 2 p_2, each from a seed of the client's, `outputs` bits then kPadCheckBits check bits t_i);
// the servers compute, with a protocol that lets neither alter the other's input or the
// function (protocol/auth2/padded_circuit.hpp), y = z ^ p_1 ^ p_2 for the outputs z, learn y
// both, and each hands it to the client, which takes it only if both hand the same. y tells
// neither server anything of z: the other's pad is uniform to it.
//
// A server could still feed another pad than the client's, p_i ^ d, and shift z by d. So once
// every input is fixed the servers toss a seed neither chooses and open, for each pad, the
// check c_i = R p_i ^ t_i, R the kPadCheckBits x outputs binary matrix drawn from that seed.
// The client recomputes c_i from the pads it gave: a pad fed as p_i ^ d with check bits t_i ^ e
// passes only if R d = e, which for (d, e) != 0 fixed before R holds with probability 2^-64.
// t_i is uniform, so c_i tells the servers nothing of p_i. A job of several circuits (parts)
// has a pad and a check per part, each part's pad from its own seed (part_pad).
//
// This file is what the client and the servers share: the pads, the check, the report a
// server hands over and the client's opening of two reports.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "protocol/client_checks/check_rows.hpp"

namespace mpc::client_checks {

inline constexpr std::size_t kPadCheckBits = kCheckBits;
using PadSeed = std::array<std::uint8_t, kSeedBytes>;

// What a server hands the client for one part: the same from both when neither deviated.
struct PartReport {
  CheckSeed check_seed{};             // the seed of R, tossed once the part's inputs were fixed
  CheckBits first_check{}, second_check{};  // c_1 and c_2, packed
  bool operator==(const PartReport&) const = default;
};
inline constexpr std::size_t kPartReportBytes = kSeedBytes + 2 * (kPadCheckBits / 8);
// A report as it travels: the check seed, then c_1, then c_2.
std::array<std::uint8_t, kPartReportBytes> serialize(const PartReport& report);
// Throws FormatError(Protocol) unless `bytes` is kPartReportBytes long.
PartReport parse_part_report(std::span<const std::uint8_t> bytes);

// The pad of part `part` of a job whose pad seed is `job`: parts draw unrelated pads.
PadSeed part_pad(const PadSeed& job, std::uint32_t part);

// The pad seed of a job whose request already gives each server a secret seed of its own (a
// Kerberos job's record-mask seed, wire/krb_record_mask.hpp): derived from it, unrelated to
// the stream the seed keys.
PadSeed pad_of_seed(std::span<const std::uint8_t, kSeedBytes> seed);

// A pad of `outputs` bits then its kPadCheckBits check bits (0/1 bytes), from its seed.
std::vector<std::uint8_t> pad_bits(const PadSeed& seed, std::size_t outputs);

// The client: the `outputs` output bits of one part (0/1 bytes) from y (the same from both
// servers: the caller compares the two copies) and the two servers' reports on it, given the
// seeds of the pads it gave them. Throws VerificationError: "server_reports" when the reports
// differ, "pad_check" when a server computed with another pad than the client's.
// `first_known`, `second_known`: the bits of other inputs of each server the client knows and
// the servers' checks cover after the pads' (protocol/auth2/padded_circuit.hpp), 0/1 bytes.
std::vector<std::uint8_t> open_part(std::span<const std::uint8_t> masked_bits, const PartReport& first,
                                    const PartReport& second, const PadSeed& first_pad, const PadSeed& second_pad,
                                    std::span<const std::uint8_t> first_known = {},
                                    std::span<const std::uint8_t> second_known = {});

}  // namespace mpc::client_checks
