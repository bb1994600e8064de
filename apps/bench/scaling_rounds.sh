#!/usr/bin/env bash
# How much 2 threads give sgemm and uwaga's training, measured back to back in each round so the
# machine's drift cancels within a round:
#   sgemm 1024³: one 1-thread call; one 2-thread call; two 1-thread processes at once
#   training (mnist-tiny, batch 128): 1 thread; 2 threads (replicas); two 1-thread processes at once
# Two independent processes share nothing but the machine: their combined speed over one's alone
# is what the two cores give that work with no coordination at all, the most any threading of it
# could reach. run.sh measures the same things, but minutes apart; this is the quick check.
#
#   bash apps/bench/scaling_rounds.sh                      5 rounds
#   ROUNDS=3 SHAPE=2048x2048x2048 TRAIN=0 bash apps/bench/scaling_rounds.sh
# Environment: ROUNDS (5), SHAPE (1024x1024x1024), TRAIN (1: also the training),
#   BUILD_DIR (build-bench; uwaga-bench must be built: bash apps/bench/run.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BUILD_DIR:-build-bench}/apps/uwaga-bench
python=/usr/bin/python3
[[ -x $bin ]] || { echo "scaling_rounds.sh: $bin not found; build it with" \
  "cmake --build ${BUILD_DIR:-build-bench} --target uwaga-bench" >&2; exit 1; }
export GOMP_SPINCOUNT=10000  # uwaga's wait policy, as in run.sh

sgemm=(--mode sgemm --shapes "${SHAPE:-1024x1024x1024}" --warmup 2 --repeats 5 --min-seconds 0.1)
train=(--mode train --batch 128 --warmup 5 --repeats 5 --steps 10)
# The sum over the JSON lines read of OpenBLAS's GFLOP/s (one cblas_sgemm call) or of images/s.
gflops() { $python -c 'import json, sys
print(sum(j["median_gflops"] for j in map(json.loads, filter(str.strip, sys.stdin)) if j.get("impl") == "openblas"))'; }
images() { $python -c 'import json, sys
print(sum(json.loads(l)["median_images_per_s"] for l in sys.stdin if l.strip()))'; }
# two ARGS...: two 1-thread uwaga-bench processes at once, their JSON lines together.
two() { "$bin" --threads 1 "$@" >"$tmp/a" & "$bin" --threads 1 "$@" >"$tmp/b"; wait; cat "$tmp/a" "$tmp/b"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "round  sgemm ${SHAPE:-1024x1024x1024} GFLOP/s 1 thread, 2-thread call, 2 processes" \
  "$([[ ${TRAIN:-1} == 1 ]] && echo "| training images/s 1 thread, 2 threads, 2 processes")"
for ((round = 1; round <= ${ROUNDS:-5}; ++round)); do
  s1=$("$bin" --threads 1 "${sgemm[@]}" | gflops)
  s2=$("$bin" --threads 2 "${sgemm[@]}" | gflops)
  sp=$(two "${sgemm[@]}" | gflops)
  line=$($python -c "s1, s2, sp = $s1, $s2, $sp
print(f'{s1:6.1f}  call {s2 / s1:.3f}×  processes {sp / s1:.3f}×')")
  if [[ ${TRAIN:-1} == 1 ]]; then
    t1=$("$bin" --threads 1 "${train[@]}" | images)
    t2=$("$bin" --threads 2 "${train[@]}" | images)
    tp=$(two "${train[@]}" | images)
    line+=$($python -c "t1, t2, tp = $t1, $t2, $tp
print(f' | {t1:6.0f}  2 threads {t2 / t1:.3f}×  processes {tp / t1:.3f}×')")
  fi
  echo "$round      $line"
done
