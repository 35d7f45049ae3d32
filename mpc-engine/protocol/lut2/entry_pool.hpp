// The lookup-table entries one server holds (two_party/numbered_pool.hpp), named so in errors:
// "lookup-table pool empty".
#pragma once

#include "protocol/lut2/masked_table.hpp"
#include "protocol/two_party/numbered_pool.hpp"

namespace mpc::lut2 {

using PoolEmpty = two_party::PoolEmpty;

class EntryPool : public two_party::NumberedPool<Entry> {
 public:
  EntryPool() : NumberedPool("lookup-table") {}
};

}  // namespace mpc::lut2
