#!/usr/bin/env bash
# GPT-2's speed in uwaga: the BPE tokenizer encoding tinyshakespeare with GPT-2's vocabulary
# (MB/s, one thread; target ≥ 1 MB/s), and GPT-2 small (124 M parameters, random weights in
# Hugging Face's layout, apps/bench/gpt2_torch.py) decoding with the key/value cache at 1 and 2
# threads, against the memory-bandwidth bound (weight bytes read per token ÷ the machine's copy
# bandwidth) and against PyTorch decoding the same model with a cache (alternating, uwaga first).
#   bash apps/bench/gpt2_speed.sh                     (about 3 minutes on an idle machine)
# Environment: BUILD_DIR (build), TOKENS (32 decoded per run), OUT (runs/gpt2-speed/<date>-<time>,
# git-ignored). Needs data/cache/gpt2-tokenizer and data/cache/tinyshakespeare (data/fetch.sh) and
# Debian's python3-torch. Prints a summary and writes it to OUT/summary.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BUILD_DIR:-build}/apps/uwaga-gpt
python=/usr/bin/python3
tokens=${TOKENS:-32}
out=${OUT:-runs/gpt2-speed/$(date +%Y-%m-%d-%H%M)}
text=data/cache/tinyshakespeare/input.txt
tok=data/cache/gpt2-tokenizer
die() { echo "gpt2_speed.sh: $*" >&2; exit 2; }
[[ -x $bin ]] || die "$bin not found (cmake --build ${BUILD_DIR:-build} --target uwaga-gpt)"
[[ -f $text ]] || die "$text not found (bash data/fetch.sh tinyshakespeare)"
[[ -f $tok/encoder.json ]] || die "$tok not found (bash data/fetch.sh gpt2-tokenizer)"
mkdir -p "$out"
seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc -l; }

# 1. Tokenizer: the whole file, minus the time to load the vocabulary (an empty input); best of 3.
best_full=999 best_empty=999
for _ in 1 2 3; do
  t=$(seconds bash -c "\"$bin\" tokenize --tokenizer $tok <$text")
  e=$(seconds bash -c "\"$bin\" tokenize --tokenizer $tok </dev/null")
  best_full=$(echo "if ($t < $best_full) $t else $best_full" | bc -l)
  best_empty=$(echo "if ($e < $best_empty) $e else $best_empty" | bc -l)
done
bytes=$(stat -c %s "$text")
mbps=$(echo "$bytes / ($best_full - $best_empty) / 1000000" | bc -l)
printf 'tokenizer: %d bytes in %.3f s (+ %.3f s loading the vocabulary): %.2f MB/s\n' \
  "$bytes" "$(echo "$best_full - $best_empty" | bc -l)" "$best_empty" "$mbps"

# 2. Decoding GPT-2 small.
model=$out/gpt2-small
[[ -f $model/model.safetensors ]] || $python apps/bench/gpt2_torch.py write "$model"
bw=$($python apps/bench/gpt2_torch.py bandwidth | $python -c 'import json,sys; print(json.load(sys.stdin)["copy_bytes_per_s"])')
# Per token every weight is read once except the position table (one row): 4 bytes each.
weight_bytes=$($python -c 'V, C, D, L = 50257, 1024, 768, 12; print(4 * (V * D + L * (12 * D * D + 13 * D) + 2 * D + D))')
bound=$(echo "$bw / $weight_bytes" | bc -l)
printf 'copy bandwidth %.1f GB/s; %.0f MB of weights per token: at most %.1f tokens/s\n' \
  "$(echo "$bw / 1000000000" | bc -l)" "$(echo "$weight_bytes / 1000000" | bc -l)" "$bound"
echo "{\"tokenizer_mb_per_s\": $mbps, \"copy_bytes_per_s\": $bw, \"weight_bytes_per_token\": $weight_bytes, \"bound_tokens_per_s\": $bound, \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"cpu\": \"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)\", \"git\": \"$(git rev-parse --short HEAD)\"}" >"$out/summary.json"
for threads in 1 2; do
  u=$("$bin" sample --checkpoint "$model/model.safetensors" --tokenizer "$tok" --prompt "Hello, my dog is a" \
        --tokens "$tokens" --temperature 0 --stats --threads "$threads" 2>&1 >/dev/null | tail -1)
  uw=$(echo "$u" | sed -E 's/.*: ([0-9.]+) tokens\/s.*/\1/')
  p=$(OMP_WAIT_POLICY=PASSIVE $python apps/bench/gpt2_torch.py decode "$model" --threads "$threads" --tokens "$tokens")
  pt=$(echo "$p" | $python -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_s"])')
  printf '%d thread(s): uwaga %.2f tokens/s (%.0f %% of the bound), PyTorch %.2f tokens/s (uwaga / PyTorch %.2f)\n' \
    "$threads" "$uw" "$(echo "100 * $uw / $bound" | bc -l)" "$pt" "$(echo "$uw / $pt" | bc -l)"
  echo "{\"threads\": $threads, \"uwaga_tokens_per_s\": $uw, \"torch_tokens_per_s\": $pt}" >>"$out/summary.json"
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); results in $out"
