#include "common/error.hpp"
#include "two_server/backend.hpp"
#include "two_server/gc2_backend.hpp"
#include "two_server/lut2_backend.hpp"

namespace mpc::two_server {

std::unique_ptr<Backend> make_backend(const settings::ServerSettings& settings, const Logger& log) {
  switch (settings.protocol) {
    case settings::Protocol::Gc2:
      return std::make_unique<Gc2Backend>(settings.party, log);
    case settings::Protocol::Lut2:
      return std::make_unique<Lut2Backend>(settings.party, settings.lut, log);
    case settings::Protocol::Rss3:
      break;
  }
  throw Error(Component::Server, std::string("protocol ") + settings::protocol_name(settings.protocol) +
                                     " has no two-server back end");
}

}  // namespace mpc::two_server
