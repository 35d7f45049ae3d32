// ClusterClient's requests about the servers themselves (cluster_client.hpp): their status, and
// an operator's exclusion or readmission of one server of a three-server cluster
// (wire::ExclusionRequest).
#include <string>

#include "client/cluster_client.hpp"
#include "client/cluster_links.hpp"

namespace mpc::client {

std::vector<wire::ServerStatus> ClusterClient::status() {
  std::lock_guard lock(mutex_);
  wire::StatusRequest request;
  request.id = fresh_request_id();
  const auto frame = wire::encode_request(request);
  const auto replies = round_trip(same_frame(frame), request.id, wire::MessageType::Status);
  std::vector<wire::ServerStatus> out(settings_.servers.size());
  for (int party = 0; party < parties(); ++party)
    out[static_cast<std::size_t>(party)] = std::get<wire::ServerStatus>(replies[static_cast<std::size_t>(party)].body);
  return out;
}

std::vector<ClusterClient::StatusOrError> ClusterClient::status_each() {
  std::lock_guard lock(mutex_);
  wire::StatusRequest request;
  request.id = fresh_request_id();
  const auto frame = wire::encode_request(request);
  const auto replies =
      exchange(same_frame(frame), request.id, wire::MessageType::Status, all_servers(), false, true);
  std::vector<StatusOrError> out(settings_.servers.size());
  for (std::size_t party = 0; party < out.size(); ++party) {
    if (const auto* status = std::get_if<wire::ServerStatus>(&replies[party].body);
        status != nullptr && replies[party].status == wire::Status::Ok)
      out[party].status = *status;
    else
      out[party].error = std::string(wire::status_name(replies[party].status)) + ": " + replies[party].error;
  }
  return out;
}

std::vector<std::string> ClusterClient::exclusion_each(const wire::ExclusionRequest& request) {
  std::lock_guard lock(mutex_);
  if (parties() != 3) throw Error(Component::Client, "only a three-server cluster excludes a server");
  wire::ExclusionRequest sent = request;
  sent.id = fresh_request_id();
  const auto frame = wire::encode_request(sent);
  const auto replies = exchange(same_frame(frame), sent.id, wire::MessageType::Exclusion, all_servers(), false, true);
  std::vector<std::string> out(replies.size());
  for (std::size_t party = 0; party < replies.size(); ++party)
    if (replies[party].status != wire::Status::Ok)
      out[party] = std::string(wire::status_name(replies[party].status)) + ": " + replies[party].error;
  return out;
}

}  // namespace mpc::client
