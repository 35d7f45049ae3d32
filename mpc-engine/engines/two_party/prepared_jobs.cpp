// The garbled-circuit engine's Kerberos garblings prepared ahead of time (prepared_circuits.hpp):
// a Kerberos job's circuit run with a prepared garbling or garbled now, and the preparation
// streams that fill both servers' stores.
#include <sodium.h>

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "protocol/gc2/stored_garbling.hpp"
#include "engines/two_party/channel_integers.hpp"
#include "engines/two_party/gc2_backend.hpp"
#include "engines/two_party/preparation_header.hpp"

namespace mpc::two_party_engine {
namespace {

using gc2::Block;

void send_labels(two_party::Channel& peer, const gc2::Labels& labels) {
  peer.send({reinterpret_cast<const std::uint8_t*>(labels.data()), labels.size() * sizeof(Block)});
}

void receive_labels(two_party::Channel& peer, gc2::Labels& labels) {
  peer.receive({reinterpret_cast<std::uint8_t*>(labels.data()), labels.size() * sizeof(Block)});
}

// Server 2 acknowledges each chunk by its index; server 1 sends the next chunk only while
// fewer than kPreparationWindow are unacknowledged, so the link never holds more of a
// preparation than that ahead of a client job's frames.
void expect_ack(two_party::Channel& peer, std::uint32_t chunk) {
  if (receive_le<std::uint32_t>(peer) != chunk)
    throw PeerError(Component::Server, "preparation: server 2 acknowledged another chunk");
}

void send_paced(two_party::Channel& peer, std::span<const std::uint8_t> stream) {
  const std::size_t chunks = (stream.size() + kPreparationChunkBytes - 1) / kPreparationChunkBytes;
  std::uint32_t acknowledged = 0;
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::size_t first = i * kPreparationChunkBytes;
    peer.send(stream.subspan(first, std::min(kPreparationChunkBytes, stream.size() - first)));
    peer.flush();
    if (i + 1 - acknowledged >= kPreparationWindow) expect_ack(peer, acknowledged++);
  }
  while (acknowledged < chunks) expect_ack(peer, acknowledged++);
}

void receive_paced(two_party::Channel& peer, std::span<std::uint8_t> stream) {
  const std::size_t chunks = (stream.size() + kPreparationChunkBytes - 1) / kPreparationChunkBytes;
  for (std::size_t i = 0; i < chunks; ++i) {
    const std::size_t first = i * kPreparationChunkBytes;
    peer.receive(stream.subspan(first, std::min(kPreparationChunkBytes, stream.size() - first)));
    send_le(peer, static_cast<std::uint32_t>(i));
    peer.flush();
  }
}

}  // namespace

// Server 2 offers a garbling in the key handshake (PreparedOffer::make runs before its first
// message leaves); the answer, one u64 from server 1 (the garbling it names, or 0), precedes
// the public record's labels. Both sides send and expect it for every Kerberos job, whatever
// their budgets, so the stream's format depends on the request alone.
std::vector<std::uint8_t> Gc2Backend::krb_circuit_bits(two_party::Channel& peer, const KrbTask& task,
                                                       const circuits::Program& prog,
                                                       const jobs::KrbCircuitKey& circuit,
                                                       const jobs::KrbSecretRange& secret_range,
                                                       std::span<const std::uint8_t> public_record) {
  const std::size_t secret_rows = secret_range.bytes * 8;
  const std::size_t public_rows = public_record.size() * 8;
  PreparedShape shape{task.key, 0, circuit, secret_range, static_cast<std::uint32_t>(public_record.size())};

  // Server 2: the garbling it offers is out of its store from here on, used or not.
  std::optional<PreparedTables> reserved;
  struct UseGuard {
    PreparedCircuits* prepared = nullptr;
    PreparedShape shape;
    ~UseGuard() {
      if (prepared != nullptr) prepared->end_use(shape);
    }
  } in_use;
  PreparedOffer offer;
  if (party_ != 0)
    offer.make = [&](std::uint64_t held_set) {
      if (held_set == 0 || prepared_->budget() == 0) return;
      shape.label_set = held_set;
      reserved = prepared_->tables.take_oldest(shape);
      offer.holds_more = prepared_->tables.count(shape) > 0 || prepared_->in_use(shape);
      if (!reserved) return;
      offer.id = reserved->id;
      prepared_->begin_use(shape);
      in_use.prepared = prepared_.get();
      in_use.shape = shape;
    };

  // Server 2's request for R's labels leaves before its handshake message, in the same flush;
  // server 1 sends the request digest first and reads it before that message.
  const auto mask_bits = gc2::bits_of(task.mask_share);
  MaskLabelStock::Asked asked;
  MaskLabelStock::Pending pending;
  if (party_ == 0) {
    peer.send(task.request_digest);
    peer.flush();
    asked = mask_labels_.take_request(peer, mask_bits.size());
  } else {
    pending = mask_labels_.ask(peer, mask_bits);
  }
  const gc2::Labels key =
      key_labels(peer, task.key, task.key_share, party_ == 0 ? nullptr : &task.request_digest, &offer);
  if (secret_range.offset * 8 + secret_rows > key.size())
    throw Error(Component::Server, "Kerberos job's secret rows outside the key's material");
  const std::span<const Block> secret = key.span().subspan(secret_range.offset * 8, secret_rows);
  shape.label_set = offer.label_set;
  std::vector<std::uint8_t> bits;

  if (party_ == 0) {
    std::optional<PreparedGarbling> taken;
    if (offer.id != 0 && !offer.transferred) taken = prepared_->garblings.take(shape, offer.id);
    if (offer.id != 0 && !taken) ++prepared_->refused;
    // R's labels first: a garbling prepared ahead has its zero labels, one garbled now fresh ones.
    gc2::Labels fresh_mask_zero;
    if (!taken) fresh_mask_zero = gc2::zero_labels(mask_bits.size());
    const gc2::Labels& mask_zero = taken ? taken->mask_zero_labels : fresh_mask_zero;
    if (mask_zero.size() != mask_bits.size())
      throw Error(Component::Server, "a prepared garbling with another number of mask rows than its job");
    mask_labels_.answer(peer, *garbler_, asked, mask_zero.span(), mask_bits);
    const gc2::Labels key_and_mask = gc2::concatenated(secret, mask_zero.span());
    // Server 2 holds none of this shape (it restarted or dropped them): neither do we, but
    // for garblings still being streamed to it.
    if (offer.id == 0 && !offer.holds_more)
      prepared_->garblings.drop_if(
          [&](const PreparedShape& held, const PreparedGarbling& garbling) { return held == shape && garbling.confirmed; });
    send_le(peer, taken ? taken->id : std::uint64_t{0});
    const auto public_bits = gc2::bits_of(public_record);
    if (taken) {
      send_labels(peer, gc2::garbler_input_labels(*garbler_, public_bits, taken->public_zero_labels));
      peer.flush();
      bits.assign(taken->decoding.span().begin(), taken->decoding.span().end());
      ++prepared_->used;
    } else {
      const gc2::Labels zero = gc2::zero_labels(public_rows);
      send_labels(peer, gc2::garbler_input_labels(*garbler_, public_bits, zero));
      bits = garbler_->garble(prog, 1, gc2::concatenated(key_and_mask.span(), zero.span()), peer);
      ++prepared_->online;
    }
    if (prepared_->budget() > 0) {
      prepared_->garblings.touch(shape);
      prepared_->planner.used(shape, gc2::garbled_bytes(prog, 1));
    }
    log_.debug("Kerberos job", {{"job", task.job}, {"prepared", taken ? taken->id : std::uint64_t{0}}});
    return bits;
  }

  const gc2::Labels mask_labels = mask_labels_.collect(peer, pending, mask_bits);
  const gc2::Labels key_and_mask = gc2::concatenated(secret, mask_labels.span());
  const std::uint64_t named = receive_le<std::uint64_t>(peer);
  if (named != 0 && (!reserved || named != reserved->id))
    throw PeerError(Component::Server, "server 1 named prepared garbling " + std::to_string(named) +
                                           " for a job; this server offered " +
                                           std::to_string(reserved ? reserved->id : 0));
  gc2::Labels public_labels(public_rows);
  receive_labels(peer, public_labels);
  if (named != 0) {
    bits = gc2::evaluate_stored(prog, 1, gc2::concatenated(key_and_mask.span(), public_labels.span()), reserved->stream);
    ++prepared_->used;
  } else {
    bits = gc2::evaluate(prog, 1, gc2::concatenated(key_and_mask.span(), public_labels.span()), peer);
    ++prepared_->online;
    if (reserved) ++prepared_->refused;
  }
  prepared_->tables.touch(shape);
  log_.debug("Kerberos job", {{"job", task.job}, {"prepared", named}});
  return bits;
}

void Gc2Backend::set_preparation_budget(std::size_t bytes) { prepared_->set_budget(bytes); }

std::optional<PreparedShape> Gc2Backend::next_preparation() const {
  if (party_ != 0 || prepared_->budget() == 0) return std::nullopt;
  return prepared_->planner.next([&](const PreparedShape& shape) { return prepared_->garblings.count(shape); },
                                 prepared_->budget(), std::chrono::steady_clock::now());
}

void Gc2Backend::preparation_failed(const PreparedShape& shape) {
  prepared_->planner.failed(shape, std::chrono::steady_clock::now());
  ++prepared_->refused;
}

void Gc2Backend::prepare(two_party::Channel& peer, const PreparedShape& shape) {
  if (party_ != 0) throw Error(Component::Server, "only server 1 garbles");
  const std::size_t secret_rows = shape.secret.bytes * 8;
  const std::size_t public_rows = static_cast<std::size_t>(shape.public_bytes) * 8;
  // The key's current labels: a shape of another label set is of no more use.
  std::vector<Block> secret_zero;
  {
    std::lock_guard lock(mutex_);
    auto it = label_sets_.find(wire::describe(shape.key));
    if (it != label_sets_.end() && it->second.id == shape.label_set &&
        shape.secret.offset * 8 + secret_rows <= it->second.labels.size())
      secret_zero.assign(it->second.labels.begin() + static_cast<std::ptrdiff_t>(shape.secret.offset * 8),
                         it->second.labels.begin() + static_cast<std::ptrdiff_t>(shape.secret.offset * 8 + secret_rows));
  }
  if (secret_zero.size() != secret_rows) {
    prepared_->planner.forget_if([&](const PreparedShape& planned) { return planned == shape; });
    throw Error(Component::Server, "the labels of " + wire::describe(shape.key) + " changed since its last job");
  }
  const auto program = krb_circuits_->program(shape.circuit.id, shape.circuit.data_bytes, shape.circuit.combine);
  const std::size_t mask_rows =
      jobs::krb_batch_layout(shape.circuit.id, shape.circuit.data_bytes, shape.circuit.combine).mask_rows;
  gc2::Labels mask_zero = gc2::zero_labels(mask_rows);
  gc2::Labels public_zero = gc2::zero_labels(public_rows);
  const gc2::Labels key_and_mask = gc2::concatenated(secret_zero, mask_zero.span());
  const gc2::Labels inputs = gc2::concatenated(key_and_mask.span(), public_zero.span());
  wipe(secret_zero.data(), secret_zero.size() * sizeof(Block));
  if (program->num_inputs != inputs.size()) throw Error(Component::Server, "Kerberos circuit does not fit its shape");
  gc2::GarblingAhead ahead = gc2::garble_ahead(*garbler_, *program, 1, inputs);

  PreparedGarbling garbling;
  garbling.id = ahead.number;
  garbling.bytes = ahead.stream.size();
  garbling.mask_zero_labels = std::move(mask_zero);
  garbling.public_zero_labels = std::move(public_zero);
  garbling.decoding = SecretBytes(ahead.decoding.size());
  std::copy(ahead.decoding.begin(), ahead.decoding.end(), garbling.decoding.data());
  wipe(ahead.decoding.data(), ahead.decoding.size());
  auto added = prepared_->garblings.put(shape, std::move(garbling));
  if (!added.stored)
    throw Error(Component::Server, "a garbling of " + std::to_string(ahead.stream.size()) +
                                       " bytes exceeds [limits] prepared_circuits_mib");
  prepared_->note_dropped(added.dropped);

  PreparationHeader header;
  header.garbler = garbler_instance_;
  header.id = ahead.number;
  header.stream_bytes = ahead.stream.size();
  header.shape = shape;
  header.dropped = prepared_->take_dropped();
  try {
    const auto encoded = encode_preparation_header(header);
    send_le(peer, static_cast<std::uint32_t>(encoded.size()));
    peer.send(encoded);
    send_paced(peer, ahead.stream);
    if (receive_le<std::uint64_t>(peer) != header.id)
      throw PeerError(Component::Server, "preparation: server 2 confirmed another garbling");
  } catch (...) {
    (void)prepared_->garblings.take(shape, header.id);
    prepared_->restore_dropped(std::move(header.dropped));
    throw;
  }
  (void)prepared_->garblings.update(shape, header.id, [](PreparedGarbling& held) { held.confirmed = true; });
  prepared_->planner.succeeded();
  ++prepared_->made;
}

void Gc2Backend::store_prepared(two_party::Channel& peer) {
  if (party_ == 0) throw Error(Component::Server, "only server 2 keeps garbled tables");
  const auto length = receive_le<std::uint32_t>(peer);
  if (length == 0 || length > kMaxPreparationHeaderBytes)
    throw PeerError(Component::Server, "preparation header of " + std::to_string(length) + " bytes");
  std::vector<std::uint8_t> encoded(length);
  peer.receive(encoded);
  PreparationHeader header;
  try {
    header = decode_preparation_header(encoded);
  } catch (const FormatError& error) {
    throw PeerError(Component::Server, error.what());
  }
  if (const std::size_t dropped = prepared_->garbler_seen(header.garbler))
    log_.info("prepared garblings of a previous server 1 dropped", {{"garblings", static_cast<std::uint64_t>(dropped)}});
  for (const auto& shape : header.dropped) prepared_->tables.drop_shape(shape);
  const std::size_t budget = prepared_->budget();
  if (budget == 0) throw PeerError(Component::Server, "server 2 keeps no prepared garblings ([limits] prepared_circuits_mib = 0)");

  const PreparedShape& shape = header.shape;
  {
    std::lock_guard lock(mutex_);
    auto it = label_sets_.find(wire::describe(shape.key));
    if (it == label_sets_.end() || it->second.id != shape.label_set)
      throw PeerError(Component::Server, "server 2 holds other labels of " + wire::describe(shape.key) +
                                             " (or none): nothing is prepared for it before a job transfers them");
  }
  std::shared_ptr<const circuits::Program> program;
  jobs::KrbBatchLayout layout;
  try {
    layout = jobs::krb_batch_layout(shape.circuit.id, shape.circuit.data_bytes, shape.circuit.combine);
    program = krb_circuits_->program(shape.circuit.id, shape.circuit.data_bytes, shape.circuit.combine);
  } catch (const Error& error) {
    throw PeerError(Component::Server, std::string("preparation of no Kerberos circuit: ") + error.what());
  }
  if (shape.secret.bytes * 8 != layout.key_rows - layout.mask_rows || shape.public_bytes != layout.public_bytes ||
      shape.secret.offset + shape.secret.bytes > wire::material_bytes(shape.key.algorithm) ||
      program->num_inputs != layout.key_rows + layout.public_bytes * 8)
    throw PeerError(Component::Server, "preparation: the shape's rows do not fit its circuit");
  const std::uint64_t expected = gc2::garbled_bytes(*program, 1);
  if (header.stream_bytes != expected)
    throw PeerError(Component::Server, "preparation of " + std::to_string(header.stream_bytes) +
                                           " bytes for a circuit that garbles to " + std::to_string(expected));
  if (expected > budget)
    throw PeerError(Component::Server, "a garbling of " + std::to_string(expected) +
                                           " bytes exceeds server 2's [limits] prepared_circuits_mib");

  PreparedTables tables;
  tables.id = header.id;
  tables.bytes = expected;
  tables.garbler = header.garbler;
  tables.stream.resize(expected);
  receive_paced(peer, tables.stream);
  if (gc2::stored_garbling_number(tables.stream) != header.id)
    throw PeerError(Component::Server, "preparation: the stream is another garbling than its header names");
  const auto added = prepared_->tables.put(shape, std::move(tables));
  if (!added.stored) throw PeerError(Component::Server, "preparation: no room in server 2's budget");
  send_le(peer, header.id);
  peer.flush();
  ++prepared_->made;
}

void Gc2Backend::key_rotated(const wire::KeyId& key) { prepared_->forget_older_versions(key); }

void Gc2Backend::forget_key(const wire::KeyId& key) {
  {
    std::lock_guard lock(mutex_);
    auto it = label_sets_.find(wire::describe(key));
    if (it != label_sets_.end()) {
      wipe(it->second.labels.data(), it->second.labels.size() * sizeof(Block));
      label_sets_.erase(it);
    }
  }
  prepared_->forget_key(key);
}

}  // namespace mpc::two_party_engine
