#include "common/error.hpp"
#include "engines/two_party/backend.hpp"
#include "engines/two_party/gc2_backend.hpp"
#include "engines/two_party/lut2_backend.hpp"

namespace mpc::two_party_engine {

std::unique_ptr<Backend> make_backend(const settings::ServerSettings& settings, const Logger& log) {
  switch (settings.protocol) {
    case settings::Protocol::Gc2:
      return std::make_unique<Gc2Backend>(settings.party, log, settings.security == settings::Security::Active,
                                          settings.limits.and_material_entries);
    case settings::Protocol::Lut2:
      return std::make_unique<Lut2Backend>(settings.party, settings.lut, log);
    case settings::Protocol::Rss3:
      break;
  }
  throw Error(Component::Server, std::string("protocol ") + settings::protocol_name(settings.protocol) +
                                     " has no two-server back end");
}

}  // namespace mpc::two_party_engine
