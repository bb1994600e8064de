#!/usr/bin/env bash
# The BPE tokenizer on one long "word": `uwaga-gpt tokenize` with GPT-2's vocabulary encoding
# BYTES of random lower-case letters without a space or a newline — a single piece to the
# pre-tokenizer, so every merge happens inside it (merging by rescanning the piece is O(n²) in
# its length, by a heap O(n log n)) — and, for scale, tinyshakespeare (1.1 MB of ordinary text).
# Best of 3 runs, less the time to load the vocabulary (an empty input). One line each.
#   bash apps/bench/bpe_long_word.sh [BYTES]          (BYTES: 1048576)
# Environment: BIN (build/apps/uwaga-gpt; another build's to compare). Needs
# data/cache/gpt2-tokenizer and data/cache/tinyshakespeare (data/fetch.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-build/apps/uwaga-gpt}
bytes=${1:-1048576}
tok=data/cache/gpt2-tokenizer
text=data/cache/tinyshakespeare/input.txt
die() { echo "bpe_long_word.sh: $*" >&2; exit 2; }
[[ -x $bin ]] || die "$bin not found (cmake --build build --target uwaga-gpt)"
[[ -f $tok/encoder.json ]] || die "$tok not found (bash data/fetch.sh gpt2-tokenizer)"
[[ -f $text ]] || die "$text not found (bash data/fetch.sh tinyshakespeare)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -c "
import random, sys
random.seed(1)
sys.stdout.write(''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range($bytes)))
" >"$tmp/word.txt"
seconds() { local s e; s=$(date +%s.%N); "$@" >"$tmp/ids"; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
best() {  # best of 3 of: tokenize < $1
  local b=999 t
  for _ in 1 2 3; do
    t=$(seconds bash -c "\"$bin\" tokenize --tokenizer $tok <\"$1\"")
    b=$(echo "if ($t < $b) $t else $b" | bc -l)
  done
  echo "$b"
}
empty=$(best /dev/null)
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD), $bin, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for input in "$tmp/word.txt" "$text"; do
  t=$(best "$input")
  n=$(stat -c %s "$input")
  "$bin" tokenize --tokenizer $tok <"$input" >"$tmp/ids"
  printf '%s: %d bytes, %d tokens in %.3f s (+ %.3f s loading the vocabulary): %.2f MB/s\n' \
    "$([[ $input == "$text" ]] && echo tinyshakespeare || echo "one word of letters")" "$n" \
    "$(wc -w <"$tmp/ids")" "$(echo "$t - $empty" | bc -l)" "$empty" \
    "$(echo "$n / ($t - $empty) / 1000000" | bc -l)"
done
