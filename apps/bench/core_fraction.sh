#!/usr/bin/env bash
# How much of one core's matrix-multiply speed uwaga turns into training: each model's training
# work (forward + backward ≈ 3 forward passes of multiply-adds, uwaga-bench's effective_gflops)
# against OpenBLAS sgemm 1024³ on the same machine, both at one thread, alternated in rounds (odd
# rounds sgemm first) so the machine's drift hits both alike; medians over all repeats of all
# rounds. Targets: mnist-tiny ≥ 65 %, vit-d192 ≥ 80 %, cifar10-small and shakespeare-small ≥ 70 %.
#   bash apps/bench/core_fraction.sh
#   ROUNDS=1 MODELS=mnist-tiny bash apps/bench/core_fraction.sh     a quick check
# Environment: MODELS ("mnist-tiny cifar10-small vit-d192 shakespeare-small"), ROUNDS (3), THREADS
#   (1), BUILD_DIR (build-bench; needs uwaga-bench), OUT (runs/core-fraction/<date>-<time>),
#   UWAGA_SPINCOUNT (10000), PYTHON (/usr/bin/python3; any Python 3, no PyTorch needed).
# Exit status 0 when every target is met, 1 when one is missed, 2 on errors.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BUILD_DIR:-build-bench}/apps/uwaga-bench
python=${PYTHON:-/usr/bin/python3}
rounds=${ROUNDS:-3}
threads=${THREADS:-1}
models=${MODELS:-"mnist-tiny cifar10-small vit-d192 shakespeare-small"}
out=${OUT:-runs/core-fraction/$(date +%Y-%m-%d-%H%M)}
uwaga_env=(env -u OMP_WAIT_POLICY -u UWAGA_NUM_THREADS GOMP_SPINCOUNT=${UWAGA_SPINCOUNT:-10000} OMP_NUM_THREADS=$threads)
die() { echo "core_fraction.sh: $*" >&2; exit 2; }
[[ -x $bin ]] || die "$bin not found; build it with cmake --build ${BUILD_DIR:-build-bench} --target uwaga-bench"
mkdir -p "$out"
raw=$out/raw.jsonl
: >"$raw"
echo "core_fraction.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $threads thread(s), $rounds rounds; results in $out" >&2

measure() {  # WHAT ROUND: one process, its JSON line (with the round) into raw.jsonl
  local what=$1 round=$2 args
  case $what in
    sgemm) args=(--mode sgemm --shapes 1024x1024x1024 --warmup 2 --repeats 5) ;;
    shakespeare-*) args=(--mode gpt --model "$what" --warmup 2 --repeats 3 --steps 3) ;;
    *) args=(--mode train --model "$what" --warmup 2 --repeats 3 --min-seconds 1.0) ;;
  esac
  "${uwaga_env[@]}" "$bin" --threads "$threads" "${args[@]}" 2>/dev/null |
    sed "s/^{/{\"round\": $round, \"what\": \"$what\", /" >>"$raw" || die "failed: $bin ${args[*]}"
}

for ((round = 1; round <= rounds; ++round)); do
  order=(sgemm $models)
  ((round % 2)) || order=($models sgemm)
  for what in "${order[@]}"; do measure "$what" "$round"; done
  echo "core_fraction.sh: round $round of $rounds done" >&2
done

"$python" - "$raw" <<'PY'
import json, statistics, sys
targets = {"mnist-tiny": 0.65, "vit-d192": 0.80, "cifar10-small": 0.70, "shakespeare-small": 0.70}
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sgemm = statistics.median(g for j in lines if j["what"] == "sgemm" and j.get("impl") == "uwaga"
                          for g in j["gflops"])
print(f"sgemm 1024³: {sgemm:.1f} GFLOP/s (median, uwaga's gemm path)")
print(f"{'model':18s} {'GFLOP/s':>8s} {'of sgemm':>9s}  target")
met = True
for what in dict.fromkeys(j["what"] for j in lines if j["what"] != "sgemm"):
    runs = [j for j in lines if j["what"] == what]
    if "tokens_per_s" in runs[0]:
        rate = statistics.median(t for j in runs for t in j["tokens_per_s"]) * runs[0]["flops_per_token"]
    else:
        rate = statistics.median(t for j in runs for t in j["images_per_s"]) * runs[0]["flops_per_image"]
    frac = rate / 1e9 / sgemm
    target = targets.get(what)
    ok = target is None or frac >= target
    met &= ok
    print(f"{what:18s} {rate / 1e9:8.1f} {100 * frac:8.1f}%  "
          + (f">= {100 * target:.0f}%: {'met' if ok else 'NOT MET'}" if target else ""))
sys.exit(0 if met else 1)
PY
