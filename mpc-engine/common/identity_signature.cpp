#include "common/identity_signature.hpp"

#include <openssl/bn.h>
#include <sodium.h>

#include <algorithm>
#include <memory>

#include "common/error.hpp"
#include "common/secret.hpp"

namespace mpc {
namespace {

using Scalar = std::array<std::uint8_t, 32>;

Scalar reduce_wide(const std::uint8_t (&wide)[64]) {
  Scalar out;
  crypto_core_ed25519_scalar_reduce(out.data(), wide);
  return out;
}

class Sha512 {
 public:
  Sha512() { crypto_hash_sha512_init(&state_); }
  ~Sha512() { wipe(&state_, sizeof state_); }
  Sha512& update(std::span<const std::uint8_t> data) {
    crypto_hash_sha512_update(&state_, data.data(), data.size());
    return *this;
  }
  // The digest as a scalar mod q.
  Scalar scalar() {
    std::uint8_t wide[64];
    crypto_hash_sha512_final(&state_, wide);
    const Scalar out = reduce_wide(wide);
    wipe(wide, sizeof wide);
    return out;
  }

 private:
  crypto_hash_sha512_state state_;
};

struct BnFree {
  void operator()(BIGNUM* n) const { BN_free(n); }
  void operator()(BN_CTX* c) const { BN_CTX_free(c); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;

Bn little_endian(std::span<const std::uint8_t> bytes) {
  Bn n(BN_lebin2bn(bytes.data(), static_cast<int>(bytes.size()), nullptr));
  if (!n) throw Error(Component::Protocol, "out of memory converting a public key");
  return n;
}

}  // namespace

IdentitySigner::IdentitySigner(std::span<const std::uint8_t> x25519_secret) {
  if (x25519_secret.size() != 32) throw Error(Component::Protocol, "an X25519 secret key has 32 bytes");
  if (sodium_init() < 0) throw Error(Component::Protocol, "libsodium failed to initialise");
  Scalar k;
  std::copy(x25519_secret.begin(), x25519_secret.end(), k.begin());
  k[0] &= 248;
  k[31] &= 127;
  k[31] |= 64;
  EdwardsPublicKey point;
  if (crypto_scalarmult_ed25519_base_noclamp(point.data(), k.data()) != 0) {
    wipe(k.data(), k.size());
    throw Error(Component::Protocol, "an X25519 secret key that gives no signing key");
  }
  std::uint8_t wide[64] = {};
  std::copy(k.begin(), k.end(), wide);
  Scalar positive = reduce_wide(wide);
  Scalar negative;
  crypto_core_ed25519_scalar_negate(negative.data(), positive.data());
  // a = k or -k, whichever gives the point with sign bit 0; chosen without a branch on it.
  const auto negate = static_cast<std::uint8_t>(-(point[31] >> 7));
  for (std::size_t i = 0; i < scalar_.size(); ++i)
    scalar_[i] = static_cast<std::uint8_t>((positive[i] & ~negate) | (negative[i] & negate));
  public_key_ = point;
  public_key_[31] &= 0x7f;
  wipe(k.data(), k.size());
  wipe(wide, sizeof wide);
  wipe(positive.data(), positive.size());
  wipe(negative.data(), negative.size());
}

IdentitySigner::~IdentitySigner() { wipe(scalar_.data(), scalar_.size()); }

IdentitySignature IdentitySigner::sign(std::span<const std::uint8_t> message) const {
  // hash_1 of XEdDSA: SHA-512 prefixed with the 32 bytes of 2^256 - 2, little-endian.
  std::uint8_t prefix[32];
  std::fill(std::begin(prefix), std::end(prefix), std::uint8_t{0xff});
  prefix[0] = 0xfe;
  std::uint8_t fresh[64];
  randombytes_buf(fresh, sizeof fresh);
  Scalar r = Sha512().update(prefix).update(scalar_).update(message).update(fresh).scalar();
  IdentitySignature signature;
  if (crypto_scalarmult_ed25519_base_noclamp(signature.data(), r.data()) != 0) {
    wipe(r.data(), r.size());
    throw Error(Component::Protocol, "signing drew a zero nonce");
  }
  const Scalar h = Sha512()
                       .update({signature.data(), 32})
                       .update(public_key_)
                       .update(message)
                       .scalar();
  Scalar product;
  crypto_core_ed25519_scalar_mul(product.data(), h.data(), scalar_.data());
  crypto_core_ed25519_scalar_add(signature.data() + 32, r.data(), product.data());
  wipe(r.data(), r.size());
  wipe(product.data(), product.size());
  wipe(fresh, sizeof fresh);
  return signature;
}

std::optional<EdwardsPublicKey> edwards_public_key(std::span<const std::uint8_t, 32> x25519_public) {
  // y = (u - 1) / (u + 1) mod p, p = 2^255 - 19. Public values only: no constant-time need.
  std::unique_ptr<BN_CTX, BnFree> context(BN_CTX_new());
  Bn p(BN_new()), one(BN_new()), numerator(BN_new()), denominator(BN_new()), y(BN_new());
  if (!context || !p || !one || !numerator || !denominator || !y)
    throw Error(Component::Protocol, "out of memory converting a public key");
  BN_set_word(p.get(), 1);
  BN_lshift(p.get(), p.get(), 255);
  BN_sub_word(p.get(), 19);
  BN_one(one.get());
  const Bn u = little_endian(x25519_public);
  if (BN_cmp(u.get(), p.get()) >= 0) return std::nullopt;
  BN_mod_sub(numerator.get(), u.get(), one.get(), p.get(), context.get());
  BN_mod_add(denominator.get(), u.get(), one.get(), p.get(), context.get());
  if (BN_is_zero(denominator.get())) return std::nullopt;
  if (BN_mod_inverse(denominator.get(), denominator.get(), p.get(), context.get()) == nullptr) return std::nullopt;
  BN_mod_mul(y.get(), numerator.get(), denominator.get(), p.get(), context.get());
  EdwardsPublicKey key{};
  if (BN_bn2lebinpad(y.get(), key.data(), static_cast<int>(key.size())) != static_cast<int>(key.size()))
    return std::nullopt;
  return key;  // bit 255 (the sign of x) is 0: y < p < 2^255
}

bool identity_signature_valid(std::span<const std::uint8_t, 32> x25519_public, std::span<const std::uint8_t> message,
                              const IdentitySignature& signature) {
  const auto key = edwards_public_key(x25519_public);
  if (!key) return false;
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(), key->data()) == 0;
}

}  // namespace mpc
