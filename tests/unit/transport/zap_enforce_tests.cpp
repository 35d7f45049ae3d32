// A libzmq that refuses ZMQ_ZAP_ENFORCE_DOMAIN (EINVAL, as a library without the option
// answers) must not get a Listener: without the option a CURVE server admits every client
// whenever no ZAP handler answers. This executable defines zmq_setsockopt itself, so the
// transport library's calls reach this definition first; it forwards everything to libzmq
// except that option while `refuse_enforce` is set.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <zmq.h>

#include <atomic>
#include <cerrno>

#include "common/error.hpp"
#include "transport/curve_keys.hpp"
#include "transport/zmq_link.hpp"

namespace {

constexpr int kZapEnforceDomain = 93;  // ZMQ_ZAP_ENFORCE_DOMAIN, a draft-API name in 4.3
std::atomic<bool> refuse_enforce{false};
std::atomic<int> enforce_calls{0};

}  // namespace

extern "C" int zmq_setsockopt(void* socket, int option, const void* value, size_t size) {
  using Real = int (*)(void*, int, const void*, size_t);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "zmq_setsockopt"));
  if (option == kZapEnforceDomain) {
    ++enforce_calls;
    if (refuse_enforce) {
      errno = EINVAL;
      return -1;
    }
  }
  return real(socket, option, value, size);
}

namespace mpc::transport {
namespace {

TEST(ZapEnforceDomain, ListenerSetsIt) {
  Context context;
  const CurveKeyPair keys = generate_curve_key_pair();
  refuse_enforce = false;
  const int before = enforce_calls;
  Listener listener(context, "tcp://127.0.0.1:*", keys, "clients");
  EXPECT_EQ(enforce_calls, before + 1);  // the interposition is in effect
}

TEST(ZapEnforceDomain, RefusedOptionFailsTheListener) {
  Context context;
  const CurveKeyPair keys = generate_curve_key_pair();
  refuse_enforce = true;
  try {
    Listener listener(context, "tcp://127.0.0.1:*", keys, "clients");
    ADD_FAILURE() << "a listener without ZMQ_ZAP_ENFORCE_DOMAIN was created";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("ZMQ_ZAP_ENFORCE_DOMAIN"), std::string::npos) << error.what();
  }
  refuse_enforce = false;
}

}  // namespace
}  // namespace mpc::transport
