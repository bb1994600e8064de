#!/usr/bin/env bash
# Measures uwaga-pose against its targets on the synthetic validation set (512 fixed stick
# figures): PCK@0.1 >= 95 % and OKS-AP >= 0.85 within 20 minutes of training on 2 threads, for
# both of ViTPose's decoders — stick-classic (classic decoder, 8 x 8 patches) and stick-simple
# (simple decoder, 4 x 4 patches) — and, for the paper's comparison on one backbone, stick-classic
# with --decoder simple. Each run is timed as a whole `train` command, then scored by `eval --json`
# (with the mean-pose and brightest-pixel baselines). About 20 minutes on an idle 2-core machine;
# run nothing else meanwhile, the times are part of the target.
#   bash apps/bench/pose_targets.sh [BUILD_DIR] [OUT_DIR]
# Environment: RUNS (default "stick-classic stick-simple classic-simple-decoder"), EPOCHS (a
#   shorter run for a quick check of the script; the targets then mean nothing), THREADS (2).
# Exit status: 0 when both presets meet the targets, 1 when one misses, 2 on errors.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-runs/pose-targets}
bin=$build/apps/uwaga-pose
threads=${THREADS:-2}
[[ -x $bin ]] || { echo "pose_targets: $bin not found; build with: bash apps/setup.sh" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"

echo "# $(date -u +%Y-%m-%dT%H:%MZ), git $(git rev-parse --short HEAD), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg), $threads threads"
printf '%-26s %8s %7s %7s %7s %9s  %s\n' run PCK@0.1 OKS-AP AP50 AP75 seconds target
status=0
for name in ${RUNS:-stick-classic stick-simple classic-simple-decoder}; do
  case $name in
    stick-classic | stick-simple) flags=(--preset "$name"); target=1 ;;
    classic-simple-decoder) flags=(--preset stick-classic --decoder simple); target=0 ;;
    *) echo "pose_targets: unknown run '$name'" >&2; exit 2 ;;
  esac
  [[ -n ${EPOCHS:-} ]] && flags+=(--epochs "$EPOCHS")
  start=$(date +%s.%N)
  "$bin" train "${flags[@]}" --threads "$threads" --out "$out/$name" --log-every 1000 >"$out/$name.train.out" 2>&1 ||
    { tail -3 "$out/$name.train.out" >&2; echo "pose_targets: training $name failed" >&2; exit 2; }
  end=$(date +%s.%N)
  "$bin" eval --checkpoint "$out/$name/checkpoint.safetensors" --json >"$out/$name.eval.json" 2>/dev/null ||
    { echo "pose_targets: eval of $name failed" >&2; exit 2; }
  /usr/bin/python3 - "$out/$name.eval.json" "$name" "$start" "$end" "$target" <<'EOF' || status=1
import json, sys
path, name, start, end, target = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "1"
e = json.load(open(path))
m, seconds = e["model"], end - start
verdict = ""
if target:
    met = m["pck"] >= 0.95 and m["ap"] >= 0.85 and seconds <= 1200
    verdict = "met" if met else "NOT MET"
print(f"{name:26s} {100 * m['pck']:7.2f}% {m['ap']:7.3f} {m['ap50']:7.3f} {m['ap75']:7.3f} {seconds:9.1f}  {verdict}")
if name == "stick-classic":
    for key in ("mean_pose", "brightest_pixel"):
        b = e[key]
        print(f"{'  baseline: ' + key.replace('_', ' '):26s} {100 * b['pck']:7.2f}% {b['ap']:7.3f} {b['ap50']:7.3f} {b['ap75']:7.3f}")
sys.exit(0 if not target or met else 1)
EOF
done
exit $status
