#include "node/request_agreement.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace mpc::node {
namespace {

std::string party_name(int party) { return "party " + std::to_string(party + 1); }

// "parties 1 and 3", "parties 1, 2 and 3"
std::string parties_name(const std::vector<int>& parties) {
  std::string out = parties.size() == 1 ? "party " : "parties ";
  for (std::size_t i = 0; i < parties.size(); ++i) {
    if (i > 0) out += i + 1 == parties.size() ? " and " : ", ";
    out += std::to_string(parties[i] + 1);
  }
  return out;
}

std::string mismatch_detail(const CopyWords& words, const std::vector<int>& spoken) {
  for (const int odd : spoken) {
    std::vector<int> others;
    for (const int party : spoken)
      if (party != odd) others.push_back(party);
    const bool others_agree =
        others.size() >= 2 && std::all_of(others.begin(), others.end(), [&](int party) {
          return words[static_cast<std::size_t>(party)]->digest == words[static_cast<std::size_t>(others[0])]->digest;
        });
    if (others_agree)
      return party_name(odd) + "'s copy of the request differs from that of " + parties_name(others);
  }
  return parties_name(spoken) + " hold different copies of the request";
}

}  // namespace

Verdict judge(const CopyWords& words, const std::vector<int>& parties) {
  std::vector<int> spoken;
  for (const int party : parties) {
    if (party < 0 || party >= 3) throw Error(Component::Server, "party index out of range");
    const auto& word = words[static_cast<std::size_t>(party)];
    if (!word) continue;
    if (word->status != wire::Status::Ok)
      return {Consensus::Refused, word->status, party_name(party) + " refused the request: " + word->detail};
    spoken.push_back(party);
  }
  // A difference is judged only once every party has spoken, so the detail can name the
  // copy that differs from the other two.
  if (spoken.size() < parties.size()) return {};
  for (const int party : spoken)
    if (words[static_cast<std::size_t>(party)]->digest != words[static_cast<std::size_t>(spoken[0])]->digest)
      return {Consensus::Differ, wire::Status::RequestMismatch, mismatch_detail(words, spoken)};
  return {Consensus::Agreed, wire::Status::Ok, {}};
}

RequestLedger::RequestLedger(std::size_t capacity, std::chrono::milliseconds lifetime)
    : capacity_(std::max<std::size_t>(capacity, 1)), lifetime_(lifetime) {}

void RequestLedger::keep_early(const JobKey& key, int party, PartyWord word,
                               std::chrono::steady_clock::time_point now) {
  if (party < 0 || party >= 3) return;
  auto it = early_.find(key);
  if (it == early_.end()) {
    while (early_.size() >= capacity_ && !early_order_.empty()) {
      const auto oldest = early_order_.front();
      early_order_.pop_front();
      auto victim = early_.find(oldest.first);
      if (victim != early_.end() && victim->second.since == oldest.second) early_.erase(victim);
    }
    it = early_.emplace(key, Early{{}, now}).first;
    early_order_.emplace_back(key, now);
  }
  // A party's first word stands: a second, different one from the same party changes nothing.
  auto& slot = it->second.words[static_cast<std::size_t>(party)];
  if (!slot) slot = std::move(word);
}

CopyWords RequestLedger::take_early(const JobKey& key) {
  auto it = early_.find(key);
  if (it == early_.end()) return {};
  CopyWords words = std::move(it->second.words);
  early_.erase(it);
  return words;
}

bool RequestLedger::has_early(const JobKey& key) const { return early_.count(key) != 0; }

std::optional<std::chrono::steady_clock::time_point> RequestLedger::early_since(const JobKey& key) const {
  auto it = early_.find(key);
  if (it == early_.end()) return std::nullopt;
  return it->second.since;
}

void RequestLedger::bury(const JobKey& key, Tombstone tombstone, std::chrono::steady_clock::time_point now) {
  early_.erase(key);
  tombstone.until = now + lifetime_;
  auto it = tombstones_.find(key);
  if (it != tombstones_.end()) {
    it->second = std::move(tombstone);
    tombstone_order_.emplace_back(key, now);
    return;
  }
  while (tombstones_.size() >= capacity_ && !tombstone_order_.empty()) {
    tombstones_.erase(tombstone_order_.front().first);
    tombstone_order_.pop_front();
  }
  tombstones_.emplace(key, std::move(tombstone));
  tombstone_order_.emplace_back(key, now);
}

Tombstone* RequestLedger::tombstone(const JobKey& key) {
  auto it = tombstones_.find(key);
  return it == tombstones_.end() ? nullptr : &it->second;
}

std::vector<std::pair<JobKey, PartyWord>> RequestLedger::refusals_since(
    std::chrono::steady_clock::time_point since) const {
  std::vector<std::pair<JobKey, PartyWord>> refusals;
  for (const auto& [key, tombstone] : tombstones_)
    if (!tombstone.answered_copy && tombstone.status != wire::Status::Ok && tombstone.until - lifetime_ >= since)
      refusals.emplace_back(key, PartyWord{{}, tombstone.status, tombstone.detail});
  return refusals;
}

void RequestLedger::expire(std::chrono::steady_clock::time_point now) {
  while (!early_order_.empty() && now - early_order_.front().second > lifetime_) {
    const auto oldest = early_order_.front();
    early_order_.pop_front();
    auto it = early_.find(oldest.first);
    if (it != early_.end() && it->second.since == oldest.second) early_.erase(it);
  }
  while (!tombstone_order_.empty() && now - tombstone_order_.front().second > lifetime_) {
    const auto oldest = tombstone_order_.front();
    tombstone_order_.pop_front();
    auto it = tombstones_.find(oldest.first);
    if (it != tombstones_.end() && it->second.until <= now) tombstones_.erase(it);
  }
}

void OutgoingNotes::add(int party, wire::RequestNote note) {
  if (party < 0 || party >= 3) throw Error(Component::Server, "party index out of range");
  pending_[static_cast<std::size_t>(party)].push_back(std::move(note));
  urgent_[static_cast<std::size_t>(party)] = true;
}

void OutgoingNotes::add_record(int party, wire::RequestNote note, std::chrono::steady_clock::time_point now) {
  if (party < 0 || party >= 3) throw Error(Component::Server, "party index out of range");
  pending_[static_cast<std::size_t>(party)].push_back(std::move(note));
  auto& since = record_since_[static_cast<std::size_t>(party)];
  if (!since) since = now;
}

bool OutgoingNotes::due(int party, std::chrono::steady_clock::time_point now) const {
  const auto index = static_cast<std::size_t>(party);
  if (pending_[index].empty()) return false;
  return urgent_[index] || (record_since_[index] && now >= *record_since_[index] + kRecordDelay);
}

std::optional<std::chrono::steady_clock::time_point> OutgoingNotes::next_due() const {
  std::optional<std::chrono::steady_clock::time_point> next;
  for (std::size_t party = 0; party < pending_.size(); ++party) {
    if (pending_[party].empty()) continue;
    // Urgent notes are due at once: the earliest possible time stands for "now".
    const auto at = urgent_[party] ? std::chrono::steady_clock::time_point::min() : *record_since_[party] + kRecordDelay;
    if (!next || at < *next) next = at;
  }
  return next;
}

std::vector<std::vector<std::uint8_t>> OutgoingNotes::take_frames(int party) {
  auto& notes = pending_[static_cast<std::size_t>(party)];
  std::vector<std::vector<std::uint8_t>> frames;
  for (std::size_t at = 0; at < notes.size(); at += wire::kMaxNotesPerMessage) {
    const std::size_t count = std::min(wire::kMaxNotesPerMessage, notes.size() - at);
    frames.push_back(wire::encode_notes(std::span<const wire::RequestNote>(notes.data() + at, count)));
  }
  notes.clear();
  urgent_[static_cast<std::size_t>(party)] = false;
  record_since_[static_cast<std::size_t>(party)].reset();
  return frames;
}

bool OutgoingNotes::empty() const {
  return std::all_of(pending_.begin(), pending_.end(), [](const auto& notes) { return notes.empty(); });
}

wire::RequestNote make_note(const JobKey& key, const PartyWord& word) {
  wire::RequestNote note;
  note.client = key.client;
  note.request = key.request;
  note.digest = word.digest;
  note.status = word.status;
  note.detail = word.detail.substr(0, 1024);
  return note;
}

std::string describe_request(const JobKey& key) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : key.request) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 15]);
  }
  return out;
}

}  // namespace mpc::node
