// The C interface over ClusterClient: no exception crosses it.
#include "client/mpc_client.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "client/cluster_client.hpp"
#include "client/dump_guard.hpp"
#include "common/error.hpp"
#include "common/secret.hpp"
#include "keys/key_algorithms.h"
#include "settings/cluster_settings.hpp"

struct mpc_client {
  std::unique_ptr<mpc::client::ClusterClient> cluster;
  std::string last_error;
};

namespace {

void copy_message(const std::string& message, char* buffer, size_t size) {
  if (buffer == nullptr || size == 0) return;
  const size_t length = std::min(message.size(), size - 1);
  std::memcpy(buffer, message.data(), length);
  buffer[length] = '\0';
}

int status_of(const mpc::Error& error) {
  if (dynamic_cast<const mpc::client::InvalidRequest*>(&error) != nullptr) return MPC_EINVAL;
  if (const auto* refused = dynamic_cast<const mpc::client::ServerError*>(&error)) {
    switch (refused->status()) {
      case mpc::wire::Status::PeerFailure:
      case mpc::wire::Status::Regrouping: return MPC_EUNREACHABLE;
      case mpc::wire::Status::UnknownNonce: return MPC_ENONCE;
      case mpc::wire::Status::RequestMismatch: return MPC_EDIVERGED;
      case mpc::wire::Status::VerificationFailed: return MPC_EABORT;
      default: return MPC_EREFUSED;
    }
  }
  if (dynamic_cast<const mpc::client::Disagreement*>(&error) != nullptr) return MPC_EMISMATCH;
  if (dynamic_cast<const mpc::client::VerificationError*>(&error) != nullptr) return MPC_EABORT;
  const std::string text = error.what();
  if (text.find("disagree") != std::string::npos) return MPC_EMISMATCH;
  if (error.component() == mpc::Component::Client) return MPC_EUNREACHABLE;
  if (error.component() == mpc::Component::Settings || error.component() == mpc::Component::Transport)
    return MPC_ECONFIG;
  return MPC_EINTERNAL;
}

template <typename Call>
int guarded(mpc_client* client, Call&& call) {
  if (client == nullptr) return MPC_EINVAL;
  try {
    call();
    client->last_error.clear();
    return MPC_OK;
  } catch (const mpc::Error& error) {
    client->last_error = error.what();
    return status_of(error);
  } catch (const std::exception& error) {
    client->last_error = error.what();
    return MPC_EINTERNAL;
  }
}

// The C arguments of a key id as the wire's: a name, and an algorithm the table has a row for.
// Whether the algorithm serves the call, and the name's rules, are the client's to check
// (mpc::client::InvalidRequest).
bool make_key_id(const char* name, uint32_t version, int algorithm, mpc::wire::KeyId& key, std::string& error) {
  if (name == nullptr) {
    error = "key name is NULL";
    return false;
  }
  const mpc_key_algorithm_info* row = mpc_key_algorithm_by_id(algorithm);
  if (row == nullptr) {
    error = "unknown key algorithm " + std::to_string(algorithm);
    return false;
  }
  key.name = name;
  key.version = version;
  key.algorithm = static_cast<mpc::wire::KeyAlgorithm>(algorithm);
  return true;
}

int ecb(mpc_client* client, const char* name, uint32_t version, int algorithm, const uint8_t* in, size_t length,
        uint8_t* out, bool decrypt) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId key;
  if (!make_key_id(name, version, algorithm, key, client->last_error)) return MPC_EINVAL;
  if (in == nullptr || out == nullptr) {
    client->last_error = "ECB input or output is NULL";
    return MPC_EINVAL;
  }
  if ((out < in + length) && (in < out + length)) {
    client->last_error = "input and output buffers overlap";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    const std::span<const uint8_t> blocks(in, length);
    const auto result = decrypt ? client->cluster->ecb_decrypt(key, blocks) : client->cluster->ecb_encrypt(key, blocks);
    std::memcpy(out, result.data(), length);
  });
}

bool overlap(const void* a, size_t a_length, const void* b, size_t b_length) {
  if (a_length == 0 || b_length == 0) return false;
  const auto first = reinterpret_cast<std::uintptr_t>(a);
  const auto second = reinterpret_cast<std::uintptr_t>(b);
  return first < second + b_length && second < first + a_length;
}

// The GCM input checks shared by tag and open: a pointer may be NULL only with length 0.
bool check_gcm_input(mpc_client* client, const uint8_t* nonce, const uint8_t* aad, size_t aad_length,
                     const uint8_t* ciphertext, size_t ciphertext_length) {
  if (nonce == nullptr) {
    client->last_error = "nonce is NULL";
    return false;
  }
  if ((aad == nullptr && aad_length != 0) || (ciphertext == nullptr && ciphertext_length != 0)) {
    client->last_error = "aad or ciphertext is NULL with a nonzero length";
    return false;
  }
  return true;
}

std::span<const uint8_t> bytes_or_empty(const uint8_t* data, size_t length) {
  return length == 0 ? std::span<const uint8_t>() : std::span<const uint8_t>(data, length);
}

// The combine argument of the mpc_client_krb_cf2_* calls as the wire carries it.
bool make_combine(mpc_client* client, const mpc_krb_combine* in, std::optional<mpc::wire::KrbCombine>& out) {
  if (in == nullptr) {
    client->last_error = "combine is NULL";
    return false;
  }
  if (mpc_key_algorithm_by_id(in->combined_algorithm) == nullptr) {
    client->last_error = "unknown combined key algorithm " + std::to_string(in->combined_algorithm);
    return false;
  }
  if (in->pepper == nullptr || in->mask == nullptr) {
    client->last_error = "combine pepper or mask is NULL";
    return false;
  }
  const auto combined = static_cast<mpc::wire::KeyAlgorithm>(in->combined_algorithm);
  try {
    mpc::client::require_key_length(combined, in->mask_length);  // before the mask is copied
  } catch (const mpc::client::InvalidRequest& invalid) {
    client->last_error = invalid.what();
    return false;
  }
  mpc::wire::KrbCombine combine;
  combine.combined = combined;
  combine.pepper = std::string(in->pepper, strnlen(in->pepper, mpc::wire::kKrbMaxPepperBytes + 1));
  combine.mask.assign(in->mask, in->mask + in->mask_length);
  out = std::move(combine);
  return true;
}

// The C checks shared by the Kerberos calls: the key id, and a data pointer that may be NULL
// only with length 0.
bool check_krb_call(mpc_client* client, const char* name, uint32_t version, int algorithm, const uint8_t* data,
                    size_t length, mpc::wire::KeyId& key) {
  if (!make_key_id(name, version, algorithm, key, client->last_error)) return false;
  if (data == nullptr && length != 0) {
    client->last_error = "input is NULL with a nonzero length";
    return false;
  }
  return true;
}

static_assert(MPC_GCM_NONCE_BYTES == mpc::wire::kGcmNonceBytes);
static_assert(MPC_GCM_TAG_BYTES == mpc::wire::kGcmTagBytes);
static_assert(MPC_GCM_MAX_HASH_BLOCKS == mpc::wire::kGcmHashPowers);
static_assert(MPC_KRB_CONFOUNDER_BYTES == mpc::wire::kKrbConfounderBytes);
static_assert(MPC_KRB_MAC_BYTES == mpc::wire::algorithm_row(mpc::wire::KeyAlgorithm::Aes128CtsHmacSha1).mac_bytes);
static_assert(MPC_KRB_MAX_DATA_BYTES == mpc::wire::kKrbMaxDataBytes);
static_assert(MPC_AES128_CTS_HMAC_SHA1_96 == static_cast<int>(mpc::wire::KeyAlgorithm::Aes128CtsHmacSha1));
static_assert(MPC_AES256_CTS_HMAC_SHA1_96 == static_cast<int>(mpc::wire::KeyAlgorithm::Aes256CtsHmacSha1));
static_assert(MPC_AES256_GCM == static_cast<int>(mpc::wire::KeyAlgorithm::Aes256Gcm));
static_assert(MPC_AES128_CTS_HMAC_SHA256_128 == static_cast<int>(mpc::wire::KeyAlgorithm::Aes128CtsHmacSha256));
static_assert(MPC_AES256_CTS_HMAC_SHA384_192 == static_cast<int>(mpc::wire::KeyAlgorithm::Aes256CtsHmacSha384));
static_assert(MPC_KRB_SHA256_MAC_BYTES ==
              mpc::wire::algorithm_row(mpc::wire::KeyAlgorithm::Aes128CtsHmacSha256).mac_bytes);
static_assert(MPC_KRB_SHA384_MAC_BYTES ==
              mpc::wire::algorithm_row(mpc::wire::KeyAlgorithm::Aes256CtsHmacSha384).mac_bytes);
static_assert(MPC_KRB_MAX_MAC_BYTES == mpc::wire::kKrbMaxMacBytes);

}  // namespace

extern "C" {

int mpc_client_open(const char* config_path, mpc_client** out, char* error_buffer, size_t error_buffer_size) {
  if (out == nullptr) return MPC_EINVAL;
  *out = nullptr;
  if (config_path == nullptr) {
    copy_message("configuration path is NULL", error_buffer, error_buffer_size);
    return MPC_EINVAL;
  }
  try {
    auto client = std::make_unique<mpc_client>();
    client->cluster = std::make_unique<mpc::client::ClusterClient>(mpc::settings::load_cluster_settings(config_path));
    *out = client.release();
    return MPC_OK;
  } catch (const std::exception& error) {
    copy_message(error.what(), error_buffer, error_buffer_size);
    return MPC_ECONFIG;
  }
}

int mpc_client_set_timeout(mpc_client* client, uint32_t milliseconds) {
  if (client == nullptr) return MPC_EINVAL;
  return guarded(client, [&] { client->cluster->set_timeout(std::chrono::milliseconds(milliseconds)); });
}

void mpc_client_close(mpc_client* client) { delete client; }

const char* mpc_client_last_error(const mpc_client* client) {
  if (client == nullptr) return "no client handle";
  return client->last_error.c_str();
}

int mpc_client_keystream(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                         const uint8_t counter[16], uint32_t blocks, uint8_t* out) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId key;
  if (!make_key_id(key_name, key_version, algorithm, key, client->last_error)) return MPC_EINVAL;
  if (counter == nullptr || out == nullptr) {
    client->last_error = "counter or output is NULL";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    std::array<uint8_t, 16> start{};
    std::memcpy(start.data(), counter, 16);
    const auto result = client->cluster->keystream(key, start, blocks);
    std::memcpy(out, result.data(), result.size());
  });
}

int mpc_client_ecb_encrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                           const uint8_t* in, size_t length, uint8_t* out) {
  return ecb(client, key_name, key_version, algorithm, in, length, out, false);
}

int mpc_client_ecb_decrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                           const uint8_t* in, size_t length, uint8_t* out) {
  return ecb(client, key_name, key_version, algorithm, in, length, out, true);
}

namespace {

int gcm_prefetch(mpc_client* client, const char* key_name, uint32_t key_version, uint32_t count,
                 uint32_t blocks_per_nonce, uint8_t* nonces, uint8_t* keystream, bool local_masks) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId key;
  if (!make_key_id(key_name, key_version, MPC_AES256_GCM, key, client->last_error)) return MPC_EINVAL;
  const size_t nonce_bytes = static_cast<size_t>(count) * MPC_GCM_NONCE_BYTES;
  const size_t keystream_bytes = static_cast<size_t>(count) * blocks_per_nonce * 16;
  if (nonces == nullptr || (keystream == nullptr && keystream_bytes != 0)) {
    client->last_error = "nonces is NULL, or keystream is NULL with blocks_per_nonce > 0";
    return MPC_EINVAL;
  }
  if (overlap(nonces, nonce_bytes, keystream, keystream_bytes)) {
    client->last_error = "nonce and keystream buffers overlap";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    const auto result = client->cluster->gcm_prefetch(key, count, blocks_per_nonce, local_masks);
    std::memcpy(nonces, result.nonces.data(), nonce_bytes);
    if (keystream_bytes != 0) std::memcpy(keystream, result.keystream.data(), keystream_bytes);
  });
}

}  // namespace

int mpc_client_gcm_prefetch(mpc_client* client, const char* key_name, uint32_t key_version, uint32_t count,
                            uint32_t blocks_per_nonce, uint8_t* nonces, uint8_t* keystream) {
  return gcm_prefetch(client, key_name, key_version, count, blocks_per_nonce, nonces, keystream, false);
}

int mpc_client_gcm_prefetch_local(mpc_client* client, const char* key_name, uint32_t key_version, uint32_t count,
                                  uint32_t blocks_per_nonce, uint8_t* nonces, uint8_t* keystream) {
  return gcm_prefetch(client, key_name, key_version, count, blocks_per_nonce, nonces, keystream, true);
}

int mpc_client_gcm_tag(mpc_client* client, const char* key_name, uint32_t key_version,
                       const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t* aad, size_t aad_length,
                       const uint8_t* ciphertext, size_t ciphertext_length, uint8_t tag[MPC_GCM_TAG_BYTES]) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId key;
  if (!make_key_id(key_name, key_version, MPC_AES256_GCM, key, client->last_error)) return MPC_EINVAL;
  if (!check_gcm_input(client, nonce, aad, aad_length, ciphertext, ciphertext_length)) return MPC_EINVAL;
  if (tag == nullptr) {
    client->last_error = "tag is NULL";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    mpc::wire::GcmNonce n{};
    std::memcpy(n.data(), nonce, n.size());
    const auto result = client->cluster->gcm_tag(key, n, bytes_or_empty(aad, aad_length),
                                                 bytes_or_empty(ciphertext, ciphertext_length));
    std::memcpy(tag, result.data(), result.size());
  });
}

int mpc_client_gcm_tag_chained(mpc_client* client, const char* key_name, uint32_t key_version,
                               const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t* aad, size_t aad_length,
                               const uint8_t chained_nonce[MPC_GCM_NONCE_BYTES], const uint8_t* prefix,
                               size_t prefix_length, uint8_t tag[MPC_GCM_TAG_BYTES],
                               uint8_t chained_tag[MPC_GCM_TAG_BYTES]) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId key;
  if (!make_key_id(key_name, key_version, MPC_AES256_GCM, key, client->last_error)) return MPC_EINVAL;
  if (!check_gcm_input(client, nonce, aad, aad_length, nullptr, 0)) return MPC_EINVAL;
  if (chained_nonce == nullptr || tag == nullptr || chained_tag == nullptr || (prefix == nullptr && prefix_length != 0)) {
    client->last_error = "chained_nonce, tag or chained_tag is NULL, or the prefix is NULL with a nonzero length";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    mpc::wire::GcmNonce n{}, c{};
    std::memcpy(n.data(), nonce, n.size());
    std::memcpy(c.data(), chained_nonce, c.size());
    const auto [first, second] =
        client->cluster->gcm_tag_chained(key, n, bytes_or_empty(aad, aad_length), c, bytes_or_empty(prefix, prefix_length));
    std::memcpy(tag, first.data(), first.size());
    std::memcpy(chained_tag, second.data(), second.size());
  });
}

int mpc_client_gcm_tag_checked(mpc_client* client, const char* key_name, uint32_t key_version,
                               const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t* aad, size_t aad_length,
                               const uint8_t* ciphertext, size_t ciphertext_length,
                               const uint8_t check_nonce[MPC_GCM_NONCE_BYTES], const uint8_t* check_aad,
                               size_t check_aad_length, const uint8_t check_tag[MPC_GCM_TAG_BYTES],
                               uint8_t tag[MPC_GCM_TAG_BYTES]) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId key;
  if (!make_key_id(key_name, key_version, MPC_AES256_GCM, key, client->last_error)) return MPC_EINVAL;
  if (!check_gcm_input(client, nonce, aad, aad_length, ciphertext, ciphertext_length)) return MPC_EINVAL;
  if (!check_gcm_input(client, check_nonce, check_aad, check_aad_length, nullptr, 0)) return MPC_EINVAL;
  if (tag == nullptr || check_tag == nullptr) {
    client->last_error = "tag or check_tag is NULL";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    mpc::wire::GcmNonce n{};
    std::memcpy(n.data(), nonce, n.size());
    mpc::client::require_gcm_input_fits(check_aad_length, 0);
    mpc::wire::GcmTagCheck check;
    std::memcpy(check.nonce.data(), check_nonce, check.nonce.size());
    const auto check_bytes = bytes_or_empty(check_aad, check_aad_length);
    check.aad.assign(check_bytes.begin(), check_bytes.end());
    std::memcpy(check.tag.data(), check_tag, check.tag.size());
    const auto result = client->cluster->gcm_tag_checked(key, n, bytes_or_empty(aad, aad_length),
                                                         bytes_or_empty(ciphertext, ciphertext_length), std::move(check));
    std::memcpy(tag, result.data(), result.size());
  });
}

int mpc_client_gcm_open(mpc_client* client, const char* key_name, uint32_t key_version,
                        const uint8_t nonce[MPC_GCM_NONCE_BYTES], const uint8_t* aad, size_t aad_length,
                        const uint8_t* ciphertext, size_t ciphertext_length, const uint8_t tag[MPC_GCM_TAG_BYTES],
                        uint8_t* plaintext) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId key;
  if (!make_key_id(key_name, key_version, MPC_AES256_GCM, key, client->last_error)) return MPC_EINVAL;
  if (!check_gcm_input(client, nonce, aad, aad_length, ciphertext, ciphertext_length)) return MPC_EINVAL;
  if (tag == nullptr || (plaintext == nullptr && ciphertext_length != 0)) {
    client->last_error = "tag is NULL, or plaintext is NULL with a nonzero length";
    return MPC_EINVAL;
  }
  // In place (plaintext == ciphertext) is fine: the input is copied before anything is written.
  if (plaintext != ciphertext && overlap(plaintext, ciphertext_length, ciphertext, ciphertext_length)) {
    client->last_error = "ciphertext and plaintext buffers overlap";
    return MPC_EINVAL;
  }
  bool bad_tag = false;
  const int status = guarded(client, [&] {
    mpc::wire::GcmNonce n{};
    mpc::wire::GcmTagBytes t{};
    std::memcpy(n.data(), nonce, n.size());
    std::memcpy(t.data(), tag, t.size());
    const auto result = client->cluster->gcm_open(key, n, bytes_or_empty(aad, aad_length),
                                                  bytes_or_empty(ciphertext, ciphertext_length), t);
    if (!result) {
      bad_tag = true;
      return;
    }
    if (ciphertext_length != 0) std::memcpy(plaintext, result->data(), ciphertext_length);
  });
  // Other failures write nothing, so an in-place caller keeps its ciphertext to retry with.
  if (status != MPC_OK || !bad_tag) return status;
  if (ciphertext_length != 0) mpc::wipe(plaintext, ciphertext_length);
  client->last_error = "authentication tag mismatch: data forged or damaged";
  return MPC_EBADTAG;
}

int mpc_client_import_key(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                          const uint8_t* key, size_t key_length) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId id;
  if (!make_key_id(key_name, key_version, algorithm, id, client->last_error)) return MPC_EINVAL;
  if (key == nullptr) {
    client->last_error = "key is NULL";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    mpc::client::require_key_length(id.algorithm, key_length);  // before the key is copied
    const mpc::client::DumpGuard no_dump;  // the key, its material and the shares are in memory
    const mpc::SecretBytes secret(std::span<const uint8_t>(key, key_length));
    client->cluster->import_key(id, secret);
  });
}

int mpc_client_delete_key(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm) {
  if (client == nullptr) return MPC_EINVAL;
  mpc::wire::KeyId id;
  if (!make_key_id(key_name, key_version, algorithm, id, client->last_error)) return MPC_EINVAL;
  return guarded(client, [&] { (void)client->cluster->delete_key_everywhere(id); });
}

}  // extern "C"

namespace {

int krb_encrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                const std::optional<mpc::wire::KrbCombine>& combine, uint32_t usage, const uint8_t* confounder,
                const uint8_t* plaintext, size_t plaintext_length, uint8_t* ciphertext) {
  mpc::wire::KeyId key;
  if (!check_krb_call(client, key_name, key_version, algorithm, plaintext, plaintext_length, key)) return MPC_EINVAL;
  if (confounder == nullptr || ciphertext == nullptr) {
    client->last_error = "confounder or ciphertext is NULL";
    return MPC_EINVAL;
  }
  // The inputs are copied into the request before the output is written: buffers may overlap.
  return guarded(client, [&] {
    const std::span<const uint8_t, MPC_KRB_CONFOUNDER_BYTES> nonce(confounder, MPC_KRB_CONFOUNDER_BYTES);
    const auto result =
        client->cluster->krb_encrypt(key, usage, nonce, bytes_or_empty(plaintext, plaintext_length), combine);
    std::memcpy(ciphertext, result.data(), result.size());
  });
}

int krb_decrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                const std::optional<mpc::wire::KrbCombine>& combine, uint32_t usage, const uint8_t* ciphertext,
                size_t ciphertext_length, uint8_t* plaintext) {
  mpc::wire::KeyId key;
  if (!check_krb_call(client, key_name, key_version, algorithm, ciphertext, ciphertext_length, key))
    return MPC_EINVAL;
  // What the plaintext buffer must hold; a ciphertext too short for it, or a key of no Kerberos
  // algorithm, is the client's to refuse.
  const mpc::wire::KeyAlgorithm job_algorithm = combine ? combine->combined : key.algorithm;
  const size_t overhead =
      MPC_KRB_CONFOUNDER_BYTES + (mpc::wire::is_krb_algorithm(job_algorithm) ? mpc::wire::krb_mac_bytes(job_algorithm) : 0);
  const size_t plaintext_length = ciphertext_length > overhead ? ciphertext_length - overhead : 0;
  if (plaintext == nullptr && plaintext_length != 0) {
    client->last_error = "plaintext is NULL with a nonzero length";
    return MPC_EINVAL;
  }
  bool bad_mac = false;
  const int status = guarded(client, [&] {
    const auto result =
        client->cluster->krb_decrypt(key, usage, std::span<const uint8_t>(ciphertext, ciphertext_length), combine);
    if (!result) {
      bad_mac = true;
      return;
    }
    if (plaintext_length != 0) std::memcpy(plaintext, result->data(), plaintext_length);
  });
  if (status != MPC_OK || !bad_mac) return status;
  // Nothing was opened but the verdict, and plaintext is left as it was.
  client->last_error = "integrity check failed: wrong key, or data forged or damaged";
  return MPC_EBADTAG;
}

int krb_checksum(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                 const std::optional<mpc::wire::KrbCombine>& combine, uint32_t usage, const uint8_t* data,
                 size_t length, uint8_t* checksum) {
  mpc::wire::KeyId key;
  if (!check_krb_call(client, key_name, key_version, algorithm, data, length, key)) return MPC_EINVAL;
  if (checksum == nullptr) {
    client->last_error = "checksum is NULL";
    return MPC_EINVAL;
  }
  return guarded(client, [&] {
    const auto result = client->cluster->krb_checksum(key, usage, bytes_or_empty(data, length), combine);
    std::memcpy(checksum, result.data(), result.size());
  });
}

}  // namespace

extern "C" {

int mpc_client_krb_encrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                           uint32_t usage, const uint8_t confounder[MPC_KRB_CONFOUNDER_BYTES], const uint8_t* plaintext,
                           size_t plaintext_length, uint8_t* ciphertext) {
  if (client == nullptr) return MPC_EINVAL;
  return krb_encrypt(client, key_name, key_version, algorithm, std::nullopt, usage, confounder, plaintext,
                     plaintext_length, ciphertext);
}

int mpc_client_krb_decrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                           uint32_t usage, const uint8_t* ciphertext, size_t ciphertext_length, uint8_t* plaintext) {
  if (client == nullptr) return MPC_EINVAL;
  return krb_decrypt(client, key_name, key_version, algorithm, std::nullopt, usage, ciphertext, ciphertext_length,
                     plaintext);
}

int mpc_client_krb_checksum(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                            uint32_t usage, const uint8_t* data, size_t length, uint8_t* checksum) {
  if (client == nullptr) return MPC_EINVAL;
  return krb_checksum(client, key_name, key_version, algorithm, std::nullopt, usage, data, length, checksum);
}

int mpc_client_krb_cf2_encrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                               const mpc_krb_combine* combine, uint32_t usage,
                               const uint8_t confounder[MPC_KRB_CONFOUNDER_BYTES], const uint8_t* plaintext,
                               size_t plaintext_length, uint8_t* ciphertext) {
  if (client == nullptr) return MPC_EINVAL;
  std::optional<mpc::wire::KrbCombine> wire_combine;
  if (!make_combine(client, combine, wire_combine)) return MPC_EINVAL;
  return krb_encrypt(client, key_name, key_version, algorithm, wire_combine, usage, confounder, plaintext,
                     plaintext_length, ciphertext);
}

int mpc_client_krb_cf2_decrypt(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                               const mpc_krb_combine* combine, uint32_t usage, const uint8_t* ciphertext,
                               size_t ciphertext_length, uint8_t* plaintext) {
  if (client == nullptr) return MPC_EINVAL;
  std::optional<mpc::wire::KrbCombine> wire_combine;
  if (!make_combine(client, combine, wire_combine)) return MPC_EINVAL;
  return krb_decrypt(client, key_name, key_version, algorithm, wire_combine, usage, ciphertext, ciphertext_length,
                     plaintext);
}

int mpc_client_krb_cf2_checksum(mpc_client* client, const char* key_name, uint32_t key_version, int algorithm,
                                const mpc_krb_combine* combine, uint32_t usage, const uint8_t* data, size_t length,
                                uint8_t* checksum) {
  if (client == nullptr) return MPC_EINVAL;
  std::optional<mpc::wire::KrbCombine> wire_combine;
  if (!make_combine(client, combine, wire_combine)) return MPC_EINVAL;
  return krb_checksum(client, key_name, key_version, algorithm, wire_combine, usage, data, length, checksum);
}

}  // extern "C"
