// MPC_RSS3_CLONES: a function built for the baseline and again for AVX2, picked at load time by
// the CPU (GCC on x86-64; elsewhere one build). For loops the compiler vectorises well alone.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MPC_RSS3_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define MPC_RSS3_CLONES
#endif
