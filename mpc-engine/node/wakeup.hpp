// Lets a worker thread wake the main thread out of its socket poll (an eventfd
// polled next to the ZeroMQ sockets): polling with short timeouts instead makes
// zmq_poll spin.
#pragma once

namespace mpc::node {

class Wakeup {
 public:
  Wakeup();
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;
  void notify() noexcept;  // from any thread
  void clear() noexcept;   // by the polling thread, before it looks for work
  int descriptor() const noexcept { return descriptor_; }

 private:
  int descriptor_ = -1;
};

}  // namespace mpc::node
