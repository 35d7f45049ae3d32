// Output opening with re-randomised shares (see output.hpp): party i sends
// (x_i ^ F(k_i), a_i ^ F(k_{i-1})); the client reconstructs v = a'_i ^ x'_{i-1} three
// ways and rejects on disagreement (Araki et al., CCS 2016, eprint 2016/768).
#include "protocol/rss3/output.hpp"

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc::rss3 {

void mask_output_share(CorrelatedRandomness& randomness, std::size_t offset, ByteShare& share) {
  if (share.x.size() != share.a.size())
    throw Error(Component::Protocol, "output share components differ in length");
  const std::size_t n = share.x.size();
  if (n == 0) return;
  SecretBytes own(n);
  SecretBytes previous(n);
  randomness.output_masks(offset, own.span(), previous.span());
  for (std::size_t j = 0; j < n; ++j) {
    share.x[j] ^= own[j];
    share.a[j] ^= previous[j];
  }
}

std::vector<std::uint8_t> open_output(const std::array<ByteShare, kParties>& masked) {
  // The masks cancel pairwise (a'_i and x'_{i-1} both carry F(k_{i-1})), so opening is
  // ordinary three-way reconstruction; it throws Error(Protocol) on disagreement.
  return reconstruct_bytes(masked);
}

}  // namespace mpc::rss3
