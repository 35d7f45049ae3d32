#!/usr/bin/env bash
# cuda/run_on_gpu.sh: build, check and measure the GPU back end on a machine with a GPU.
#
#   cuda/run_on_gpu.sh package
#       On the build machine (nvcc needed, no GPU): Release build of cuda_gpu_tests,
#       cuda_host_tests and cuda_bench into build-gpu/, then stripped binaries plus the
#       shared libraries they need beyond the C/C++ runtime (libsodium, libcrypto, ...)
#       into build-gpu-carry/ (git-ignored: name it in the device tool's `carry`).
#   cuda/run_on_gpu.sh run [STEP...]
#       On the GPU machine, from the repository root. Uses build-gpu-carry/ when present,
#       else configures and builds build-gpu/ there (needs the project's -dev packages).
#       STEPs (default: all of them, in this order):
#         info       nvidia-smi, compute-sanitizer and nvcc versions
#         host       cuda_host_tests (the CPU emulation; must pass everywhere)
#         memcheck   compute-sanitizer --tool memcheck on the kernel and evaluator tests
#                    and three circuits, batches of at most 5000 instances
#         racecheck  compute-sanitizer --tool racecheck on the kernel tests
#         synccheck  compute-sanitizer --tool synccheck on the kernel tests
#         tests      cuda_gpu_tests in full (every AES circuit up to 1,000,003 instances)
#         bench      cuda_bench --circuit all
#       Logs go to $OUT (or build-gpu/results when OUT is unset): one file per step plus
#       summary.txt (at most 8 files, as the device tool returns).
#
# Each device-tool call runs at most 10 minutes: split long runs, e.g.
#   run: cuda/run_on_gpu.sh run info host memcheck racecheck synccheck
#   run: cuda/run_on_gpu.sh run tests
#   run: cuda/run_on_gpu.sh run bench
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CARRY="$ROOT/build-gpu-carry"
BUILD="$ROOT/build-gpu"
OUT=${OUT:-$ROOT/build-gpu/results}
BINARIES=(cuda_gpu_tests cuda_host_tests cuda_bench)

die() { echo "run_on_gpu.sh: $*" >&2; exit 1; }

build() {
  local log=$1
  cmake -G Ninja -B "$BUILD" -S "$ROOT" -DCMAKE_BUILD_TYPE=Release -DMPC_ENABLE_CUDA=ON >"$log" 2>&1 || return 1
  grep -q "CUDA evaluator: nvcc" "$log" || { echo "CUDA was not enabled (no nvcc?)" >>"$log"; return 1; }
  ninja -C "$BUILD" "${BINARIES[@]}" >>"$log" 2>&1
}

package() {
  mkdir -p "$CARRY/bin" "$CARRY/lib"
  build "$CARRY/build.log" || die "build failed: see $CARRY/build.log"
  cp "$BUILD/tests/unit/cuda/cuda_gpu_tests" "$BUILD/tests/unit/cuda/cuda_host_tests" "$BUILD/cuda/bench/cuda_bench" \
    "$CARRY/bin/"
  strip "$CARRY"/bin/*
  # Shared libraries beyond the C/C++ runtime and the driver, which the GPU machine has.
  ldd "$CARRY"/bin/* | awk '/=> \//{print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$CARRY/lib/"; done
  du -sh "$CARRY"
  echo "packaged: name build-gpu-carry in the device tool's carry, then run: cuda/run_on_gpu.sh run"
}

run_step() {
  local name=$1; shift
  local log="$OUT/$name.log"
  local start=$SECONDS
  echo "== $name: $*" >"$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  printf '%-10s rc=%-3d %5ds  %s\n' "$name" "$rc" $((SECONDS - start)) "$(tail -n 1 "$log")" >>"$OUT/summary.txt"
  return $rc
}

# On the GPU machine a skipped GPU test means the device was not found: a failure.
no_skips() {
  if grep -q "no CUDA device: GPU tests skipped" "$OUT/$1.log"; then
    echo "$1: GPU tests were skipped: no usable device found" >>"$OUT/summary.txt"
    return 1
  fi
}

run() {
  mkdir -p "$OUT"
  : >"$OUT/summary.txt"
  local gpu_tests host_tests bench
  if [[ -x "$CARRY/bin/cuda_gpu_tests" ]]; then
    gpu_tests="$CARRY/bin/cuda_gpu_tests"
    host_tests="$CARRY/bin/cuda_host_tests"
    bench="$CARRY/bin/cuda_bench"
    export LD_LIBRARY_PATH="$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "binaries: build-gpu-carry (prebuilt)" >>"$OUT/summary.txt"
  else
    run_step build build "$OUT/build.log.tmp" || { cat "$OUT/build.log.tmp" >>"$OUT/build.log"; die "build failed"; }
    rm -f "$OUT/build.log.tmp"
    gpu_tests="$BUILD/tests/unit/cuda/cuda_gpu_tests"
    host_tests="$BUILD/tests/unit/cuda/cuda_host_tests"
    bench="$BUILD/cuda/bench/cuda_bench"
  fi
  local steps=("$@")
  [[ ${#steps[@]} -eq 0 ]] && steps=(info host memcheck racecheck synccheck tests bench)
  local failed=0
  local kernel_tests='GpuKernels.*:GpuEvaluator.EdgeCases:GpuEvaluator.OutputsMayAliasInputs'
  local circuit='AllCircuits/GpuCircuits.MatchCpuEvaluatorAndReference'
  local checked_tests="GpuKernels.*:GpuEvaluator.*:$circuit/Aes128EncryptAnd32:$circuit/Aes256DecryptDepth4:$circuit/GreaterThan64"
  for step in "${steps[@]}"; do
    case $step in
      info)
        run_step info bash -c 'nvidia-smi; compute-sanitizer --version; nvcc --version; uname -a' || failed=1 ;;
      host)
        run_step host "$host_tests" || failed=1 ;;
      memcheck)
        MPC_GPU_TEST_MAX_INSTANCES=5000 run_step memcheck compute-sanitizer --tool memcheck --leak-check full \
          --error-exitcode 3 "$gpu_tests" --gtest_filter="$checked_tests" && no_skips memcheck || failed=1 ;;
      racecheck)
        MPC_GPU_TEST_MAX_INSTANCES=5000 run_step racecheck compute-sanitizer --tool racecheck --error-exitcode 3 \
          "$gpu_tests" --gtest_filter="$kernel_tests" && no_skips racecheck || failed=1 ;;
      synccheck)
        MPC_GPU_TEST_MAX_INSTANCES=5000 run_step synccheck compute-sanitizer --tool synccheck --error-exitcode 3 \
          "$gpu_tests" --gtest_filter="$kernel_tests" && no_skips synccheck || failed=1 ;;
      tests)
        run_step tests "$gpu_tests" && no_skips tests || failed=1 ;;
      bench)
        run_step bench "$bench" --circuit all --mode all || failed=1 ;;
      *)
        die "unknown step $step" ;;
    esac
  done
  cat "$OUT/summary.txt"
  return $failed
}

case ${1:-} in
  package) package ;;
  run) shift; run "$@" ;;
  *) die "usage: cuda/run_on_gpu.sh package | run [info|host|memcheck|racecheck|synccheck|tests|bench ...]" ;;
esac
