#include "engines/two_party/checked_part.hpp"

#include "engines/two_party/and_material_stock.hpp"
#include "protocol/auth2/share_check_protocol.hpp"

namespace mpc::two_party_engine {

auth2::PaddedRun run_checked_part(auth2::Session& job, int party, const CheckedCircuit& part,
                                  std::span<const auth2::AndMaterial> material, std::uint64_t first_entry,
                                  std::span<const std::uint8_t> own_inputs, std::span<const std::uint8_t> public_inputs,
                                  const client_checks::ShareCheck& check) {
  job.set_next_tweak(kJobTweaksPerEntry * first_entry);
  const auth2::CircuitMasks masks = auth2::prepare_masks(job, *part.circuit, *part.owners, material);
  auth2::PaddedRun run = auth2::evaluate_padded(job, *part.circuit, *part.owners, masks, own_inputs, public_inputs,
                                                part.first_known, part.second_known);
  auth2::check_committed_shares(job, masks, run.masked_inputs, party == 0 ? part.first_committed : part.second_committed,
                                party == 0 ? part.second_committed : part.first_committed, check.peer_rows,
                                check.peer_sketch);
  return run;
}

}  // namespace mpc::two_party_engine
