// The C interface over ClusterClient: no exception crosses it.
#include "client/mpc_client.h"

#include <cstring>
#include <memory>
#include <string>

#include "client/cluster_client.hpp"
#include "common/error.hpp"
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
  if (const auto* refused = dynamic_cast<const mpc::client::ServerError*>(&error)) {
    return refused->status() == mpc::wire::Status::PeerFailure ? MPC_EUNREACHABLE : MPC_EREFUSED;
  }
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

bool make_key_id(const char* name, uint32_t version, int algorithm, mpc::wire::KeyId& key, std::string& error) {
  if (name == nullptr) {
    error = "key name is NULL";
    return false;
  }
  if (algorithm != MPC_AES128 && algorithm != MPC_AES256) {
    error = "unknown key algorithm " + std::to_string(algorithm);
    return false;
  }
  try {
    mpc::wire::validate_key_name(name);
  } catch (const mpc::Error& invalid) {
    error = invalid.what();
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
  if (in == nullptr || out == nullptr || length == 0 || length % 16 != 0 ||
      length / 16 > mpc::wire::kMaxRequestBlocks) {
    client->last_error = "ECB input must be a positive number of whole 16-byte blocks";
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
  if (milliseconds == 0 || milliseconds > 600000) {
    client->last_error = "timeout must be 1..600000 ms";
    return MPC_EINVAL;
  }
  client->cluster->set_timeout(std::chrono::milliseconds(milliseconds));
  client->last_error.clear();
  return MPC_OK;
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
  if (counter == nullptr || out == nullptr || blocks == 0 || blocks > mpc::wire::kMaxRequestBlocks) {
    client->last_error = "keystream needs a counter, an output buffer and 1.." +
                         std::to_string(mpc::wire::kMaxRequestBlocks) + " blocks";
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

}  // extern "C"
