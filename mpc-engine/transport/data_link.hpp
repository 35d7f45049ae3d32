// Data links: the servers' layer messages over plain TCP sockets, each frame sealed with
// AES-256-GCM (frame_cipher.hpp) under keys from a handshake bound to the pinned
// long-term keys (link_handshake.hpp).
//
// Why not CurveZMQ here: a batch's layer messages are most of the bytes the servers move,
// and CurveZMQ seals them with XSalsa20-Poly1305 in software on ZeroMQ's I/O thread, a
// hand-off and a copy each way. A data link is read and written by the thread that
// evaluates, with the AES and GHASH instructions of the CPU. Control messages stay on
// CurveZMQ (zmq_link.hpp).
//
// Any failure (a frame whose tag fails: tampered, replayed, reordered or cut short; a
// peer that closes; a deadline that passes half-way through a frame) closes the link for
// good and throws PeerError; the caller connects again, with a new handshake and keys.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "transport/curve_keys.hpp"
#include "transport/frame_cipher.hpp"

namespace mpc::transport {

struct DataLinkOptions {
  // A frame announcing more ciphertext than this closes the link before anything is read.
  std::uint32_t max_frame_bytes = std::uint32_t{512} << 20;
  std::chrono::milliseconds handshake_timeout{2000};
  std::uint64_t rekey_after_frames = kDefaultRekeyFrames;
};

class DataLink {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects to the DataListener at `endpoint` ("tcp://host:port") whose key must be
  // `listener_key`, naming `channel` (which of the caller's streams this is). Throws
  // PeerError when no keyed link comes up by the handshake timeout (refused, unreachable, or
  // the listener could not prove its key).
  static std::unique_ptr<DataLink> connect(const std::string& endpoint, const CurveKeyPair& own,
                                           const PublicKey& listener_key, std::uint32_t channel,
                                           const DataLinkOptions& options = {});
  ~DataLink();
  DataLink(const DataLink&) = delete;
  DataLink& operator=(const DataLink&) = delete;

  // Sends the parts as one frame. Throws PeerError (and the link is closed) if the link is
  // broken or the frame is not out by `deadline`.
  void send(std::initializer_list<std::span<const std::uint8_t>> parts, Clock::time_point deadline);
  // The next frame's plaintext into `frame` (its buffer may be exchanged with one of the
  // link's). False when no whole frame arrived by `deadline`: what did arrive is kept for
  // the next call. Throws PeerError (and the link is closed) on any failure.
  bool receive(std::vector<std::uint8_t>& frame, Clock::time_point deadline);

  // For a link used in one direction only (the connecting end sends, the listening end reads):
  // true when the reading end has gone (closed, reset, or sent what it never should), so the
  // sender connects again before a frame is lost in a dead socket. Does not wait.
  bool reader_gone();

  // Whether part of a frame has arrived, and how many bytes have arrived in all: a reader
  // can tell a frame that stalls half-way (a peer stuck, a length altered on the way) from
  // one still coming.
  bool mid_frame() const noexcept { return header_read_ != 0 || buffered(); }
  std::uint64_t bytes_read() const noexcept { return bytes_read_; }

  // Lowers the largest frame this end accepts (a link from a client, whose requests are small,
  // on a listener whose peers' frames are not): a frame announcing more closes the link.
  void limit_frames(std::uint32_t max_frame_bytes) noexcept {
    max_frame_bytes_ = std::min(max_frame_bytes_, max_frame_bytes);
  }

  int descriptor() const noexcept { return socket_; }  // readable: a frame may be arriving
  // Bytes a read took off the socket past the frame it completed wait for the next receive():
  // a caller that polls descriptor() before receiving, and stops before receive() says no
  // frame is whole, must not wait on the socket while this is true.
  bool buffered() const noexcept { return inbox_begin_ != inbox_end_; }
  bool closed() const noexcept { return socket_ < 0; }
  const PublicKey& peer() const noexcept { return peer_; }
  std::uint32_t channel() const noexcept { return channel_; }

 private:
  friend class DataListener;
  DataLink(int socket, const PublicKey& peer, std::uint32_t channel, const SecretBytes& send_key,
           const SecretBytes& receive_key, const DataLinkOptions& options);
  [[noreturn]] void fail(const std::string& why);
  // Reads what is there toward the current frame; true once it is whole.
  bool read_available();
  // Up to `size` bytes toward the current frame into `into`, from the inbox or the socket; 0
  // when none are there now.
  std::size_t take(std::uint8_t* into, std::size_t size);

  int socket_ = -1;
  PublicKey peer_{};
  std::uint32_t channel_ = 0;
  std::uint32_t max_frame_bytes_;
  FrameCipher sealer_;
  FrameCipher opener_;
  std::vector<std::uint8_t> outgoing_;
  std::uint8_t header_[kFrameHeaderBytes] = {};
  std::size_t header_read_ = 0;
  std::vector<std::uint8_t> body_;  // ciphertext || tag of the frame being read
  std::size_t body_read_ = 0;
  // Ciphertext read off the socket and not yet taken: a frame smaller than the inbox comes with
  // its header in one read, and a following frame's bytes wait here.
  std::vector<std::uint8_t> inbox_;
  std::size_t inbox_begin_ = 0;
  std::size_t inbox_end_ = 0;
  std::uint64_t bytes_read_ = 0;
};

// A handshake the listener refused because the peer's key holds as many links as it may
// (DataListener::admit_while): expected while a client runs more processes than its share.
class LinkLimitReached : public PeerError {
 public:
  using PeerError::PeerError;
};

class DataListener {
 public:
  using Clock = std::chrono::steady_clock;

  // Binds `endpoint` ("tcp://host:port", port * for any). Throws Error(Transport).
  DataListener(const std::string& endpoint, const CurveKeyPair& own, const DataLinkOptions& options = {});
  ~DataListener();
  DataListener(const DataListener&) = delete;
  DataListener& operator=(const DataListener&) = delete;

  void allow(const PublicKey& key);  // a peer's key the listener admits
  // Asked in each handshake, once the peer's key is known to be admitted and before the link
  // comes up: `reserve` false refuses this link (the peer's connect fails, as for any
  // refusal, and the peer holds no link that is closed later with a request on it); true
  // holds a place for it, which `release` gives back should the handshake fail after it. The
  // caller of handshake() takes a returned link's place over. Both must be safe to call from
  // several threads; set before the first handshake.
  void admit_while(std::function<bool(const PublicKey&)> reserve, std::function<void(const PublicKey&)> release) {
    reserve_ = std::move(reserve);
    release_ = std::move(release);
  }
  // The next connection whose handshake completes with an admitted key; empty when none did
  // by `deadline`. A connection that fails (a key not admitted, a bad handshake, a peer too
  // slow) is closed and counted.
  std::unique_ptr<DataLink> accept(Clock::time_point deadline);

  // The two halves of accept(), for a caller that runs each handshake on a thread of its own
  // so that a connection that never finishes its handshake holds up no other:
  // the next connection's socket (owned by the caller), or nothing when none came by `deadline`;
  std::optional<int> accept_connection(Clock::time_point deadline);
  // and its handshake, which takes the socket. Throws PeerError (the socket closed) for a key
  // not admitted, a bad handshake or a peer too slow. Safe to call from several threads once
  // every allow() is done.
  std::unique_ptr<DataLink> handshake(int socket) const;

  std::string bound_endpoint() const;
  int descriptor() const noexcept { return socket_; }  // readable: a connection is waiting
  std::uint64_t refused() const noexcept { return refused_; }
  const std::string& last_refusal() const noexcept { return last_refusal_; }

 private:
  int socket_ = -1;
  CurveKeyPair own_;
  DataLinkOptions options_;
  std::set<PublicKey> allowed_;
  std::function<bool(const PublicKey&)> reserve_;
  std::function<void(const PublicKey&)> release_;
  std::uint64_t refused_ = 0;
  std::string last_refusal_;
};

}  // namespace mpc::transport
