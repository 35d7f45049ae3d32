// Key administration as every server answers it, three-party or two-party: import, list and
// delete against the server's store, with the roles' checks: admin changes any key, enrol
// (kadmind) Kerberos user and service keys only, both list; a deleted ticket key's id is never
// imported again. The caller answers the returned reply and, on a delete, forgets any copy of
// the key it caches.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "common/log.hpp"
#include "node/engine.hpp"
#include "store/share_store.hpp"
#include "transport/curve_keys.hpp"
#include "wire/client_messages.hpp"

namespace mpc::node {

// The reply to an ImportKey, ListKeys or DeleteKey request from a client admitted with `role`,
// or nullopt for any other request. An imported share arrives sealed to this server's CurveZMQ
// key (wire/sealed_share.hpp) and is opened with `own`; one that does not open for the
// request's key id is refused. share_copies: how many copies of the key material one server's
// share holds (2 for a replicated share x || a, 1 for an XOR share); `sharing` names the
// expected form in the refusal of any other. ticket_key_import: whether an aes256-gcm key may
// be imported at all (server.toml ticket_key_import; a cluster that generates its ticket keys
// refuses it). Throws what the store throws.
std::optional<wire::Reply> answer_key_admin(wire::Request& request, const std::string& role, store::ShareStore& store,
                                            const transport::CurveKeyPair& own, std::size_t share_copies,
                                            const std::string& sharing, bool ticket_key_import, const Logger& log);

// Why a key may not be generated under `key` (wire::GenerateKeyRequest) at this server: it is
// not an aes256-gcm id, or the id is stored or was deleted. nullopt when it may.
std::optional<Refusal> generation_refusal(const wire::KeyId& key, const store::ShareStore& store);

// An error reply with the detail cut to what the wire allows.
wire::Reply error_reply(const wire::RequestId& id, wire::Status status, const std::string& detail);

// The request id of a frame that failed to decode, as far as it goes (zeros otherwise).
wire::RequestId salvage_request_id(std::span<const std::uint8_t> frame);

}  // namespace mpc::node
