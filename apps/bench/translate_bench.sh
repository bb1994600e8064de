#!/usr/bin/env bash
# The translator's benchmark: trains the default preset of uwaga-translate, evaluates it on the
# held-out test split (subject-verb-object triples never seen in training) and translates the
# lecture notes' running example with its cross-attention drawn. Prints the figures and checks
# the targets:
#   exact match >= 95 % and BLEU >= 0.95 on the test split, training in <= 15 minutes,
#   "we are eating bread" -> "estamos comiendo pan", and "pan" attends most to "bread".
#   bash apps/bench/translate_bench.sh [extra train flags, e.g. --threads 2]
# Environment: BUILD_DIR (default build), OUT (default runs/translate-bench-DATE).
# Exit status 0 when every target is met, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BUILD_DIR:-build}/apps/uwaga-translate
if [[ ! -x $bin ]]; then
  echo "translate_bench: $bin not found; build first (bash apps/setup.sh)" >&2
  exit 2
fi
out=${OUT:-runs/translate-bench-$(date +%Y%m%d-%H%M%S)}
echo "translate_bench: training the default preset into $out ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"

start=$(date +%s.%N)
"$bin" train --preset default --out "$out" "$@"
end=$(date +%s.%N)
train_seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')

ckpt=$out/checkpoint.safetensors
"$bin" eval --checkpoint "$ckpt" --json | tee "$out/eval.txt"
json=$(tail -1 "$out/eval.txt")
field() { grep -o "\"$1\":[-0-9.e]*" <<<"$json" | cut -d: -f2; }
exact=$(field exact_match)
bleu=$(field bleu)

translation=$("$bin" translate --checkpoint "$ckpt" "we are eating bread" \
              --attention "$out/attention.svg" 2>"$out/attention.txt")
cat "$out/attention.txt"
pan_looks_at=$(awk '$1 == "pan" && $2 == "attends" { print $5 }' "$out/attention.txt")

met=0
check() {  # description, then a condition for awk
  if awk "BEGIN { exit !($2) }"; then echo "  [met]     $1"; else echo "  [NOT MET] $1"; met=1; fi
}
echo
echo "translate_bench figures (machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)):"
echo "  training wall time        ${train_seconds} s"
echo "  test exact match          $(awk -v x="$exact" 'BEGIN { printf "%.2f %%", 100 * x }')"
echo "  test BLEU-4               $bleu"
echo "  \"we are eating bread\" ->  \"$translation\""
echo "  \"pan\" attends most to    \"$pan_looks_at\"  (heatmap: $out/attention.svg)"
echo "targets:"
check "exact match >= 95 %" "$exact >= 0.95"
check "BLEU >= 0.95" "$bleu >= 0.95"
check "training <= 15 minutes" "$train_seconds <= 900"
check "running example translated" "\"$translation\" == \"estamos comiendo pan\""
check "pan attends most to bread" "\"$pan_looks_at\" == \"bread\""
exit $met
