// libFuzzer target: messages between servers (batch headers, layer messages, aborts, request
// notes, hellos, pair checks). Accepted batches, aborts, notes, hellos and pair checks must
// re-encode to the same bytes; a layer's payload must be the rest of the frame, in place; a
// frame that unwraps as a two-party engine's (Degraded) must never decode as a three-party one.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <variant>
#include <vector>

#include "common/error.hpp"
#include "wire/peer_messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> frame(data, size);
  const bool wrapped = mpc::wire::unwrap_degraded(frame).has_value();
  mpc::wire::PeerMessage message;
  try {
    message = mpc::wire::decode_peer_message(frame);
  } catch (const mpc::FormatError&) {
    return 0;
  }
  if (wrapped) std::abort();
  std::vector<std::uint8_t> encoded;
  if (const auto* batch = std::get_if<mpc::wire::BatchHeader>(&message)) {
    // Only a batch that prepares a garbling has no job; one that uses it names an earlier batch.
    using mpc::wire::KrbEvaluation;
    const bool prepares = batch->krb_evaluation == KrbEvaluation::PrepareTwice;
    if (batch->slices.empty() != prepares || batch->slices.size() > mpc::wire::kMaxBatchSlices) std::abort();
    if (batch->krb_evaluation == KrbEvaluation::PreparedTwice &&
        (batch->slices.size() != 1 || batch->prepared == 0 || batch->prepared >= batch->sequence))
      std::abort();
    if (batch->krb_evaluation != KrbEvaluation::PreparedTwice && batch->prepared != 0) std::abort();
    encoded = mpc::wire::encode_batch(*batch);
  } else if (const auto* notice = std::get_if<mpc::wire::AbortNotice>(&message)) {
    encoded = mpc::wire::encode_abort(*notice);
  } else if (const auto* notes = std::get_if<std::vector<mpc::wire::RequestNote>>(&message)) {
    if (notes->empty() || notes->size() > mpc::wire::kMaxNotesPerMessage) std::abort();
    encoded = mpc::wire::encode_notes(*notes);
  } else if (const auto* hello = std::get_if<mpc::wire::Hello>(&message)) {
    encoded = mpc::wire::encode_hello(*hello);
  } else if (const auto* deals = std::get_if<std::vector<mpc::wire::PairCheckDeal>>(&message)) {
    if (deals->empty() || deals->size() > mpc::wire::kMaxPairChecksPerMessage) std::abort();
    encoded = mpc::wire::encode_pair_checks(*deals);
  } else {
    const auto& layer = std::get<mpc::wire::DecodedLayer>(message);
    if (size < mpc::wire::kLayerHeaderBytes || layer.payload.data() != data + mpc::wire::kLayerHeaderBytes ||
        layer.payload.size() != size - mpc::wire::kLayerHeaderBytes)
      std::abort();
    encoded.assign(data, data + size);
    std::memset(encoded.data(), 0, mpc::wire::kLayerHeaderBytes);
    mpc::wire::write_layer_header(layer.header, encoded);
  }
  if (encoded.size() != size || std::memcmp(encoded.data(), data, size) != 0) std::abort();
  return 0;
}
