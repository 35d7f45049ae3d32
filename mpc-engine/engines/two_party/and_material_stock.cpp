#include "engines/two_party/and_material_stock.hpp"

#include "common/error.hpp"
#include "common/secret.hpp"
#if defined(MPC_FAULT_INJECTION)
#include <atomic>
#include <thread>

#include "common/fault_injection.hpp"
#endif

namespace mpc::two_party_engine {
namespace {

// Tweaks per entry: a batch's leaky ANDs take two per leaky triple, at most 16 per entry.
constexpr std::uint64_t kBatchTweaksPerEntry = 32;

#if defined(MPC_FAULT_INJECTION)
// A deviating server 1 (test server only, common/fault_injection.hpp):
// - "auth2-garbled-rows": flips a bit of the MAC part in all four rows (24 bytes each) of its
//   first 64 AND gates of a job, so whichever row server 2 opens is wrong;
// - "auth2-opened-mask": opens its first shared bit of a job (its masks' preparation) with the
//   other value;
// - "auth2-selective-label=I": gives server 2 a wrong label for its input wire I (its first
//   key-share bit for I = 0) whenever the masked bit server 2 sent for it is 1: the probe that
//   half-gates' OT of key labels allows (gc2-selective-key-bit), here aimed at what the
//   garbler sees of that bit;
// - "auth2-leaky-products": alters its leaky-AND products in every preprocessing batch.
// Either server:
// - "auth2-step=S": flips bit 0 of the first message it sends of step S (auth2::Step's value)
//   in every job and every preprocessing batch.
void deviate_in_step(auth2::Session& session) {
  if (const auto target = fault::armed("auth2-step"))
    session.set_deviation([target = *target, done = false](auth2::Step step, std::span<std::uint8_t> message) mutable {
      if (static_cast<std::uint64_t>(step) != target || message.empty() || done) return;
      message[0] ^= 1;
      done = true;
    });
}

void deviate_in_job(auth2::Session& session) {
  if (fault::armed("auth2-garbled-rows"))
    session.set_deviation([](auth2::Step step, std::span<std::uint8_t> message) {
      if (step != auth2::Step::GarbledRows) return;
      for (std::size_t gate = 0; gate < 64; ++gate)
        for (std::size_t row = 0; row < 4; ++row)
          if (const std::size_t byte = 96 * gate + 24 * row + 5; byte < message.size()) message[byte] ^= 1;
    });
  if (const auto wire = fault::armed("auth2-selective-label"))
    session.set_input_label_deviation(
        [wire = *wire](std::span<const std::uint8_t> masked, std::span<two_party::Block> labels) {
          if (wire < masked.size() && masked[wire] != 0) labels[wire] ^= two_party::Block{1, 1};
        });
  if (fault::armed("auth2-opened-mask"))
    session.set_deviation([done = false](auth2::Step step, std::span<std::uint8_t> message) mutable {
      if (step != auth2::Step::Opening || message.empty() || done) return;
      message[0] ^= 1;
      done = true;
    });
}

// "auth2-stall-batch=N": this server's N-th batch of AND material (counted from its start)
// begins 2.5 s late, past the other server's wait for it, as on a host whose cores are taken.
void stall_batch() {
  static std::atomic<std::uint64_t> batches{0};
  if (const auto nth = fault::armed("auth2-stall-batch"); nth && ++batches == *nth)
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
}

void deviate_in_batches(auth2::Session& session) {
  if (fault::armed("auth2-leaky-products"))
    session.set_deviation([](auth2::Step step, std::span<std::uint8_t> message) {
      if (step == auth2::Step::LeakyProducts)
        for (std::size_t byte = 0; byte < message.size(); byte += 16) message[byte] ^= 0x40;
    });
}
#endif

}  // namespace

AndMaterialStock::Taken::~Taken() { wipe(material.data(), material.size() * sizeof(auth2::AndMaterial)); }

AndMaterialStock::Taken AndMaterialStock::take(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start,
                                               std::uint64_t count, std::chrono::milliseconds wait) {
  std::shared_ptr<Pool> pool;
  {
    std::lock_guard lock(mutex_);
    pool = epoch == left_.id && epoch != 0 ? left_.pool : current_.pool;
  }
  // The entries first (they wait for a batch still being made), then the session that made
  // them: its epoch's, which exists once any of its entries does.
  std::vector<auth2::AndMaterial> material;
  std::shared_ptr<auth2::Session> session;
  try {
    material = pool->take(epoch, start, count, wait);
    std::lock_guard lock(mutex_);
    if (epoch == current_.id) session = current_.session;
    if (epoch == left_.id) session = left_.session;
    if (!session) throw two_party::PoolEmpty(Component::Protocol, "AND-material pool restarted under the job");
  } catch (const two_party::PoolEmpty&) {
    wipe(material.data(), material.size() * sizeof(auth2::AndMaterial));
    pool->abandon(epoch, start, count);
    throw;
  }
  Taken taken(std::move(material), session->job_session(peer));
#if defined(MPC_FAULT_INJECTION)
  deviate_in_step(taken.session);
  if (party_ == 0) deviate_in_job(taken.session);
#endif
  return taken;
}

void AndMaterialStock::preprocess(two_party::Channel& peer, std::uint64_t epoch, std::uint64_t start,
                                  std::uint64_t count) {
  std::shared_ptr<auth2::Session> session;
  std::shared_ptr<Pool> pool;
  {
    std::unique_lock lock(mutex_);
    const bool turn = batch_ended_.wait_for(lock, kBatchOrderWait, [&] {
      return epoch != current_.id || next_batch_start_ >= start;
    });
    if (epoch != current_.id) throw Error(Component::Server, "AND material for a pool epoch this server has left");
    if (!turn)
      throw Error(Component::Server, "AND material: the batch before entry " + std::to_string(start) +
                                         " did not end within " + std::to_string(kBatchOrderWait.count()) + " s");
    if (next_batch_start_ != start)
      throw Error(Component::Server, "AND material: a batch from entry " + std::to_string(start) +
                                         " again, after entries up to " + std::to_string(next_batch_start_));
    if (!current_.session) {
      current_.session =
          std::make_shared<auth2::Session>(peer, party_ == 0 ? auth2::Role::First : auth2::Role::Second);
#if defined(MPC_FAULT_INJECTION)
      deviate_in_step(*current_.session);
      if (party_ == 0) deviate_in_batches(*current_.session);
#endif
    }
    session = current_.session;
    pool = current_.pool;
  }
  // The next batch may run once this one has ended, whether it made its entries or not (a
  // failed batch leaves the session's state unknown, and the leader opens a new epoch).
  struct BatchEnd {
    AndMaterialStock& stock;
    std::uint64_t epoch, end;
    ~BatchEnd() {
      {
        std::lock_guard lock(stock.mutex_);
        if (stock.current_.id == epoch) stock.next_batch_start_ = end;
      }
      stock.batch_ended_.notify_all();
    }
  } batch_end{*this, epoch, start + count};
#if defined(MPC_FAULT_INJECTION)
  stall_batch();
#endif
  session->use_channel(peer);
  session->set_next_tweak(kBatchTweaksPerEntry * start);
  if (auth2::bucket_size(count) > kBatchTweaksPerEntry / 2)
    throw Error(Component::Server, "AND material: a batch too small for its tweaks");
  pool->store(epoch, start, auth2::and_material(*session, count));
  peer.flush();
}

void AndMaterialStock::reset(std::uint64_t epoch) {
  Epoch dropped;
  {
    std::lock_guard lock(mutex_);
    if (epoch == current_.id) return;  // the epoch in use: nothing to start
    // Jobs waiting for entries of the epoch left stop waiting: no batch of it runs any more.
    current_.pool->end_production();
    // An epoch that made nothing (its first batch failed) leaves the one before it kept.
    if (current_.pool->produced() > 0) {
      dropped = std::move(left_);
      left_ = std::move(current_);
    } else {
      dropped = std::move(current_);
    }
    current_ = Epoch{};
    current_.id = epoch;
    current_.pool->reset(epoch);
    next_batch_start_ = 0;
  }
  // Wiped as the last job holding it lets go (NumberedPool's destructor), outside the lock.
  dropped.pool.reset();
  dropped.session.reset();
  batch_ended_.notify_all();
}

bool AndMaterialStock::holds_left_epoch(std::uint64_t epoch) const {
  std::lock_guard lock(mutex_);
  return epoch != 0 && epoch == left_.id;
}

std::string AndMaterialStock::describe() const {
  std::shared_ptr<Pool> current, left;
  {
    std::lock_guard lock(mutex_);
    current = current_.pool;
    left = left_.pool;
  }
  return "AND material available " + std::to_string(current->available()) + " (and " +
         std::to_string(left->available()) + " of the epoch left); in these two epochs produced " +
         std::to_string(current->produced() + left->produced()) + ", consumed " +
         std::to_string(current->consumed() + left->consumed());
}

}  // namespace mpc::two_party_engine
