#!/usr/bin/env bash
# Characters against byte-pair tokens on tinyshakespeare: the shakespeare-tiny preset trained on
# characters and on BPE vocabularies of 512, 1,024 and 4,096 tokens (--tokenizer bpe:256, bpe:768,
# bpe:3840, learned from the training part), on 2 threads, each for its number of steps (the
# preset's 1000 by default; a larger vocabulary costs more per step, so STEPS can shorten those
# runs to the character model's time); then `eval` of each: loss per token and bits per
# character, the scale on which they compare. One line per run, with its whole wall time.
#   bash apps/bench/gpt_bpe_targets.sh [BUILD_DIR] [OUT_DIR]
# Environment: THREADS (2), TOKENIZERS ("char bpe:256 bpe:768 bpe:3840"), STEPS (one number per
# tokenizer, "1000 1000 1000 1000").
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-runs/gpt-bpe}
bin=$build/apps/uwaga-gpt
text=data/cache/tinyshakespeare/input.txt
read -ra steps_list <<<"${STEPS:-1000 1000 1000 1000}"
threads=${THREADS:-2}
[[ -f $text ]] || { echo "gpt_bpe_targets: $text is missing; run: bash data/fetch.sh tinyshakespeare" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
for tok in ${TOKENIZERS:-char bpe:256 bpe:768 bpe:3840}; do
  name=${tok/:/-}
  n=${steps_list[$i]:-1000}
  i=$((i + 1))
  start=$(date +%s.%N)
  "$bin" train --preset shakespeare-tiny --tokenizer "$tok" --threads "$threads" \
    --steps-per-epoch "$n" --out "$out/$name" --log-every 100 >"$out/$name.out"
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  json=$("$bin" eval --checkpoint "$out/$name/checkpoint.safetensors" --threads "$threads" --json | tail -1)
  echo "$tok: $n steps, whole command $wall s; $(grep '^validation' "$out/$name.out"); eval $json"
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
