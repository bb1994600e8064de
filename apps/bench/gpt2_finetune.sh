#!/usr/bin/env bash
# Fine-tuning GPT-2 small (124 M parameters) with uwaga-gpt train --init, measured:
#   1. the gpt2-shakespeare demo (llm.c's train_gpt2.c: B 4, T 64, 40 steps) on tinyshakespeare:
#      wall time, peak RSS (/usr/bin/time -v), the validation loss before (step 0: uwaga-gpt eval
#      of the file on the same windows) and after, the last sample;
#   2. training steps at B 4, T 64 and T 256 (THREADS), uwaga and PyTorch alternated ROUNDS times
#      (apps/bench/gpt2_torch.py train: the same model, batches of the same shape, AdamW): the
#      median seconds a step, peak RSS, and the fraction of the FLOP bound — 6·N·tokens for the
#      matrix products of N weights (every parameter but the position table) plus 12·L·T·D per
#      token for attention's QKᵀ and AV (forward and backward), at the GFLOP/s of a 1024³ sgemm
#      on the same threads measured just before each round (uwaga-bench --mode sgemm).
#   bash apps/bench/gpt2_finetune.sh          (about 15 minutes on 2 cores)
# Environment: DEMO (1; 0 skips part 1), BF16 (0; 1: each round of part 2 also runs uwaga with
# --precision bf16 and PyTorch under bfloat16 autocast, reported against both fp32 runs), BUILD_DIR (build), THREADS (2), ROUNDS (3), STEPS (5
# timed steps a run, after one warm-up), WINDOWS ("64 256"), MODEL (a directory holding model.safetensors and config.json:
# the real gpt2 from Hugging Face; default: random GPT-2 small weights written by
# apps/bench/gpt2_torch.py), OUT (runs/gpt2-finetune/<date>-<time>, git-ignored).
# Needs data/cache/gpt2-tokenizer and data/cache/tinyshakespeare (data/fetch.sh), python3-torch.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build}
bin=$build/apps/uwaga-gpt
python=/usr/bin/python3
threads=${THREADS:-2} rounds=${ROUNDS:-3} steps=${STEPS:-5} windows=${WINDOWS:-"64 256"}
out=${OUT:-runs/gpt2-finetune/$(date +%Y-%m-%d-%H%M)}
text=data/cache/tinyshakespeare/input.txt
tok=data/cache/gpt2-tokenizer
die() { echo "gpt2_finetune.sh: $*" >&2; exit 2; }
[[ -x $bin ]] || die "$bin not found (cmake --build $build --target uwaga-gpt uwaga-bench)"
[[ -f $text ]] || die "$text not found (bash data/fetch.sh tinyshakespeare)"
[[ -f $tok/encoder.json ]] || die "$tok not found (bash data/fetch.sh gpt2-tokenizer)"
mkdir -p "$out"
model=${MODEL:-$out/gpt2-small}
[[ -f $model/model.safetensors ]] || $python apps/bench/gpt2_torch.py write "$model"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; git $(git rev-parse --short HEAD); $threads threads"

# Peak RSS (GiB) of the command's log FILE written by /usr/bin/time -v.
peak_gib() { awk '/Maximum resident set size/ { printf "%.2f", $NF / 1048576 }' "$1"; }
# Median seconds a step of a run's log.jsonl, the first step (warm-up) left out: tokens a step /
# items_per_s (the loss counts predicted tokens).
median_step() {
  $python -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
s = sorted(float(sys.argv[2]) / x["items_per_s"] for x in r if x["type"] == "step" and x["step"] > 1)
print(s[len(s) // 2])' "$1" "$2"
}

# 1. The demo.
if [[ ${DEMO:-1} != 0 ]]; then
before=$("$bin" eval --checkpoint "$model/model.safetensors" --tokenizer "$tok" --window 64 \
           --eval-windows 20 --threads "$threads" --json | tail -1)
rm -rf "$out/demo"
/usr/bin/time -v "$bin" train --preset gpt2-shakespeare --init "$model/model.safetensors" \
  --tokenizer "$tok" --threads "$threads" --out "$out/demo" >"$out/demo.out" 2>"$out/demo.time"
after=$(grep '"type":"epoch"' "$out/demo/log.jsonl" | tail -1)
seconds=$(awk '/Elapsed \(wall clock\)/ { n = split($NF, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$out/demo.time")
printf 'demo: 40 steps in %.1f s wall (peak RSS %s GiB); validation loss %s -> %s\n' "$seconds" \
  "$(peak_gib "$out/demo.time")" \
  "$($python -c 'import json,sys; print(round(json.loads(sys.argv[1])["loss"], 4))' "$before")" \
  "$($python -c 'import json,sys; print(round(json.loads(sys.argv[1])["valid_loss"], 4))' "$after")"
sed -n '/sample after step 40/,/^---$/p' "$out/demo.out" | head -20
fi

# 2. Steps, alternated with PyTorch. This host's speed drifts (its sgemm 1024³ read 200 to 298
# GFLOP/s within one hour), so each round measures the sgemm just before its uwaga run and the
# fraction of the bound is taken round by round, its median reported.
sgemm_now() {
  "$build/apps/uwaga-bench" --mode sgemm --shapes 1024x1024x1024 --threads "$threads" | $python -c '
import json, sys
best = 0.0  # the better of uwaga gemm and one cblas_sgemm call
for line in sys.stdin:
    try: best = max(best, json.loads(line)["median_gflops"])
    except (ValueError, KeyError): pass
print(best)'
}
for T in $windows; do
  flops=$($python -c 'import sys
V, C, D, L, B, T = 50257, 1024, 768, 12, 4, int(sys.argv[1])
N = V * D + L * (12 * D * D + 13 * D) + 2 * D  # every parameter but the position table
print(B * T * (6 * N + 12 * L * T * D))' "$T")
  u=() p=() g=() ub=() pb=()
  for r in $(seq 1 "$rounds"); do
    g+=("$(sgemm_now)")
    rm -rf "$out/t$T"
    /usr/bin/time -v "$bin" train --preset gpt2-shakespeare --init "$model/model.safetensors" \
      --tokenizer "$tok" --window "$T" --threads "$threads" --log-every 1 --eval-windows 1 \
      --max-steps $((steps + 1)) --out "$out/t$T" >/dev/null 2>"$out/t$T.time"
    u+=("$(median_step "$out/t$T/log.jsonl" $((4 * T)))")
    rss_u=$(peak_gib "$out/t$T.time")
    /usr/bin/time -v $python apps/bench/gpt2_torch.py train "$model" --threads "$threads" \
      --batch 4 --window "$T" --steps "$steps" >"$out/torch$T.json" 2>"$out/torch$T.time"
    p+=("$($python -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds_per_step"])' "$out/torch$T.json")")
    rss_p=$(peak_gib "$out/torch$T.time")
    if [[ ${BF16:-0} == 1 ]]; then
      rm -rf "$out/t$T-bf16"
      "$bin" train --preset gpt2-shakespeare --init "$model/model.safetensors" --precision bf16 \
        --tokenizer "$tok" --window "$T" --threads "$threads" --log-every 1 --eval-windows 1 \
        --max-steps $((steps + 1)) --out "$out/t$T-bf16" >"$out/t$T-bf16.out" 2>&1
      ub+=("$(median_step "$out/t$T-bf16/log.jsonl" $((4 * T)))")
      $python apps/bench/gpt2_torch.py train "$model" --threads "$threads" --bf16 \
        --batch 4 --window "$T" --steps "$steps" >"$out/torch$T-bf16.json"
      pb+=("$($python -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds_per_step"])' "$out/torch$T-bf16.json")")
    fi
  done
  $python - "$T" "$flops" "$rss_u" "$rss_p" "${u[*]}" "${p[*]}" "${g[*]}" <<'PY' | tee -a "$out/summary.txt"
import statistics, sys
T, flops, rss_u, rss_p = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
us, ps, gs = ([float(x) for x in a.split()] for a in sys.argv[5:8])
u, p = statistics.median(us), statistics.median(ps)
fractions = [flops / (g * 1e9) / x for x, g in zip(us, gs)]  # each round against its own sgemm
print(f"B 4, T {T}: uwaga {u:.3f} s a step ({100 * statistics.median(fractions):.0f} % of the "
      f"FLOP bound, the median of rounds {' / '.join(f'{100 * f:.0f}' for f in fractions)} %; "
      f"peak RSS {rss_u} GiB), PyTorch {p:.3f} s (peak RSS {rss_p} GiB); uwaga / PyTorch "
      f"{p / u:.2f}x (rounds: uwaga {' '.join(f'{x:.3f}' for x in us)} s, PyTorch "
      f"{' '.join(f'{x:.3f}' for x in ps)} s, sgemm {' '.join(f'{x:.1f}' for x in gs)} GFLOP/s)")
PY
  if [[ ${BF16:-0} == 1 ]]; then
    $python - "$T" "${u[*]}" "${ub[*]}" "${pb[*]}" "$(grep -m1 -o 'precision.*' "$out/t$T-bf16.out")" <<'PY' | tee -a "$out/summary.txt"
import statistics, sys
T = int(sys.argv[1])
us, ubs, pbs = ([float(x) for x in a.split()] for a in sys.argv[2:5])
u, ub, pb = statistics.median(us), statistics.median(ubs), statistics.median(pbs)
print(f"B 4, T {T}, bf16: uwaga --precision bf16 {ub:.3f} s a step, {u / ub:.2f}x its fp32; "
      f"PyTorch under bf16 autocast {pb:.3f} s, uwaga / PyTorch {pb / ub:.2f}x (rounds: uwaga "
      f"{' '.join(f'{x:.3f}' for x in ubs)} s, PyTorch {' '.join(f'{x:.3f}' for x in pbs)} s; "
      f"{sys.argv[5]})")
PY
  fi
done
echo "results in $out"
