// auth2_bench: the preprocessing of actively secure two-party computation between two threads
// over an in-memory channel: authenticated bits, leaky AND triples and bucketed AND triples per
// second, and bytes per item (both directions). Each figure is the best of --repeat runs of one
// session (its base OTs run before the first timed call). Then AES-128 blocks: their triples,
// masks and online run, plain and, alternating block by block, with the client's checks (the
// outputs padded, protocol/auth2/padded_circuit.hpp, and both key shares checked inside the
// circuit, engines/two_party/checked_part.hpp) as a two-server cluster of security = "active"
// runs them: those take triples of their own, for their share checks' AND gates.
//
// AND material (a triple and a mask per entry) is also timed as a server makes it: B batches of
// 65,536 entries on one session.
//
//   auth2_bench [--triples N] [--repeat R] [--material-batches B] [--json]
#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "circuits/aes.hpp"
#include "circuits/aes_shared_key.hpp"
#include "circuits/extra_inputs.hpp"
#include "common/batch_memory.hpp"
#include "pair_timing.hpp"
#include "protocol/auth2/and_triples.hpp"
#include "protocol/auth2/auth_bits.hpp"
#include "protocol/auth2/authenticated_garbling.hpp"
#include "protocol/auth2/padded_circuit.hpp"
#include "engines/two_party/checked_part.hpp"
#include "protocol/client_checks/share_checks.hpp"

namespace {

using namespace mpc;
using bench::Figure;
using bench::measure;

circuits::Circuit shared_key_aes128() {
  return circuits::build_shared_key_aes_circuit(circuits::AesKeySize::Aes128, circuits::AesDirection::Encrypt,
                                                circuits::SboxVariant::And32, 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t triples = 1 << 18;
  int repeat = 3;
  int material_batches = 8;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--triples" && i + 1 < argc) triples = std::stoul(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc) repeat = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--material-batches" && i + 1 < argc) material_batches = std::max(1, std::stoi(argv[++i]));
    else if (arg == "--json") json = true;
    else {
      std::cerr << "usage: auth2_bench [--triples N] [--repeat R] [--material-batches B] [--json]\n";
      return 2;
    }
  }
  if (triples == 0) {
    std::cerr << "auth2_bench: --triples must be positive\n";
    return 2;
  }
  keep_freed_batch_memory();  // as mpc-server does, so that the figures are what it would make
  auto [a, b] = two_party::make_memory_channel_pair(std::chrono::milliseconds(120000), 1 << 20);
  auth2::Session first(*a, auth2::Role::First), second(*b, auth2::Role::Second);
  measure(*a, *b, 1, [&] { first.delta(); }, [&] { second.delta(); });

  const std::size_t bits = 3 * triples;
  const Figure random_bits = measure(
      *a, *b, repeat, [&] { first.random_bits(bits); }, [&] { second.random_bits(bits); });
  const Figure leaky = measure(
      *a, *b, repeat, [&] { auth2::leaky_triples(first, triples); }, [&] { auth2::leaky_triples(second, triples); });
  const Figure bucketed = measure(
      *a, *b, repeat, [&] { auth2::and_triples(first, triples); }, [&] { auth2::and_triples(second, triples); });
  // AND material as a server stocks it: batches of kMaterialBatch entries one after another
  // on one session (engines/two_party/gc2_backend.hpp, preprocess_batch).
  constexpr std::size_t kMaterialBatch = 65536;
  const Figure material = measure(
      *a, *b, repeat,
      [&] {
        for (int batch = 0; batch < material_batches; ++batch) (void)auth2::and_material(first, kMaterialBatch);
      },
      [&] {
        for (int batch = 0; batch < material_batches; ++batch) (void)auth2::and_material(second, kMaterialBatch);
      });
  const double material_entries = static_cast<double>(kMaterialBatch) * material_batches;

  // AES-128 blocks: the triples of `aes_blocks` blocks in one call, then per block its masks
  // (function-dependent preprocessing) and its garbling and evaluation (online).
  const circuits::Circuit aes = shared_key_aes128();
  const std::size_t ands = auth2::and_gate_count(aes), aes_blocks = std::max<std::size_t>(1, triples / ands);
  const auth2::InputOwners owners{auth2::Owner::First, auth2::Owner::Second, auth2::Owner::Public};
  std::vector<std::uint8_t> first_inputs(aes.input_widths[0], 1), second_inputs(aes.input_widths[1], 0), block(128, 1);
  std::vector<auth2::AuthTriple> first_triples, second_triples;
  const Figure aes_triples = measure(
      *a, *b, 1, [&] { first_triples = auth2::and_triples(first, ands * aes_blocks); },
      [&] { second_triples = auth2::and_triples(second, ands * aes_blocks); });
  // The same circuit with the client's checks: each server's blinding, the share checks' keys
  // and tags, then the two pads.
  const std::uint32_t blinding[] = {client_checks::kCheckBits, client_checks::kCheckBits};
  const std::vector<std::uint8_t> share_bytes(aes.input_widths[0] / 8, 0x5a);
  const client_checks::Segment whole[] = {{0, share_bytes.size()}};
  const auto share_checks = client_checks::deal_share_checks(share_bytes, share_bytes, whole);
  const std::uint32_t share_bits = aes.input_widths[0];
  const auto committed = [&](std::uint32_t party) {
    std::vector<std::uint32_t> wires(share_bits);
    for (std::uint32_t i = 0; i < share_bits; ++i) wires[i] = party * share_bits + i;
    for (std::uint32_t k = 0; k < client_checks::kCheckBits; ++k)
      wires.push_back(2 * share_bits + 128 + party * static_cast<std::uint32_t>(client_checks::kCheckBits) + k);
    return wires;
  };
  const circuits::Circuit checked = auth2::padded_circuit(
      two_party_engine::with_share_checks(circuits::with_extra_inputs(aes, blinding), committed(0), committed(1)), 0,
      two_party_engine::kShareCheckVerdicts);
  const auth2::InputOwners checked_owners = auth2::padded_owners(two_party_engine::share_check_owners(
      {auth2::Owner::First, auth2::Owner::Second, auth2::Owner::Public, auth2::Owner::First, auth2::Owner::Second}));
  const std::size_t checked_ands = auth2::and_gate_count(checked);
  const auto aes_slots = std::make_shared<const auth2::WireSlots>(auth2::plan_slots(aes));
  const auto checked_slots = std::make_shared<const auth2::WireSlots>(auth2::plan_slots(checked));
  std::vector<auth2::AuthTriple> first_checked_triples, second_checked_triples;
  const Figure checked_triples = measure(
      *a, *b, 1, [&] { first_checked_triples = auth2::and_triples(first, checked_ands * aes_blocks); },
      [&] { second_checked_triples = auth2::and_triples(second, checked_ands * aes_blocks); });
  const auto checked_inputs = [&](std::size_t party) {
    std::vector<std::uint8_t> bits;
    for (const auto byte : share_bytes)
      for (int k = 0; k < 8; ++k) bits.push_back((byte >> k) & 1);
    const auto blinding_bits = two_party_engine::blinding_bits(share_checks[party], 0);
    const auto check_bits = two_party_engine::share_check_inputs(share_checks[party], 0);
    bits.insert(bits.end(), blinding_bits.begin(), blinding_bits.end());
    bits.insert(bits.end(), check_bits.begin(), check_bits.end());
    bits.resize(bits.size() + 128 + client_checks::kPadCheckBits, static_cast<std::uint8_t>(party));
    return bits;
  };
  const std::vector<std::uint8_t> first_checked = checked_inputs(0), second_checked = checked_inputs(1);
  Figure aes_masks{0, 0}, aes_online{0, 0}, checked_masks{0, 0}, checked_online{0, 0};
  for (std::size_t k = 0; k < aes_blocks; ++k) {
    auth2::CircuitMasks first_masks, second_masks;
    const auto part = [&](const std::vector<auth2::AuthTriple>& all) {
      return std::span<const auth2::AuthTriple>(all.data() + k * ands, ands);
    };
    const Figure masks = measure(
        *a, *b, 1, [&] { first_masks = auth2::prepare_masks(first, aes, owners, part(first_triples), aes_slots); },
        [&] { second_masks = auth2::prepare_masks(second, aes, owners, part(second_triples), aes_slots); });
    const Figure online = measure(
        *a, *b, 1, [&] { auth2::evaluate_authenticated(first, aes, owners, first_masks, first_inputs, block, auth2::Outputs::Shares); },
        [&] { auth2::evaluate_authenticated(second, aes, owners, second_masks, second_inputs, block, auth2::Outputs::Shares); });
    aes_masks.seconds += masks.seconds;
    aes_masks.bytes += masks.bytes;
    aes_online.seconds += online.seconds;
    aes_online.bytes += online.bytes;
    // The same block's triples again (a benchmark may reuse them; a server never does), checked.
    const auto checked_part = [&](const std::vector<auth2::AuthTriple>& all) {
      return std::span<const auth2::AuthTriple>(all.data() + k * checked_ands, checked_ands);
    };
    const Figure masks_checked = measure(
        *a, *b, 1,
        [&] { first_masks = auth2::prepare_masks(first, checked, checked_owners, checked_part(first_checked_triples), checked_slots); },
        [&] { second_masks = auth2::prepare_masks(second, checked, checked_owners, checked_part(second_checked_triples), checked_slots); });
    const auto run_checked = [&](auth2::Session& session, const auth2::CircuitMasks& masks,
                                 const std::vector<std::uint8_t>& inputs) {
      const auth2::PaddedRun run = auth2::evaluate_padded(session, checked, checked_owners, masks, inputs, block, {}, {},
                                                          two_party_engine::kShareCheckVerdicts);
      if (run.revealed != std::vector<std::uint8_t>{1, 1}) throw std::runtime_error("auth2_bench: a share check failed");
    };
    const Figure online_checked = measure(
        *a, *b, 1, [&] { run_checked(first, first_masks, first_checked); },
        [&] { run_checked(second, second_masks, second_checked); });
    checked_masks.seconds += masks_checked.seconds;
    checked_masks.bytes += masks_checked.bytes;
    checked_online.seconds += online_checked.seconds;
    checked_online.bytes += online_checked.bytes;
  }
  const double blocks_done = static_cast<double>(aes_blocks);
  const double aes_total = aes_triples.seconds + aes_masks.seconds + aes_online.seconds;

  const double n = static_cast<double>(triples), nb = static_cast<double>(bits);
  const unsigned bucket = auth2::bucket_size(triples);
  if (json) {
    std::cout << "{\"triples\": " << triples << ", \"bucket_size\": " << bucket
              << ", \"statistical_security\": " << auth2::kStatisticalSecurity
              << ", \"authenticated_bits_per_s\": " << nb / random_bits.seconds
              << ", \"authenticated_bit_bytes\": " << random_bits.bytes / nb
              << ", \"leaky_triples_per_s\": " << n / leaky.seconds << ", \"leaky_triple_bytes\": " << leaky.bytes / n
              << ", \"triples_per_s\": " << n / bucketed.seconds << ", \"triple_bytes\": " << bucketed.bytes / n
              << ", \"material_batch\": " << kMaterialBatch
              << ", \"material_entries_per_s\": " << material_entries / material.seconds
              << ", \"material_entry_bytes\": " << material.bytes / material_entries
              << ", \"aes128\": {\"and_gates\": " << ands << ", \"blocks\": " << aes_blocks
              << ", \"triples_ms_per_block\": " << aes_triples.seconds * 1e3 / blocks_done
              << ", \"triple_bytes_per_block\": " << aes_triples.bytes / blocks_done
              << ", \"masks_ms_per_block\": " << aes_masks.seconds * 1e3 / blocks_done
              << ", \"mask_bytes_per_block\": " << aes_masks.bytes / blocks_done
              << ", \"online_ms_per_block\": " << aes_online.seconds * 1e3 / blocks_done
              << ", \"online_bytes_per_block\": " << aes_online.bytes / blocks_done
              << ", \"checked_and_gates\": " << checked_ands
              << ", \"checked_triples_ms_per_block\": " << checked_triples.seconds * 1e3 / blocks_done
              << ", \"checked_triple_bytes_per_block\": " << checked_triples.bytes / blocks_done
              << ", \"checked_masks_ms_per_block\": " << checked_masks.seconds * 1e3 / blocks_done
              << ", \"checked_mask_bytes_per_block\": " << checked_masks.bytes / blocks_done
              << ", \"checked_online_ms_per_block\": " << checked_online.seconds * 1e3 / blocks_done
              << ", \"checked_online_bytes_per_block\": " << checked_online.bytes / blocks_done
              << ", \"blocks_per_s\": " << blocks_done / aes_total << "}}\n";
  } else {
    std::cout << "authenticated bits: " << nb / random_bits.seconds / 1e6 << " M/s, " << random_bits.bytes / nb
              << " bytes/bit\n"
              << "leaky AND triples:  " << n / leaky.seconds / 1e6 << " M/s, " << leaky.bytes / n << " bytes/triple\n"
              << "AND triples:        " << n / bucketed.seconds / 1e6 << " M/s, " << bucketed.bytes / n
              << " bytes/triple (buckets of " << bucket << ", 2^-" << auth2::kStatisticalSecurity << ")\n"
              << "AND material:       " << material_entries / material.seconds / 1e6 << " M entries/s, "
              << material.bytes / material_entries << " bytes/entry (" << material_batches << " batches of "
              << kMaterialBatch << ")\n"
              << "(" << triples << " triples per call, best of " << repeat << ", both directions counted)\n"
              << "AES-128, " << ands << " ANDs, " << aes_blocks << " blocks: triples "
              << aes_triples.seconds * 1e3 / blocks_done << " ms and " << aes_triples.bytes / blocks_done / 1e6
              << " MB per block, masks " << aes_masks.seconds * 1e3 / blocks_done << " ms and "
              << aes_masks.bytes / blocks_done / 1e3 << " kB, online " << aes_online.seconds * 1e3 / blocks_done
              << " ms and " << aes_online.bytes / blocks_done / 1e3 << " kB; " << blocks_done / aes_total
              << " blocks/s in all\n"
              << "with the client's checks (pads, share checks, " << checked_ands << " ANDs): triples "
              << checked_triples.seconds * 1e3 / blocks_done << " ms, masks " << checked_masks.seconds * 1e3 / blocks_done
              << " ms and " << checked_masks.bytes / blocks_done / 1e3 << " kB, online "
              << checked_online.seconds * 1e3 / blocks_done << " ms and " << checked_online.bytes / blocks_done / 1e3
              << " kB\n";
  }
  return 0;
}
