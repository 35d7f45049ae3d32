#include "engines/two_party/dealer_link.hpp"

#include <sodium.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/error.hpp"
#include "common/secret.hpp"
#include "protocol/lut2/dealer.hpp"
#include "wire/dealer_messages.hpp"

namespace mpc::two_party_engine {
namespace {

constexpr auto kHelloInterval = std::chrono::seconds(1);
// After a refused, unsent or unanswered request the leader asks again after this pause.
constexpr auto kRetryPause = std::chrono::milliseconds(250);
// A link that has not come up for this long is reported (then once a minute).
constexpr auto kDownReportAfter = std::chrono::seconds(3);
constexpr auto kDownReportInterval = std::chrono::minutes(1);
constexpr auto kRefusalLogInterval = std::chrono::minutes(1);

transport::LinkOptions dealer_link_options() {
  transport::LinkOptions options;
  options.max_message_bytes = static_cast<std::int64_t>(wire::kMaxDealerFrameBytes);
  return options;
}

}  // namespace

struct DealerLink::Held {
  std::uint64_t count = 0;
  bool from_seed = false;  // the leader's: expanded when taken
  lut2::Seed seed{};
  std::vector<lut2::Entry> entries;
  std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now();
  ~Held() {
    wipe(seed.data(), seed.size());
    lut2::wipe_entries(entries);
  }
};

DealerLink::Shares::~Shares() { lut2::wipe_entries(entries); }

DealerLink::DealerLink(transport::Context& context, const settings::ServerSettings& settings,
                       const transport::CurveKeyPair& own, const Logger& log)
    : party_(settings.party), request_timeout_(settings.limits.peer_timeout), log_(log) {
  if (settings.lut.preprocessing != settings::LutPreprocessing::Dealer || settings.lut.dealer_endpoint.empty())
    throw Error(Component::Server, "the dealer link needs [lut] preprocessing = \"dealer\" and its dealer_endpoint");
  connection_ = std::make_unique<transport::Connection>(context, settings.lut.dealer_endpoint,
                                                        settings.lut.dealer_public_key, own, dealer_link_options());
  randombytes_buf(&next_request_, sizeof next_request_);
  log_.info("lookup-table dealer", {{"endpoint", settings.lut.dealer_endpoint},
                                    {"dealer_key", transport::z85_encode(settings.lut.dealer_public_key)}});
}

DealerLink::~DealerLink() = default;

bool DealerLink::request_batch(std::uint64_t count) {
  const auto now = std::chrono::steady_clock::now();
  if (pending_ || now < retry_at_) return false;
  wire::DealerBatchRequest request;
  request.request = next_request_++;
  request.count = static_cast<std::uint32_t>(std::min<std::uint64_t>(count, wire::kMaxDealerBatchEntries));
  if (!connection_->send(wire::encode_dealer(request))) {
    note_link(false, now);
    retry_at_ = now + kRetryPause;
    return false;
  }
  note_link(true, now);
  pending_ = Pending{request.request, request.count, now};
  return true;
}

void DealerLink::cancel_request() { pending_.reset(); }

std::optional<DealerLink::Grant> DealerLink::receive() {
  std::optional<Grant> grant;
  while (auto frame = connection_->receive(std::chrono::milliseconds(0))) {
    wire::DealerMessage message;
    try {
      message = wire::decode_dealer(*frame);
    } catch (const FormatError& error) {
      wipe(frame->data(), frame->size());
      log_.warn("malformed message from the lookup-table dealer", {{"error", error.what()}});
      continue;
    }
    wipe(frame->data(), frame->size());
    if (auto* seed = std::get_if<wire::DealerBatchSeed>(&message)) {
      // A batch for a request given up (timed out, or a new pool epoch) is never announced.
      if (party_ != 0 || !pending_ || seed->request != pending_->request || seed->count != pending_->count) continue;
      auto held = std::make_unique<Held>();
      held->count = seed->count;
      held->from_seed = true;
      held->seed = seed->seed;
      keep(seed->batch, std::move(held));
      grant = Grant{seed->batch, seed->count};
      pending_.reset();
    } else if (auto* dealt = std::get_if<wire::DealerBatchEntries>(&message)) {
      if (party_ == 0) continue;
      auto held = std::make_unique<Held>();
      held->count = dealt->entries.size();
      held->entries = std::move(dealt->entries);
      keep(dealt->batch, std::move(held));
    } else if (auto* refused = std::get_if<wire::DealerBatchRefused>(&message)) {
      if (!pending_ || refused->request != pending_->request) continue;
      pending_.reset();
      retry_at_ = std::chrono::steady_clock::now() + kRetryPause;
      const auto now = std::chrono::steady_clock::now();
      if (refused->reason != last_refusal_ || now - last_refusal_logged_ >= kRefusalLogInterval) {
        log_.warn("the lookup-table dealer refused a batch", {{"reason", refused->reason}});
        last_refusal_ = refused->reason;
        last_refusal_logged_ = now;
      }
    }
  }
  return grant;
}

void DealerLink::keep(std::uint64_t batch, std::unique_ptr<Held> held) {
  {
    std::lock_guard lock(mutex_);
    batches_[batch] = std::move(held);
    while (batches_.size() > kMaxHeldBatches) {
      auto oldest = batches_.begin();
      for (auto it = batches_.begin(); it != batches_.end(); ++it)
        if (it->second->arrived < oldest->second->arrived) oldest = it;
      batches_.erase(oldest);
    }
  }
  arrived_.notify_all();
}

void DealerLink::expect(std::uint64_t job, std::uint64_t batch) {
  std::lock_guard lock(mutex_);
  expected_[job] = {batch, std::chrono::steady_clock::now()};
}

DealerLink::Shares DealerLink::take(std::uint64_t job, std::uint64_t count, std::chrono::milliseconds wait) {
  std::unique_ptr<Held> held;
  Shares shares;
  {
    std::unique_lock lock(mutex_);
    auto expected = expected_.find(job);
    if (expected == expected_.end())
      throw Error(Component::Server, "preprocessing job " + std::to_string(job) + " names no dealer batch");
    shares.batch = expected->second.first;
    expected_.erase(expected);
    if (!arrived_.wait_for(lock, wait, [&] { return batches_.count(shares.batch) != 0; }))
      throw PeerError(Component::Server, "the lookup-table dealer's batch " + std::to_string(shares.batch) +
                                             " did not reach this server within " + std::to_string(wait.count()) +
                                             " ms");
    auto it = batches_.find(shares.batch);
    held = std::move(it->second);
    batches_.erase(it);
  }
  if (held->count != count)
    throw PeerError(Component::Server, "the lookup-table dealer's batch " + std::to_string(shares.batch) + " holds " +
                                           std::to_string(held->count) + " entries, the job " + std::to_string(count));
  if (held->from_seed)
    shares.entries = lut2::expand_seed(held->seed, static_cast<std::size_t>(count));
  else
    shares.entries = std::move(held->entries);
  return shares;
}

std::size_t DealerLink::held_batches() const {
  std::lock_guard lock(mutex_);
  return batches_.size();
}

void DealerLink::tick(std::chrono::steady_clock::time_point now) {
  if (now >= next_hello_) {
    next_hello_ = now + kHelloInterval;
    note_link(connection_->send(wire::encode_dealer(wire::DealerHello{})), now);
    expire(now);
  }
  if (pending_ && now - pending_->sent > request_timeout_) {
    log_.warn("the lookup-table dealer did not answer a batch request",
              {{"timeout_ms", static_cast<std::int64_t>(request_timeout_.count())}});
    pending_.reset();
    retry_at_ = now + kRetryPause;
  }
}

void DealerLink::note_link(bool up, std::chrono::steady_clock::time_point now) {
  if (up) {
    if (down_reported_) log_.info("lookup-table dealer reachable again");
    down_since_.reset();
    down_reported_ = false;
    return;
  }
  if (!down_since_) down_since_ = now;
  if (now - *down_since_ >= kDownReportAfter && (!down_reported_ || now - down_logged_ >= kDownReportInterval)) {
    log_.warn("lookup-table dealer unreachable: no lookup-table entries until it is",
              {{"for_s", static_cast<std::int64_t>(
                             std::chrono::duration_cast<std::chrono::seconds>(now - *down_since_).count())},
               {"check", "that mpc-lut-dealer runs at [lut] dealer_endpoint, that [lut] dealer_public_key is its "
                         "key, and that its [[servers]] list this server's public key"}});
    down_reported_ = true;
    down_logged_ = now;
  }
}

void DealerLink::expire(std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  for (auto it = batches_.begin(); it != batches_.end();) {
    if (now - it->second->arrived > kDealtBatchExpiry)
      it = batches_.erase(it);
    else
      ++it;
  }
  for (auto it = expected_.begin(); it != expected_.end();) {
    if (now - it->second.second > kDealtBatchExpiry)
      it = expected_.erase(it);
    else
      ++it;
  }
}

PreprocessingThread::PreprocessingThread(Priority priority) : thread_([this, priority] { loop(priority); }) {}

PreprocessingThread::~PreprocessingThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  thread_.join();
}

void PreprocessingThread::post(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void PreprocessingThread::loop(Priority priority) {
  // Best effort: a thread left at the normal priority only takes more of a busy core. (Linux:
  // setpriority on a thread id changes that thread alone.) Not SCHED_IDLE: a thread starved
  // outright while it holds a job stream's lock would stall the server's main thread.
  constexpr int kLowestPriority = 19;
  if (priority == Priority::Background)
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kLowestPriority);
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace mpc::two_party_engine
