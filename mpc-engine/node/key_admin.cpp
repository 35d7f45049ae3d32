#include "node/key_admin.hpp"

#include <algorithm>
#include <variant>

#include "common/error.hpp"

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

std::optional<wire::Reply> answer_key_admin(wire::Request& request, const std::string& role, store::ShareStore& store,
                                            const transport::CurveKeyPair& own, std::size_t share_copies,
                                            const std::string& sharing, const Logger& log) {
  const bool admin_request = std::holds_alternative<wire::ImportKeyRequest>(request) ||
                             std::holds_alternative<wire::ListKeysRequest>(request) ||
                             std::holds_alternative<wire::DeleteKeyRequest>(request);
  if (!admin_request) return std::nullopt;
  const wire::RequestId id = wire::request_id(request);
  if (role != "admin") return error_reply(id, wire::Status::Unauthorized, "key administration needs an admin client key");
  wire::Reply answer;
  answer.id = id;
  if (auto* import = std::get_if<wire::ImportKeyRequest>(&request)) {
    if (import->sealed_share.size() !=
        share_copies * wire::material_bytes(import->key.algorithm) + wire::kSealedShareOverhead)
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
    if (!store.remove(remove->key)) return error_reply(id, wire::Status::UnknownKey, wire::describe(remove->key) + " not found");
    log.info("key deleted", {{"key", wire::describe(remove->key)}});
  }
  return answer;
}

}  // namespace mpc::node
