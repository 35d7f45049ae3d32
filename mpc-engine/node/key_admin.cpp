#include "node/key_admin.hpp"

#include <algorithm>
#include <variant>

#include "common/error.hpp"
#include "keys/key_algorithms.h"
#include "wire/sealed_share.hpp"

namespace mpc::node {

wire::Reply error_reply(const wire::RequestId& id, wire::Status status, const std::string& detail) {
  wire::Reply answer;
  answer.id = id;
  answer.status = status;
  answer.error = detail.substr(0, 1024);
  return answer;
}

wire::RequestId salvage_request_id(std::span<const std::uint8_t> frame) {
  wire::RequestId id{};
  if (frame.size() >= 18) std::copy_n(frame.begin() + 2, 16, id.begin());
  return id;
}

namespace {

bool is_kerberos_key(wire::KeyAlgorithm algorithm) {
  return mpc_key_is_kerberos(mpc_key_algorithm_by_id(static_cast<int>(algorithm))) != 0;
}

// A ticket key (aes256-gcm: what a protected krbtgt key is in the engine) deleted is never
// imported again under its id: whoever holds a client key that may change keys could
// otherwise delete a realm's ticket key and import one it chose in its place, under the name
// and kvno the KDC's database already names. Kerberos user and service keys are left
// reusable: their values come from the KDC host anyway (passwords, kadmin), and kadmind
// enrols a key change again under the same kvno when an earlier attempt failed halfway.
store::ShareStore::Removal removal_for(wire::KeyAlgorithm algorithm) {
  return algorithm == wire::KeyAlgorithm::Aes256Gcm ? store::ShareStore::Removal::Final
                                                    : store::ShareStore::Removal::Reusable;
}

// Why `role` may not import or delete `key`, or nullopt when it may.
std::optional<std::string> key_change_refused(const std::string& role, const wire::KeyId& key) {
  if (role == "admin") return std::nullopt;
  if (role == "enrol") {
    if (is_kerberos_key(key.algorithm)) return std::nullopt;
    return std::string("the enrol role changes Kerberos user and service keys only; ") +
           wire::algorithm_name(key.algorithm) + " keys need an admin client key";
  }
  return std::string("key administration needs an admin or enrol client key");
}

}  // namespace

std::optional<Refusal> generation_refusal(const wire::KeyId& key, const store::ShareStore& store) {
  if (key.algorithm != wire::KeyAlgorithm::Aes256Gcm)
    return Refusal{wire::Status::BadRequest, "only aes256-gcm keys are generated, not " + wire::describe(key)};
  if (store.deleted_for_good(key))
    return Refusal{wire::Status::KeyExists,
                   wire::describe(key) + " was deleted; a deleted ticket key id is never used again (use a new kvno)"};
  if (store.get(key)) return Refusal{wire::Status::KeyExists, wire::describe(key) + " already exists"};
  return std::nullopt;
}

std::optional<wire::Reply> answer_key_admin(wire::Request& request, const std::string& role, store::ShareStore& store,
                                            const transport::CurveKeyPair& own, std::size_t share_copies,
                                            const std::string& sharing, bool ticket_key_import, const Logger& log) {
  const bool admin_request = std::holds_alternative<wire::ImportKeyRequest>(request) ||
                             std::holds_alternative<wire::ListKeysRequest>(request) ||
                             std::holds_alternative<wire::DeleteKeyRequest>(request);
  if (!admin_request) return std::nullopt;
  const wire::RequestId id = wire::request_id(request);
  if (role != "admin" && role != "enrol")
    return error_reply(id, wire::Status::Unauthorized, "key administration needs an admin or enrol client key");
  wire::Reply answer;
  answer.id = id;
  if (auto* import = std::get_if<wire::ImportKeyRequest>(&request)) {
    if (auto refused = key_change_refused(role, import->key)) {
      log.warn("key import refused", {{"key", wire::describe(import->key)}, {"role", role}});
      return error_reply(id, wire::Status::Unauthorized, *refused);
    }
    if (import->key.algorithm == wire::KeyAlgorithm::Aes256Gcm && !ticket_key_import) {
      log.warn("ticket key import refused", {{"key", wire::describe(import->key)}, {"role", role}});
      return error_reply(id, wire::Status::Unauthorized,
                         "this cluster generates its ticket keys (mpcctl key generate) and imports none of a "
                         "value some host chose (server.toml ticket_key_import = \"allow\" admits them)");
    }
    if (store.deleted_for_good(import->key))
      return error_reply(id, wire::Status::KeyExists,
                         wire::describe(import->key) +
                             " was deleted; a deleted ticket key id is never imported again (use a new kvno)");
    // An XOR share may come with its checks (wire::share_check_bytes), stored after it.
    const std::size_t material = share_copies * wire::material_bytes(import->key.algorithm);
    if (import->sealed_share.size() != material + wire::kSealedShareOverhead &&
        (share_copies != 1 || import->sealed_share.size() != material + wire::share_check_bytes(import->key.algorithm) +
                                                                 wire::kSealedShareOverhead))
      return error_reply(id, wire::Status::BadRequest, "a key share of this cluster is " + sharing);
    SecretBytes share;
    try {
      share = wire::open_sealed_share(import->key, import->sealed_share, own.public_key, own.secret_key);
    } catch (const FormatError& error) {
      log.warn("key share refused", {{"key", wire::describe(import->key)}, {"error", error.what()}});
      return error_reply(id, wire::Status::BadRequest, error.what());
    }
    if (!store.put(import->key, share))
      return error_reply(id, wire::Status::KeyExists, wire::describe(import->key) + " already exists");
    log.info("key imported", {{"key", wire::describe(import->key)}});
  } else if (auto* list = std::get_if<wire::ListKeysRequest>(&request)) {
    wire::KeyList keys;
    for (const auto& stored : store.list(list->name_prefix)) keys.keys.push_back({stored.key, stored.created_unix});
    answer.body = std::move(keys);
  } else if (auto* remove = std::get_if<wire::DeleteKeyRequest>(&request)) {
    if (auto refused = key_change_refused(role, remove->key)) {
      log.warn("key deletion refused", {{"key", wire::describe(remove->key)}, {"role", role}});
      return error_reply(id, wire::Status::Unauthorized, *refused);
    }
    if (!store.remove(remove->key, removal_for(remove->key.algorithm)))
      return error_reply(id, wire::Status::UnknownKey, wire::describe(remove->key) + " not found");
    log.info("key deleted", {{"key", wire::describe(remove->key)}});
  }
  return answer;
}

}  // namespace mpc::node
