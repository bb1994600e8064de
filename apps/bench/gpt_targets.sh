#!/usr/bin/env bash
# Measures uwaga-gpt against its targets and prints one line per figure:
#   1. shakespeare-tiny on 2 threads: the validation loss reached and the wall time
#      (target: <= 1.88 nats/char within 90 s), and training characters/s;
#   2. sampling 256 characters with and without the key/value cache (target: >= 5x).
# Runs go to an ignored directory (runs/ by default).
#   bash apps/bench/gpt_targets.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-runs/gpt-targets}
bin=$build/apps/uwaga-gpt
text=data/cache/tinyshakespeare/input.txt
[[ -f $text ]] || { echo "gpt_targets: $text is missing; run: bash data/fetch.sh tinyshakespeare" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
start=$(date +%s.%N)
"$bin" train --preset shakespeare-tiny --threads 2 --out "$out/tiny" --log-every 100 >"$out/train.out"
end=$(date +%s.%N)
loss=$(grep '"type":"epoch"' "$out/tiny/log.jsonl" | tail -1 | grep -o '"valid_loss":[0-9.e-]*' | cut -d: -f2)
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "train  shakespeare-tiny, 2 threads: validation loss $loss nats/char in $wall s (whole command)"
# "validation: loss L nats/char (B bits/char); N steps, S s" -> training characters per second
grep '^validation' "$out/train.out" | awk -v chars=$((32 * 64)) \
  '{ steps = $(NF - 3); secs = $(NF - 1); printf "train  %s\ntrain  %.0f training characters/s (%d steps of %d)\n", $0, steps * chars / secs, steps, chars }'
"$bin" eval --checkpoint "$out/tiny/checkpoint.safetensors" | sed 's/^/eval   /'

for mode in "" --no-cache; do
  "$bin" sample --checkpoint "$out/tiny/checkpoint.safetensors" --prompt "ROMEO:" --tokens 256 \
      --temperature 0.8 --top-k 40 --seed 1 --threads 1 --stats $mode 2>&1 >/dev/null | sed 's/^/sample /'
done
