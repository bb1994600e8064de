#!/usr/bin/env bash
# Training speed of two builds, side by side: uwaga-bench of OLD_BUILD and NEW_BUILD alternated
# process by process in rounds (odd rounds old first, even rounds new first) on each model and
# thread count; prints each measurement and the medians with the ratio new/old.
#   bash apps/bench/compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS]
#   MODELS="mnist-tiny shakespeare-small" THREADS=1 bash apps/bench/compare_builds.sh build-old build-bench 3
#   NEW_FLAGS="--gemm-piece-work 0" bash apps/bench/compare_builds.sh build build 2   one build, two settings
# Environment: MODELS (mnist-tiny; ViTs as uwaga-bench --model, GPT presets shakespeare-*),
#   THREADS ("1 2"), REPEATS (5), WARMUP (3), OLD_FLAGS and NEW_FLAGS (more uwaga-bench flags for
#   each side), UWAGA_SPINCOUNT (10000), PYTHON (/usr/bin/python3).
set -euo pipefail
old=${1:?usage: compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS]}
new=${2:?usage: compare_builds.sh OLD_BUILD NEW_BUILD [ROUNDS]}
rounds=${3:-4}
python=${PYTHON:-/usr/bin/python3}
uwaga_env=(env -u OMP_WAIT_POLICY -u UWAGA_NUM_THREADS GOMP_SPINCOUNT=${UWAGA_SPINCOUNT:-10000})
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for round in $(seq 1 "$rounds"); do
  order=(old new)
  ((round % 2)) || order=(new old)
  for model in ${MODELS:-mnist-tiny}; do
    mode=(--mode train --min-seconds 0.5) key=median_images_per_s
    [[ $model == shakespeare-* ]] && mode=(--mode gpt --steps 3) key=median_tokens_per_s
    for threads in ${THREADS:-1 2}; do
      for build in "${order[@]}"; do
        dir=$old flags=${OLD_FLAGS:-}
        [[ $build == new ]] && dir=$new flags=${NEW_FLAGS:-}
        # shellcheck disable=SC2086
        rate=$("${uwaga_env[@]}" OMP_NUM_THREADS="$threads" "$dir/apps/uwaga-bench" "${mode[@]}" \
                 --model "$model" --threads "$threads" --repeats "${REPEATS:-5}" \
                 --warmup "${WARMUP:-3}" $flags |
               "$python" -c "import json,sys; print(json.loads(sys.stdin.readline())['$key'])")
        echo "$round $model $threads $build $rate" | tee -a "$tmp"
      done
    done
  done
done
"$python" - "$tmp" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
for model, threads in dict.fromkeys((r[1], r[2]) for r in rows):
    med = {b: statistics.median(float(r[4]) for r in rows if (r[1], r[2], r[3]) == (model, threads, b))
           for b in ("old", "new")}
    print(f"{model} {threads} thread(s): old {med['old']:.0f}, new {med['new']:.0f} per s, new/old {med['new'] / med['old']:.3f}")
PY
