// Deliberate deviations of one server, for the tests of active security: they show that a
// server which sends altered messages is caught, and that without the check the same
// alteration would change a result unnoticed. One more, "late-mode-switch=MS", makes a server
// change modes MS ms after its peers, for the tests of requests caught between two modes;
// "shun-missing-server" makes a pair member ignore the server its pair serves without;
// "stall-once=MS" holds back the first garbled batch a server streams by MS ms, as a host
// starved of CPU for a moment would, and "auth2-stall-batch=N" its N-th batch of a pair's AND
// material (engines/two_party/and_material_stock.cpp); "false-blame=N" makes a server claim disputes it never
// had with the servers whose numbers are the digits of N (node/disputes.hpp); "false-deal" makes
// it deal the pair it would serve without checks that fail (node/pair_check_keeper.hpp).
//
// Only the test server (mpc-server-faults, never installed or packaged) is compiled with
// MPC_FAULT_INJECTION; every deviation sits inside `#if defined(MPC_FAULT_INJECTION)`, so the
// server that ships contains none of them. In the test server a deviation happens only when
// the environment variable MPC_FAULT names it: "name" or "name=N" (N a decimal number the
// deviation reads, such as a byte offset), or several such, separated by commas, for a server
// that deviates in every service it takes part in.
#pragma once

#if defined(MPC_FAULT_INJECTION)

#include <cstdint>
#include <optional>
#include <string_view>

namespace mpc::fault {

// N of MPC_FAULT when it names `name` (0 for a bare "name"); empty otherwise.
std::optional<std::uint64_t> armed(std::string_view name);

}  // namespace mpc::fault

#endif
