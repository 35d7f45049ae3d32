#include "jobs/gcm_key_material_program.hpp"

#include <mutex>

#include "circuits/gcm_key_material.hpp"
#include "wire/key_id.hpp"

namespace mpc::jobs {

std::shared_ptr<const circuits::Program> gcm_key_material_program() {
  static std::mutex mutex;
  static std::weak_ptr<const circuits::Program> held;
  std::lock_guard lock(mutex);
  if (auto program = held.lock()) return program;
  auto program = std::make_shared<const circuits::Program>(
      circuits::compile(circuits::build_gcm_key_material_circuit(wire::kGcmHashPowers, circuits::SboxVariant::Depth4)));
  held = program;
  return program;
}

}  // namespace mpc::jobs
