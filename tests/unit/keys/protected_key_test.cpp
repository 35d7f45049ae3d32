// The protected-key format (keys/protected_key.h), which mpcctl and the KDB module both use:
// known answers computed independently with Python's hashlib/hmac, and the mark's rule.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "keys/key_algorithms.h"
#include "keys/protected_key.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string engine_name(const std::string& principal) {
  std::uint8_t hash[MPC_PROTECTED_KEY_NAME_HASH_LEN];
  EXPECT_EQ(mpc_protected_key_name_hash(principal.data(), principal.size(), hash), 0);
  char name[MPC_PROTECTED_KEY_ENGINE_NAME_LEN];
  mpc_protected_key_engine_name(hash, name);
  return name;
}

Bytes ticket_key(const Bytes& existing) {
  Bytes out(MPC_PROTECTED_KEY_TICKET_KEY_LEN, 0xee);
  EXPECT_EQ(mpc_protected_key_ticket_key(existing.data(), existing.size(), out.data()), 0);
  return out;
}

Bytes counting(std::size_t size) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(i);
  return out;
}

TEST(ProtectedKey, NameHashKnownAnswers) {
  // python3: hashlib.sha256(b"mpc-kdc principal v1\0" + name).digest()[:16]
  std::uint8_t hash[MPC_PROTECTED_KEY_NAME_HASH_LEN];
  const std::string name = "krbtgt/MPC.TEST@MPC.TEST";
  ASSERT_EQ(mpc_protected_key_name_hash(name.data(), name.size(), hash), 0);
  EXPECT_EQ(Bytes(hash, hash + sizeof(hash)), from_hex("31a623974f190587b46458fd7e44cf59"));
  ASSERT_EQ(mpc_protected_key_name_hash(nullptr, 0, hash), 0);
  EXPECT_EQ(Bytes(hash, hash + sizeof(hash)), from_hex("38e10b4b6ed99e2f6ee84ddfb7ae1fe4"));
}

TEST(ProtectedKey, NameHashRefusesANullNameWithALength) {
  std::uint8_t hash[MPC_PROTECTED_KEY_NAME_HASH_LEN];
  std::memset(hash, 0xaa, sizeof(hash));
  EXPECT_EQ(mpc_protected_key_name_hash(nullptr, 3, hash), -1);
  EXPECT_EQ(Bytes(hash, hash + sizeof(hash)), Bytes(sizeof(hash), 0));
}

TEST(ProtectedKey, EngineNameIsKdcSlashLowercaseHex) {
  EXPECT_EQ(engine_name("krbtgt/MPC.TEST@MPC.TEST"), "kdc/31a623974f190587b46458fd7e44cf59");
  EXPECT_EQ(engine_name("krbtgt/EXAMPLE.COM@EXAMPLE.COM"), "kdc/42b8b0b4a5e0761e9b4c3675e3fac9af");
}

TEST(ProtectedKey, TicketKeyKnownAnswer) {
  // python3: hmac.new(bytes(range(32)), b"mpc-kdc aes256-gcm ticket key v1", "sha256").digest()
  EXPECT_EQ(ticket_key(counting(32)), from_hex("af93a38797004c91bb9e83a135b675d28f7a0af884360cacc95a900d905c3589"));
}

TEST(ProtectedKey, TicketKeyRefusesNoKeyAndZeroesItsOutput) {
  Bytes out(MPC_PROTECTED_KEY_TICKET_KEY_LEN, 0xee);
  const std::uint8_t one = 1;
  EXPECT_EQ(mpc_protected_key_ticket_key(nullptr, 32, out.data()), -1);
  EXPECT_EQ(out, Bytes(out.size(), 0));
  out.assign(out.size(), 0xee);
  EXPECT_EQ(mpc_protected_key_ticket_key(&one, 0, out.data()), -1);
  EXPECT_EQ(out, Bytes(out.size(), 0));
}

TEST(ProtectedKey, MarkRule) {
  EXPECT_EQ(mpc_protected_key_is_marked(nullptr), 0);
  for (const char* off : {"0", "false", "FALSE", "No", "off", "OFF"}) EXPECT_EQ(mpc_protected_key_is_marked(off), 0) << off;
  for (const char* on : {"true", "1", "yes", "on", "", "offline", "false "})
    EXPECT_EQ(mpc_protected_key_is_marked(on), 1) << on;
}

TEST(ProtectedKey, MarkersAreTheirFullLength) {
  EXPECT_EQ(sizeof(MPC_PROTECTED_KEY_MARKER), static_cast<std::size_t>(MPC_PROTECTED_KEY_MARKER_LEN));
  EXPECT_EQ(sizeof(MPC_PROTECTED_KEY_USER_MARKER), static_cast<std::size_t>(MPC_PROTECTED_KEY_USER_MARKER_LEN));
  EXPECT_EQ(MPC_PROTECTED_KEY_TICKET_KEY_LEN, static_cast<int>(mpc_key_algorithm_by_id(3)->key_bytes));
}

}  // namespace
