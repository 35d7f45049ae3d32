#include "engines/two_party/authenticated_krb.hpp"

#include <algorithm>

#include "circuits/input_wiring.hpp"
#include "common/error.hpp"
#include "engines/two_party/checked_part.hpp"
#include "jobs/krb_jobs.hpp"
#include "protocol/auth2/padded_circuit.hpp"
#include "protocol/client_checks/share_checks.hpp"
#include "protocol/ot/wipe_guard.hpp"
#include "wire/sealed_share.hpp"
#if defined(MPC_FAULT_INJECTION)
#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {

struct AuthenticatedKrb::Shape {
  circuits::Circuit circuit;  // padded
  auth2::InputOwners owners;
  std::shared_ptr<const auth2::WireSlots> slots;  // of the circuit
  // The part of the material fed and checked (wire::share_check_segments), and where the job's
  // secret rows lie in it.
  std::size_t segment = 0, segment_offset = 0;
  std::uint32_t segment_bits = 0, rows_offset = 0;
  std::uint32_t mask_bits = 0, public_bits = 0, result_bits = 0;
  std::vector<std::uint32_t> first_known, second_known;
  std::uint64_t entries = 0;  // auth2::material_entries of the circuit
};

namespace {

using auth2::Owner;
constexpr std::uint32_t kBlindingBits = client_checks::kCheckBits;

std::vector<std::uint32_t> run_of(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> wires(count);
  for (std::uint32_t i = 0; i < count; ++i) wires[i] = first + i;
  return wires;
}

}  // namespace

AuthenticatedKrb::AuthenticatedKrb(int party, AndMaterialStock& stock)
    : party_(party), stock_(stock), builder_(std::make_unique<PreprocessingThread>()) {}

AuthenticatedKrb::~AuthenticatedKrb() { builder_.reset(); }

AuthenticatedKrb::ShapeKey AuthenticatedKrb::key_of(const jobs::KrbJobPlan& plan, wire::KeyAlgorithm algorithm) {
  return std::make_tuple(static_cast<int>(plan.circuit.id), plan.circuit.data_bytes, plan.circuit.combine,
                         static_cast<int>(algorithm), plan.secret.offset, plan.secret.bytes, plan.result_bytes);
}

std::shared_ptr<const AuthenticatedKrb::Shape> AuthenticatedKrb::shape(const jobs::KrbJobPlan& plan,
                                                                        wire::KeyAlgorithm algorithm) const {
  const ShapeKey key = key_of(plan, algorithm);
  std::shared_future<std::shared_ptr<const Shape>> found;
  std::promise<std::shared_ptr<const Shape>> promise;
  {
    std::lock_guard lock(mutex_);
    if (auto at = shapes_.find(key); at != shapes_.end()) {
      found = at->second;
    } else {
      shapes_.emplace(key, promise.get_future().share());
    }
  }
  if (found.valid()) return found.get();
  try {
    auto built = build(plan, algorithm);
    promise.set_value(built);
    return built;
  } catch (...) {
    // Not kept: the next job tries again (and its waiters get the error now).
    promise.set_exception(std::current_exception());
    std::lock_guard lock(mutex_);
    shapes_.erase(key);
    throw;
  }
}

std::optional<std::uint64_t> AuthenticatedKrb::entries_if_built(const wire::KrbRequest& request) const {
  const jobs::KrbJobPlan plan = jobs::plan_krb_job(request);
  {
    std::lock_guard lock(mutex_);
    auto at = shapes_.find(key_of(plan, request.key.algorithm));
    if (at != shapes_.end()) {
      if (at->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
      return at->second.get()->entries;
    }
  }
  builder_->post([this, plan, algorithm = request.key.algorithm] {
    try {
      (void)shape(plan, algorithm);
    } catch (const std::exception&) {
      // The job that needs it builds it again and reports the error.
    }
  });
  return std::nullopt;
}

std::shared_ptr<const AuthenticatedKrb::Shape> AuthenticatedKrb::build(const jobs::KrbJobPlan& plan,
                                                                        wire::KeyAlgorithm algorithm) {
  const circuits::Circuit job = jobs::build_krb_circuit(plan.circuit, circuits::CircuitCost::FewestAnds);
  auto shape = std::make_shared<Shape>();
  const auto key_rows = static_cast<std::uint32_t>(8 * plan.secret.bytes);
  shape->segment = wire::share_check_segment_of(algorithm, plan.secret.offset, plan.secret.bytes);
  const wire::ShareSegment segment = wire::share_check_segments(algorithm).at(shape->segment);
  shape->segment_offset = segment.offset;
  shape->segment_bits = static_cast<std::uint32_t>(8 * segment.bytes);
  shape->rows_offset = static_cast<std::uint32_t>(8 * (plan.secret.offset - segment.offset));
  shape->mask_bits = static_cast<std::uint32_t>(8 * plan.mask_bytes);
  shape->public_bits = static_cast<std::uint32_t>(8 * plan.public_record.size());
  shape->result_bits = static_cast<std::uint32_t>(8 * plan.result_bytes);
  const std::uint32_t n = shape->segment_bits, m = shape->mask_bits, p = shape->public_bits;
  if (job.total_inputs() != key_rows + m + p || job.total_outputs() > shape->result_bits)
    throw Error(Component::Server, "Kerberos circuit does not fit its job");
  // Inputs: each server's share of the segment, each server's share of R, the record, each
  // blinding.
  std::vector<std::uint32_t> widths{n, n};
  shape->owners = {Owner::First, Owner::Second};
  if (m > 0) {
    widths.insert(widths.end(), {m, m});
    shape->owners.insert(shape->owners.end(), {Owner::First, Owner::Second});
  }
  widths.insert(widths.end(), {p, kBlindingBits, kBlindingBits});
  shape->owners.insert(shape->owners.end(), {Owner::Public, Owner::First, Owner::Second});
  const std::uint32_t offset = shape->rows_offset;
  std::vector<circuits::InputSource> sources;
  sources.reserve(job.total_inputs());
  for (std::uint32_t i = 0; i < key_rows; ++i) sources.push_back({offset + i, n + offset + i});
  for (std::uint32_t j = 0; j < m; ++j) sources.push_back({2 * n + j, 2 * n + m + j});
  for (std::uint32_t k = 0; k < p; ++k) sources.push_back({2 * n + 2 * m + k, std::nullopt});
  circuits::Circuit wired = circuits::with_input_wiring(job, widths, sources);
  // The result's every bit an output: constant zeros after the circuit's own (a verdict's byte).
  if (const std::uint32_t missing = shape->result_bits - wired.total_outputs(); missing > 0) {
    for (std::uint32_t j = 0; j < missing; ++j)
      wired.gates.push_back({circuits::GateKind::Const, 0, 0, wired.num_wires + j});
    wired.num_wires += missing;
    wired.output_widths.push_back(missing);
  }
  const std::uint32_t blinding = 2 * n + 2 * m + p;
  std::vector<std::uint32_t> first_committed = run_of(0, n), second_committed = run_of(n, n);
  for (std::uint32_t k = 0; k < kBlindingBits; ++k) {
    first_committed.push_back(blinding + k);
    second_committed.push_back(blinding + kBlindingBits + k);
  }
  shape->circuit = auth2::padded_circuit(with_share_checks(wired, first_committed, second_committed), 0,
                                         kShareCheckVerdicts);
  shape->owners = auth2::padded_owners(share_check_owners(shape->owners));
  shape->first_known = run_of(2 * n, m);
  shape->second_known = run_of(2 * n + m, m);
  shape->entries = auth2::material_entries(shape->circuit, shape->owners);
  shape->slots = std::make_shared<const auth2::WireSlots>(auth2::plan_slots(shape->circuit));
  return shape;
}

std::uint64_t AuthenticatedKrb::entries(const wire::KrbRequest& request) const {
  return shape(jobs::plan_krb_job(request), request.key.algorithm)->entries;
}

AuthenticatedKrb::Padded AuthenticatedKrb::run(two_party::Channel& peer, const Job& job, std::uint64_t epoch,
                                               std::uint64_t start, std::chrono::milliseconds wait) {
  const wire::KrbRequest& request = *job.request;
  const jobs::KrbJobPlan plan = jobs::plan_krb_job(request);
  const auto found = this->shape(plan, request.key.algorithm);
  const Shape& shape = *found;
  if (job.key_share.size() != wire::material_bytes(request.key.algorithm) || job.mask_share.size() * 8 != shape.mask_bits)
    throw Error(Component::Server, "Kerberos job shares of the wrong size");
  const client_checks::ShareCheck check = client_checks::parse_share_check(job.share_check);
  const std::uint64_t count = shape.entries;
  AndMaterialStock::Taken taken = stock_.take(peer, epoch, start, count, wait);

  // This server's inputs: its share of the segment, its share of R, its blinding, its check's
  // key and tag, its pad.
  std::vector<std::uint8_t> own = bytes_to_bits(job.key_share.subspan(shape.segment_offset, shape.segment_bits / 8));
  const std::vector<std::uint8_t> mask = bytes_to_bits(job.mask_share);
  own.insert(own.end(), mask.begin(), mask.end());
  const std::vector<std::uint8_t> blinding = blinding_bits(check, shape.segment),
                                  checks = share_check_inputs(check, shape.segment);
  own.insert(own.end(), blinding.begin(), blinding.end());
  own.insert(own.end(), checks.begin(), checks.end());
  const std::vector<std::uint8_t> pad = client_checks::pad_bits(job.pad, shape.result_bits);
  own.insert(own.end(), pad.begin(), pad.end());
#if defined(MPC_FAULT_INJECTION)
  // "krb-mask-bit": either server feeds its share of R with bit 0 flipped, which flips bit 0 of
  // the record the job computes on; the client's check of the pads and R's shares catches it.
  // "share-bit": either server feeds its key material share with a bit of the job's rows
  // flipped; its peer's check of the share catches it.
  if (shape.mask_bits > 0 && fault::armed("krb-mask-bit")) own[shape.segment_bits] ^= 1;
  if (fault::armed("share-bit")) own[shape.rows_offset] ^= 1;
#endif
  const ot::WipeGuard own_guard(own);
  const CheckedCircuit checked{&shape.circuit, &shape.owners, shape.first_known, shape.second_known, shape.slots};
  const auth2::PaddedRun result =
      run_checked_part(taken.session, party_, checked, taken.material, start, own, bytes_to_bits(plan.public_record));
  peer.flush();
  Padded out;
  out.bytes = SecretBytes(plan.result_bytes);
  for (std::size_t i = 0; i < result.masked.size(); ++i)
    out.bytes[i / 8] |= static_cast<std::uint8_t>(result.masked[i] << (i % 8));
  out.report = result.report;
  return out;
}

}  // namespace mpc::two_party_engine
