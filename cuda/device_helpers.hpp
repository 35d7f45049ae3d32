// cuda/device_helpers.hpp: the arithmetic shared by the GPU kernels and the host code
// that drives them, for the three-party evaluation of Araki, Furukawa, Lindell, Nof and
// Ohara, "High-Throughput Semi-Honest Secure Three-Party Computation with an Honest
// Majority", ACM CCS 2016 (eprint 2016/768).
//
// Everything here is tiny, __host__ __device__, free of CUDA headers and of C++20, so
// that nvcc compiles it into the kernels and g++ into the CPU unit tests
// (tests/unit/cuda/device_helpers_test.cpp), which check it against the CPU evaluator.
//
// What it fixes:
// - word/lane mapping: instance n is bit n % 64 of word n / 64 (as in rss3::ShareMatrix);
//   words are grouped in chunks of kChunkWords = 32 words = 2048 instances, the
//   chunking of the message layout (rss3::kChunkInstances);
// - device state: slot s, component c (0 = x, 1 = a), word w at
//   state[(2 s + c) * pitch + w], pitch = padded_words(n) (whole chunks);
// - the message layout of rss3/evaluator.hpp: for chunk c, for AND k of the layer, the
//   r bits of the chunk's instances, packed little-endian, ceil(n_c / 8) bytes each, the
//   padding lanes of a partial chunk's last byte sent as zero;
// - alpha: the layer's message XORed byte for byte with the next round_up(message, 16)
//   bytes of AES-128-CTR(k_i) ^ AES-128-CTR(k_{i-1}), counter blocks
//   epoch (64, big-endian) || sequence (32, BE) || block counter (32, BE).
#pragma once

#include <cstddef>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#if defined(__CUDACC__)
#define MPC_HD __host__ __device__ __forceinline__
#else
#define MPC_HD inline
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the message layout and share words are read as little-endian bytes"
#endif

namespace mpc::cuda::detail {

inline constexpr std::uint32_t kChunkInstances = 2048;  // == rss3::kChunkInstances
inline constexpr std::uint32_t kChunkWords = kChunkInstances / 64;
inline constexpr std::uint32_t kChunkStride = kChunkInstances / 8;  // bytes of one AND's r in a full chunk
inline constexpr std::uint32_t kAesBlockBytes = 16;
static_assert(kChunkWords == 32, "one warp lane per word of a chunk");

// ---- index math -------------------------------------------------------------------

MPC_HD constexpr std::uint64_t words_for(std::uint64_t instances) { return (instances + 63) / 64; }
MPC_HD constexpr std::uint64_t chunks_for(std::uint64_t instances) {
  return (instances + kChunkInstances - 1) / kChunkInstances;
}
// Words per row on the device: whole chunks, so every lane of a chunk has a word.
MPC_HD constexpr std::uint64_t padded_words(std::uint64_t instances) { return chunks_for(instances) * kChunkWords; }

// Instances in chunk c (c < chunks_for(instances)).
MPC_HD constexpr std::uint32_t chunk_instances(std::uint64_t instances, std::uint64_t chunk) {
  const std::uint64_t left = instances - chunk * kChunkInstances;
  return left < kChunkInstances ? static_cast<std::uint32_t>(left) : kChunkInstances;
}
// Bytes of one AND's r for chunk c: 256 for a full chunk, ceil(n_c / 8) for the last one.
MPC_HD constexpr std::uint32_t chunk_bytes(std::uint64_t instances, std::uint64_t chunk) {
  return (chunk_instances(instances, chunk) + 7) / 8;
}
// Bytes of one AND's r over the whole batch.
MPC_HD constexpr std::uint64_t per_and_bytes(std::uint64_t instances) {
  return instances / kChunkInstances * kChunkStride + (instances % kChunkInstances + 7) / 8;
}
MPC_HD constexpr std::uint64_t message_bytes(std::uint64_t instances, std::uint64_t ands) {
  return per_and_bytes(instances) * ands;
}
// alpha drawn for a layer: the message rounded up to whole AES blocks.
MPC_HD constexpr std::uint64_t alpha_bytes(std::uint64_t message) {
  return (message + kAesBlockBytes - 1) / kAesBlockBytes * kAesBlockBytes;
}
// Where chunk c's part of a layer's message starts (every chunk before it is full).
MPC_HD constexpr std::uint64_t chunk_message_offset(std::uint64_t chunk, std::uint64_t ands) {
  return chunk * ands * kChunkStride;
}
// Where AND k's r for chunk c starts.
MPC_HD constexpr std::uint64_t r_offset(std::uint64_t instances, std::uint64_t chunk, std::uint64_t ands,
                                        std::uint64_t k) {
  return chunk_message_offset(chunk, ands) + k * chunk_bytes(instances, chunk);
}
// End of chunks [0, chunk_end) of a layer's message (chunk_end <= chunks_for(instances)).
MPC_HD constexpr std::uint64_t message_prefix_bytes(std::uint64_t instances, std::uint64_t ands,
                                                    std::uint64_t chunk_end) {
  return chunk_end * kChunkInstances >= instances ? message_bytes(instances, ands)
                                                  : chunk_message_offset(chunk_end, ands);
}

MPC_HD constexpr std::uint64_t word_of_instance(std::uint64_t instance) { return instance / 64; }
MPC_HD constexpr std::uint32_t bit_of_instance(std::uint64_t instance) { return static_cast<std::uint32_t>(instance % 64); }
MPC_HD constexpr std::uint64_t chunk_of_word(std::uint64_t word) { return word / kChunkWords; }
MPC_HD constexpr std::uint32_t lane_of_word(std::uint64_t word) { return static_cast<std::uint32_t>(word % kChunkWords); }
MPC_HD constexpr std::uint64_t state_index(std::uint32_t slot, std::uint32_t component, std::uint64_t pitch,
                                           std::uint64_t word) {
  return (2 * static_cast<std::uint64_t>(slot) + component) * pitch + word;
}

// Lanes of the last byte of a chunk's r that carry instances (0xff when it is full).
MPC_HD constexpr std::uint8_t tail_byte_mask(std::uint32_t chunk_n) {
  return chunk_n % 8 == 0 ? std::uint8_t{0xff} : static_cast<std::uint8_t>((1u << (chunk_n % 8)) - 1);
}

// ---- packing of r into the message ----------------------------------------------------

MPC_HD std::uint64_t load_word_aligned(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const std::uint64_t*>(p);
#else
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
#endif
}

MPC_HD void store_word_aligned(std::uint8_t* p, std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<std::uint64_t*>(p) = v;
#else
  std::memcpy(p, &v, sizeof v);
#endif
}

// Word j (lane j) of one AND's r for one chunk, from `region` = message + r_offset(...).
// Bytes past chunk_bytes belong to the next AND (or to nobody) and read as zero. When
// chunk_bytes is 256 (2041 or more instances) the region is 8-byte aligned (r_offset is
// then a multiple of 256) and every byte of every word is the chunk's.
MPC_HD std::uint64_t load_r_word(const std::uint8_t* region, std::uint32_t chunk_bytes, std::uint32_t j) {
  if (chunk_bytes == kChunkStride) return load_word_aligned(region + 8 * j);
  std::uint64_t v = 0;
  for (std::uint32_t b = 0; b < 8; ++b) {
    const std::uint32_t at = 8 * j + b;
    if (at < chunk_bytes) v |= static_cast<std::uint64_t>(region[at]) << (8 * b);
  }
  return v;
}

// Stores word j of one AND's r for one chunk: only the chunk's bytes, and in a partial
// chunk's last byte only the lanes that carry instances (the others are sent as zero).
MPC_HD void store_r_word(std::uint8_t* region, std::uint32_t chunk_bytes, std::uint32_t chunk_n, std::uint32_t j,
                         std::uint64_t r) {
  if (chunk_n == kChunkInstances) {  // a full chunk: no padding lanes, 8-byte aligned
    store_word_aligned(region + 8 * j, r);
    return;
  }
  for (std::uint32_t b = 0; b < 8; ++b) {
    const std::uint32_t at = 8 * j + b;
    if (at >= chunk_bytes) break;
    std::uint8_t byte = static_cast<std::uint8_t>(r >> (8 * b));
    if (at + 1 == chunk_bytes) byte &= tail_byte_mask(chunk_n);
    region[at] = byte;
  }
}

// ---- counter blocks ---------------------------------------------------------------------

MPC_HD std::uint32_t bswap32(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(v, 0, 0x0123);
#else
  return __builtin_bswap32(v);
#endif
}

// The counter block epoch || sequence || counter as four big-endian 32-bit words (the
// column words of the table-driven AES below).
MPC_HD void counter_block_words(std::uint64_t epoch, std::uint32_t sequence, std::uint32_t counter,
                                std::uint32_t words[4]) {
  words[0] = static_cast<std::uint32_t>(epoch >> 32);
  words[1] = static_cast<std::uint32_t>(epoch);
  words[2] = sequence;
  words[3] = counter;
}

// The same block as 16 bytes (what OpenSSL's CTR mode is given as IV).
MPC_HD void counter_block_bytes(std::uint64_t epoch, std::uint32_t sequence, std::uint32_t counter,
                                std::uint8_t out[16]) {
  std::uint32_t w[4];
  counter_block_words(epoch, sequence, counter, w);
  for (int i = 0; i < 4; ++i)
    for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<std::uint8_t>(w[i] >> (24 - 8 * b));
}

// ---- 64 x 64 bit transpose (records <-> bitsliced rows) ---------------------------------

// In place: afterwards bit i of a[j] is the former bit j of a[i]. Six rounds of the
// recursive block swap (Warren, Hacker's Delight, 2nd ed., 7-3): at width w, the high w
// bits of row i trade places with the low w bits of row i + w, for each row i with bit w
// clear, leaving each 2w x 2w block made of four transposed w x w blocks.
MPC_HD void transpose64(std::uint64_t a[64]) {
  std::uint64_t mask = 0x00000000FFFFFFFFull;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t width = 32; width != 0; width >>= 1, mask ^= mask << width) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t i = 0; i < 64; ++i) {
      if ((i & width) != 0) continue;
      const std::uint64_t t = ((a[i] >> width) ^ a[i + width]) & mask;
      a[i] ^= t << width;
      a[i + width] ^= t;
    }
  }
}

// 8-byte groups of a record: each group is one 64 x 64 transpose per word.
MPC_HD constexpr std::uint64_t record_groups(std::uint64_t record_bytes) { return (record_bytes + 7) / 8; }

// Slicing of word w (instances 64 w .. 64 w + 63) and record bytes [8 g, 8 g + 8): rows
// first_row + 64 g + j get bit j of those bytes. Instances past `instances` (and so
// padding words, w >= words_for(instances)) are written as zero.
MPC_HD void slice_tile(const std::uint8_t* records, std::uint64_t record_bytes, std::uint64_t instances,
                       std::uint64_t* rows, std::uint64_t words_per_row, std::uint64_t first_row, std::uint64_t w,
                       std::uint64_t g) {
  const std::uint64_t left = record_bytes - 8 * g;
  const std::uint32_t group_bytes = left < 8 ? static_cast<std::uint32_t>(left) : 8;
  std::uint64_t m[64];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t i = 0; i < 64; ++i) {
    const std::uint64_t instance = 64 * w + i;
    std::uint64_t v = 0;
    if (instance < instances) {
      const std::uint8_t* p = records + instance * record_bytes + 8 * g;
      for (std::uint32_t b = 0; b < group_bytes; ++b) v |= static_cast<std::uint64_t>(p[b]) << (8 * b);
    }
    m[i] = v;
  }
  transpose64(m);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t j = 0; j < 64; ++j)
    if (j < 8 * group_bytes) rows[(first_row + 64 * g + j) * words_per_row + w] = m[j];
}

// Inverse of slice_tile for word w < words_for(instances): writes only the records'
// bytes [8 g, 8 g + 8) of instances < `instances`.
MPC_HD void unslice_tile(const std::uint64_t* rows, std::uint64_t words_per_row, std::uint64_t first_row,
                         std::uint64_t record_bytes, std::uint64_t instances, std::uint8_t* records, std::uint64_t w,
                         std::uint64_t g) {
  const std::uint64_t left = record_bytes - 8 * g;
  const std::uint32_t group_bytes = left < 8 ? static_cast<std::uint32_t>(left) : 8;
  std::uint64_t m[64];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t j = 0; j < 64; ++j)
    m[j] = j < 8 * group_bytes ? rows[(first_row + 64 * g + j) * words_per_row + w] : 0;
  transpose64(m);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t i = 0; i < 64; ++i) {
    const std::uint64_t instance = 64 * w + i;
    if (instance >= instances) continue;
    std::uint8_t* p = records + instance * record_bytes + 8 * g;
    for (std::uint32_t b = 0; b < group_bytes; ++b) p[b] = static_cast<std::uint8_t>(m[i] >> (8 * b));
  }
}

}  // namespace mpc::cuda::detail
