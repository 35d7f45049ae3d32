// The compiled circuit of a key generation (circuits/gcm_key_material.hpp with the powers an
// aes256-gcm key stores): built when a batch first needs it, in the worker that runs the
// batch, and held only while some batch uses it (about 8 M operations; keys are made rarely).
// Safe to call from several threads; every party compiles the same program.
#pragma once

#include <memory>

#include "circuits/program.hpp"

namespace mpc::jobs {

std::shared_ptr<const circuits::Program> gcm_key_material_program();

}  // namespace mpc::jobs
