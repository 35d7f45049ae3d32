#!/usr/bin/env bash
# cuda/run_on_gpu.sh: build, check and measure the GPU back end on a machine with a GPU.
#
#   cuda/run_on_gpu.sh package
#       On the build machine (nvcc needed, no GPU): Release build of cuda_gpu_tests,
#       cuda_host_tests and cuda_bench, and of an engine (mpc-server, mpcctl, mpc-bench,
#       link_bench, laid out as in a build directory under engine/) into build-gpu/, then
#       stripped binaries plus the shared libraries they need beyond the C/C++ runtime
#       (libsodium, libcrypto, libzmq, ...),
#       this script and the commit id into build-gpu-carry/ (git-ignored: copy it into the
#       GPU machine's checkout). BASELINE_BENCH=path adds that cuda_bench binary as
#       bin/cuda_bench_before (an earlier version, to measure before and after in one run).
#   build-gpu-carry/run_on_gpu.sh run [STEP...]
#       On the GPU machine, from the repository root: the carried script finds its binaries
#       beside it. STEPs (default: info host tests racecheck synccheck memcheck bench):
#         info       nvidia-smi, compute-sanitizer and nvcc versions, the CPUs' topology
#         host       cuda_host_tests (the CPU emulation; must pass everywhere)
#         tests      cuda_gpu_tests, batches of at most $MPC_GPU_TEST_MAX_INSTANCES (default
#                    100003; set it empty for everything, up to 1,000,003 instances)
#         racecheck  compute-sanitizer racecheck on the kernel tests and the small staged test
#         synccheck  compute-sanitizer synccheck, the same tests
#         memcheck   compute-sanitizer memcheck on kernel, evaluator and pipeline tests, and
#                    three circuits, batches of at most 5000 instances
#         bench      cuda_bench $BENCH_ARGS (default: AES-128/32-AND, every mode), JSON too
#         before     bin/cuda_bench_before (when packaged): one and three parties, AES-128
#         ncu        Nsight Compute on a few kernels of a 2^18-instance run ($NCU_ARGS)
#         engine     tests/bench/data_plane_bench.py against the carried engine: data links
#                    against CurveZMQ at 1, 2, 4, ... and every core ($ENGINE_ARGS), its
#                    data-plane.{json,md,png} into $OUT
#         scaling    tests/bench/core_scaling_bench.py: the evaluator alone, one copy per CPU,
#                    passive and active, by batch size and hyper-thread siblings, core-scaling.json
#         active     tests/bench/active_bench.py --no-logins: active against passive on every
#                    core ($ACTIVE_ARGS; default four client threads per core), active.{json,md}
#       Logs go to $OUT (or build-gpu/results when OUT is unset): one file per step plus
#       summary.txt and bench.json (where only eight files come back, run six steps at a
#       time). Each step is stopped after $STEP_TIMEOUT seconds (default 3600), the three
#       sanitizer steps after $SANITIZER_TIMEOUT (default $STEP_TIMEOUT), so that a slow
#       sanitizer cannot take the time of the steps after it.
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
if [[ -x "$HERE/bin/cuda_gpu_tests" ]]; then
  CARRY=$HERE
  ROOT=$(cd "$HERE/.." && pwd)
else
  ROOT=$(cd "$HERE/.." && pwd)
  CARRY="$ROOT/build-gpu-carry"
fi
BUILD="$ROOT/build-gpu"
OUT=${OUT:-$ROOT/build-gpu/results}
BINARIES=(cuda_gpu_tests cuda_host_tests cuda_bench)
# Engine binaries, by their place in a build directory (tests/mpctest/mpc_cluster.py).
ENGINE_BINARIES=(mpc-engine/daemon/mpc-server mpc-engine/tools/mpcctl tests/bench/tools/mpc-bench
                 tests/bench/link_bench)

die() { echo "run_on_gpu.sh: $*" >&2; exit 1; }

build() {
  local log=$1
  cmake -G Ninja -B "$BUILD" -S "$ROOT" -DCMAKE_BUILD_TYPE=Release -DMPC_ENABLE_CUDA=ON >"$log" 2>&1 || return 1
  grep -q "CUDA evaluator: nvcc" "$log" || { echo "CUDA was not enabled (no nvcc?)" >>"$log"; return 1; }
  ninja -C "$BUILD" "${BINARIES[@]}" "${ENGINE_BINARIES[@]##*/}" >>"$log" 2>&1
}

package() {
  CARRY="$ROOT/build-gpu-carry"
  rm -rf "$CARRY"
  mkdir -p "$CARRY/bin" "$CARRY/lib"
  build "$CARRY/build.log" || die "build failed: see $CARRY/build.log"
  cp "$BUILD/tests/unit/cuda/cuda_gpu_tests" "$BUILD/tests/unit/cuda/cuda_host_tests" "$BUILD/tests/bench/gpu/cuda_bench" \
    "$CARRY/bin/"
  if [[ -n "${BASELINE_BENCH:-}" ]]; then cp "$BASELINE_BENCH" "$CARRY/bin/cuda_bench_before"; fi
  local binary
  for binary in "${ENGINE_BINARIES[@]}"; do
    mkdir -p "$CARRY/engine/$(dirname "$binary")"
    cp "$BUILD/$binary" "$CARRY/engine/$binary"
  done
  strip "$CARRY"/bin/* "${ENGINE_BINARIES[@]/#/$CARRY/engine/}"
  # Shared libraries beyond the C/C++ runtime and the driver, which the GPU machine has.
  ldd "$CARRY"/bin/* "${ENGINE_BINARIES[@]/#/$CARRY/engine/}" | awk '/=> \//{print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$CARRY/lib/"; done
  # The test support package's one library beyond the standard one (the GPU machine has no
  # package registry): tomlkit, pure Python.
  mkdir -p "$CARRY/python"
  cp -r "$(python3 -c 'import os, tomlkit; print(os.path.dirname(tomlkit.__file__))')" "$CARRY/python/"
  cp "$0" "$CARRY/run_on_gpu.sh"
  git -C "$ROOT" rev-parse --short HEAD >"$CARRY/COMMIT" 2>/dev/null || echo unknown >"$CARRY/COMMIT"
  git -C "$ROOT" diff --quiet 2>/dev/null || echo "+changes" >>"$CARRY/COMMIT"
  du -sh "$CARRY"
  echo "packaged: copy build-gpu-carry/ to the GPU machine's checkout, then run: build-gpu-carry/run_on_gpu.sh run"
}

run_step() {
  local name=$1; shift
  local log="$OUT/$name.log"
  local start=$SECONDS
  local limit=${STEP_TIMEOUT:-3600}
  case $name in racecheck|synccheck|memcheck) limit=${SANITIZER_TIMEOUT:-$limit} ;; esac
  echo "== $name: $*" >"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
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
  [[ -x "$CARRY/bin/cuda_gpu_tests" ]] || die "no binaries in $CARRY: run 'package' on the build machine"
  local gpu_tests="$CARRY/bin/cuda_gpu_tests" host_tests="$CARRY/bin/cuda_host_tests" bench="$CARRY/bin/cuda_bench"
  export LD_LIBRARY_PATH="$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local commit
  commit=$(tr '\n' ' ' <"$CARRY/COMMIT" 2>/dev/null | sed 's/ *$//')
  echo "binaries: $CARRY (commit ${commit:-unknown})" >>"$OUT/summary.txt"
  local steps=("$@")
  [[ ${#steps[@]} -eq 0 ]] && steps=(info host tests racecheck synccheck memcheck bench)
  local failed=0
  local kernel_tests='GpuKernels.*:GpuPipeline.StagedKernelSmall'
  local circuit='AllCircuits/GpuCircuits.MatchCpuEvaluatorAndReference'
  local checked_tests="GpuKernels.*:GpuEvaluator.*:GpuPipeline.StagedKernelSmall:GpuPipeline.RingOfOneEchoes:$circuit/Aes128EncryptAnd32:$circuit/Aes256DecryptDepth4:$circuit/GreaterThan64"
  for step in "${steps[@]}"; do
    case $step in
      info)
        run_step info bash -c 'nvidia-smi; compute-sanitizer --version; nvcc --version; uname -a; nproc; free -g; lscpu' || failed=1 ;;
      host)
        run_step host "$host_tests" || failed=1 ;;
      tests)
        MPC_GPU_TEST_MAX_INSTANCES=${MPC_GPU_TEST_MAX_INSTANCES-100003} run_step tests "$gpu_tests" && no_skips tests || failed=1 ;;
      racecheck)
        MPC_GPU_TEST_MAX_INSTANCES=5000 run_step racecheck compute-sanitizer --tool racecheck --error-exitcode 3 \
          "$gpu_tests" --gtest_filter="$kernel_tests" && no_skips racecheck || failed=1 ;;
      synccheck)
        MPC_GPU_TEST_MAX_INSTANCES=5000 run_step synccheck compute-sanitizer --tool synccheck --error-exitcode 3 \
          "$gpu_tests" --gtest_filter="$kernel_tests" && no_skips synccheck || failed=1 ;;
      memcheck)
        MPC_GPU_TEST_MAX_INSTANCES=5000 run_step memcheck compute-sanitizer --tool memcheck --leak-check full \
          --error-exitcode 3 "$gpu_tests" --gtest_filter="$checked_tests" && no_skips memcheck || failed=1 ;;
      bench)
        # shellcheck disable=SC2086
        run_step bench "$bench" ${BENCH_ARGS:---circuit aes128-and32 --mode all} --json "$OUT/bench.json" \
          --commit "${commit:-unknown}" || failed=1 ;;
      before)
        if [[ -x "$CARRY/bin/cuda_bench_before" ]]; then
          run_step before bash -c "'$CARRY/bin/cuda_bench_before' --circuit aes128-and32 --mode one && \
            '$CARRY/bin/cuda_bench_before' --circuit aes128-and32 --mode three --iterations 3" || failed=1
        fi ;;
      engine)
        # shellcheck disable=SC2086
        PYTHONPATH="$ROOT/tests:$CARRY/python" MPC_COMMIT="${commit:-unknown}" run_step engine python3 "$ROOT/tests/bench/data_plane_bench.py" \
          --build-dir "$CARRY/engine" --out "$OUT" ${ENGINE_ARGS:-} || failed=1 ;;
      scaling)
        PYTHONPATH="$ROOT/tests:$CARRY/python" MPC_COMMIT="${commit:-unknown}" run_step scaling python3 "$ROOT/tests/bench/core_scaling_bench.py" \
          --build-dir "$CARRY/engine" --out "$OUT" || failed=1 ;;
      active)
        # shellcheck disable=SC2086
        PYTHONPATH="$ROOT/tests:$CARRY/python" MPC_COMMIT="${commit:-unknown}" run_step active python3 "$ROOT/tests/bench/active_bench.py" --build-dir "$CARRY/engine" --out "$OUT" \
          --no-logins ${ACTIVE_ARGS:---threads $(( $(nproc) * 4 ))} || failed=1 ;;
      ncu)
        # shellcheck disable=SC2086
        run_step ncu ncu ${NCU_ARGS:---kernel-name regex:staged_pass_kernel --launch-skip 200 --launch-count 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats} \
          "$bench" --circuit aes128-and32 --mode kernels --instances 262144 --iterations 1 || failed=1 ;;
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
  *) die "usage: cuda/run_on_gpu.sh package | run [info|host|tests|racecheck|synccheck|memcheck|bench|before|ncu|engine|scaling|active ...]" ;;
esac
