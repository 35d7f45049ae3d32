#include "support.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

namespace mpc::circuits::test {

Bytes from_hex(const char* hex) {
  Bytes out;
  const std::string text(hex);
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoi(text.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<std::uint8_t> bytes_to_bits(std::span<const std::uint8_t> bytes) {
  std::vector<std::uint8_t> bits(bytes.size() * 8);
  for (std::size_t j = 0; j < bits.size(); ++j) bits[j] = (bytes[j / 8] >> (j % 8)) & 1U;
  return bits;
}

Bytes bits_to_bytes(std::span<const std::uint8_t> bits) {
  Bytes bytes(bits.size() / 8, 0);
  for (std::size_t j = 0; j < bits.size(); ++j) bytes[j / 8] |= static_cast<std::uint8_t>((bits[j] & 1U) << (j % 8));
  return bytes;
}

std::vector<std::uint64_t> pack_lanes(const std::vector<Bytes>& instances) {
  if (instances.empty() || instances.size() > 64) throw std::invalid_argument("1..64 instances");
  std::vector<std::uint64_t> words(instances[0].size() * 8, 0);
  for (std::size_t lane = 0; lane < instances.size(); ++lane) {
    for (std::size_t j = 0; j < words.size(); ++j) {
      words[j] |= static_cast<std::uint64_t>((instances[lane][j / 8] >> (j % 8)) & 1U) << lane;
    }
  }
  return words;
}

Bytes unpack_lane(const std::vector<std::uint64_t>& words, std::size_t lane) {
  Bytes bytes(words.size() / 8, 0);
  for (std::size_t j = 0; j < words.size(); ++j) {
    bytes[j / 8] |= static_cast<std::uint8_t>(((words[j] >> lane) & 1U) << (j % 8));
  }
  return bytes;
}

Bytes random_bytes(std::mt19937_64& rng, std::size_t count) {
  Bytes bytes(count);
  for (auto& byte : bytes) byte = static_cast<std::uint8_t>(rng());
  return bytes;
}

namespace {

Bytes openssl_crypt(const Bytes& key, const Bytes& block, bool encrypt) {
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> context(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  Bytes out(block.size() + 16);
  int length = 0;
  int final_length = 0;
  if (!context || EVP_CipherInit_ex(context.get(), cipher, nullptr, key.data(), nullptr, encrypt ? 1 : 0) != 1 ||
      EVP_CIPHER_CTX_set_padding(context.get(), 0) != 1 ||
      EVP_CipherUpdate(context.get(), out.data(), &length, block.data(), static_cast<int>(block.size())) != 1 ||
      EVP_CipherFinal_ex(context.get(), out.data() + length, &final_length) != 1) {
    throw std::runtime_error("OpenSSL AES failed");
  }
  out.resize(static_cast<std::size_t>(length + final_length));
  return out;
}

std::uint8_t slow_multiply(std::uint8_t a, std::uint8_t b) {
  unsigned product = 0;
  for (int bit = 0; bit < 8; ++bit) {
    if ((b >> bit) & 1) product ^= static_cast<unsigned>(a) << bit;
  }
  for (int bit = 14; bit >= 8; --bit) {
    if ((product >> bit) & 1) product ^= 0x11bU << (bit - 8);
  }
  return static_cast<std::uint8_t>(product);
}

}  // namespace

Bytes openssl_encrypt(const Bytes& key, const Bytes& block) { return openssl_crypt(key, block, true); }
Bytes openssl_decrypt(const Bytes& key, const Bytes& block) { return openssl_crypt(key, block, false); }

std::array<std::uint8_t, 256> definition_sbox_table() {
  std::array<std::uint8_t, 256> table{};
  for (unsigned x = 0; x < 256; ++x) {
    unsigned inverse = 0;
    for (unsigned candidate = 1; candidate < 256 && x != 0; ++candidate) {
      if (slow_multiply(static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(candidate)) == 1) inverse = candidate;
    }
    unsigned result = 0;
    for (unsigned bit = 0; bit < 8; ++bit) {
      const unsigned value = ((inverse >> bit) ^ (inverse >> ((bit + 4) % 8)) ^ (inverse >> ((bit + 5) % 8)) ^
                              (inverse >> ((bit + 6) % 8)) ^ (inverse >> ((bit + 7) % 8)) ^ (0x63U >> bit)) & 1U;
      result |= value << bit;
    }
    table[x] = static_cast<std::uint8_t>(result);
  }
  return table;
}

Bytes openssl_cts_encrypt(const Bytes& key, const Bytes& message) {
  Bytes padded = message;
  padded.resize((message.size() + 15) / 16 * 16, 0);
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> context(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  const std::uint8_t iv[16] = {};
  Bytes out(padded.size() + 16);
  int length = 0;
  int final_length = 0;
  if (!context || EVP_EncryptInit_ex(context.get(), cipher, nullptr, key.data(), iv) != 1 ||
      EVP_CIPHER_CTX_set_padding(context.get(), 0) != 1 ||
      EVP_EncryptUpdate(context.get(), out.data(), &length, padded.data(), static_cast<int>(padded.size())) != 1 ||
      EVP_EncryptFinal_ex(context.get(), out.data() + length, &final_length) != 1) {
    throw std::runtime_error("OpenSSL AES-CBC failed");
  }
  out.resize(padded.size());
  if (out.size() > 16) {
    std::swap_ranges(out.end() - 32, out.end() - 16, out.end() - 16);
    out.resize(message.size());
  }
  return out;
}

Bytes concat(std::initializer_list<const Bytes*> parts) {
  Bytes out;
  for (const Bytes* part : parts) out.insert(out.end(), part->begin(), part->end());
  return out;
}

}  // namespace mpc::circuits::test
