#!/usr/bin/env bash
# Trains uwaga-vit presets and reports what they reach: test accuracy after each epoch, seconds
# per epoch, total training wall time. This is the benchmark behind the README's preset table
# (accuracy targets are measured here, never in CI).
#   bash apps/bench/vit_presets.sh [PRESET ...]     (default: mnist-tiny)
# Environment: THREADS (default 2), OUT (default runs/bench-<date>), EXTRA (more train flags),
# BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/../.."
presets=("$@")
((${#presets[@]})) || presets=(mnist-tiny)
threads=${THREADS:-2}
out=${OUT:-runs/bench-$(date +%Y%m%d-%H%M%S)}
build_dir=${BUILD_DIR:-build}
BUILD_DIR=$build_dir bash apps/setup.sh >/dev/null
mkdir -p "$out"

dataset_of() {
  case $1 in
    mnist-*) echo mnist ;;
    fashion-mnist*) echo fashion-mnist ;;
    cifar10-*) echo cifar10 ;;
    *) echo "vit_presets: unknown preset $1" >&2; exit 2 ;;
  esac
}

for preset in "${presets[@]}"; do
  dataset=$(dataset_of "$preset")
  data=data/cache/$dataset
  if [[ ! -d $data ]]; then
    if [[ $dataset == cifar10 ]]; then
      bash data/fetch.sh cifar10 "$data" --from "${CIFAR10_FROM:-../shared/datasets/cifar10}"
    else
      bash data/fetch.sh "$dataset" "$data"
    fi
  fi
  echo "== $preset ($dataset), $threads threads, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
  echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$build_dir/apps/uwaga-vit" train --preset "$preset" --data-dir "$data" --out "$out/$preset" \
    --threads "$threads" --log-every 1000 ${EXTRA:-} >"$out/$preset.log" 2>&1
  end=$(date +%s.%N)
  echo "   epoch  test-accuracy  seconds"
  grep '"type":"epoch"' "$out/$preset/log.jsonl" |
    sed -E 's/.*"epoch":([0-9]+).*"seconds":([0-9.]+).*"test_accuracy":([0-9.]+).*/\1 \3 \2/' |
    awk '{ printf "   %5d  %12.2f%%  %7.1f\n", $1, 100 * $2, $3; total += $3 }
         END { printf "   training time (sum of epochs, evaluation included): %.1f s\n", total }'
  grep "^test accuracy" "$out/$preset.log" | sed 's/^/   /'
  awk -v s="$start" -v e="$end" 'BEGIN { printf "   wall time of the whole command: %.1f s\n", e - s }'
  echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "runs and logs: $out"
