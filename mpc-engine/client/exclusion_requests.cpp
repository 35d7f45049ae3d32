// ClusterClient::exclusion_each: an operator's exclusion or readmission of one server of a
// three-server cluster (cluster_client.hpp, wire::ExclusionRequest).
#include "client/cluster_client.hpp"
#include "client/cluster_links.hpp"

namespace mpc::client {

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
