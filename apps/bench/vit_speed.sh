#!/usr/bin/env bash
# ViT training speed against PyTorch for the three benchmark models (uwaga-bench --model;
# apps/bench/vit_torch2.py, SDPA on PyTorch 2 and written-out attention on Debian's 1.13), at each
# batch size and thread count asked for, in images per second. uwaga and PyTorch alternate process
# by process in rounds within one run — odd rounds uwaga first, even rounds PyTorch first — and
# each figure is the median over all repeats of all rounds. The table also gives uwaga's images/s
# at each batch against its batch-128 figure (a bigger batch should not be slower per image).
#   bash apps/bench/vit_speed.sh                                   all three models, 2 threads
#   MODELS=mnist-tiny BATCHES="128 512 2048" THREADS="1 2 4 8 16" bash apps/bench/vit_speed.sh
#   ROUNDS=1 REPEATS=1 MODELS=mnist-tiny bash apps/bench/vit_speed.sh   a quick check
# Environment: MODELS ("mnist-tiny cifar10-small vit-d192"), BATCHES (128), THREADS (2), ROUNDS
#   (3), WARMUP (2), REPEATS (3), MIN_SECONDS (1.0: the length of one repeat), COMPILE (0; 1: PyTorch
#   with --compile as well, where it has torch.compile), BUILD_DIR (build-bench; uwaga-bench must be
#   built: bash apps/bench/run.sh builds it), OUT (default runs/vit-speed/<date>-<time>,
#   git-ignored), UWAGA_SPINCOUNT (10000), TORCH_WAIT (GOMP_SPINCOUNT=10000), PYTHON (the
#   interpreter with PyTorch; /usr/bin/python3, Debian's 1.13), BF16 (0; 1: PyTorch under bfloat16
#   autocast as a third column, vit_torch2.py --bf16, and uwaga's --precision bf16 as a fourth).
# Writes OUT/raw.jsonl (each process's JSON line with its round and load average) and
# OUT/meta.json. The table also gives uwaga's speed-up over its smallest thread count. Exit status 0
# when uwaga is at least 2x PyTorch float32 everywhere, 1 when not, 2 on errors.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BUILD_DIR:-build-bench}/apps/uwaga-bench
python=${PYTHON:-/usr/bin/python3}
rounds=${ROUNDS:-3}
models=${MODELS:-"mnist-tiny cifar10-small vit-d192"}
batches=${BATCHES:-128}
threads_list=${THREADS:-2}
timing=(--warmup "${WARMUP:-2}" --repeats "${REPEATS:-3}" --steps 0 --min-seconds "${MIN_SECONDS:-1.0}")
out=${OUT:-runs/vit-speed/$(date +%Y-%m-%d-%H%M)}
# How idle OpenMP threads wait: both as uwaga's apps run on an idle machine, a short spin then
# sleep (GOMP_SPINCOUNT=10000) — of PyTorch's three policies in run.sh, the best or as good as the
# best for its training on 1 and 2 threads (PASSIVE was up to 27 % slower). TORCH_WAIT sets
# PyTorch's as an env assignment, e.g. TORCH_WAIT=OMP_WAIT_POLICY=ACTIVE.
uwaga_env=(env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=${UWAGA_SPINCOUNT:-10000})
torch_env=(env -u OMP_WAIT_POLICY ${TORCH_WAIT:-GOMP_SPINCOUNT=10000})
unset UWAGA_NUM_THREADS

die() { echo "vit_speed.sh: $*" >&2; exit 2; }
source apps/bench/bench_lib.sh
bench_start "$out"

cat >"$out/meta.json" <<EOF
{$(machine_fields), "threads": "$threads_list",
 "batches": "$batches", "rounds": $rounds, "timing": "${timing[*]}", "compile": ${COMPILE:-0},
 "wait": {"uwaga": "GOMP_SPINCOUNT=${UWAGA_SPINCOUNT:-10000}", "torch": "${TORCH_WAIT:-GOMP_SPINCOUNT=10000}"}}
EOF
echo "vit_speed.sh: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds; results in $out" >&2

# measure IMPL MODEL BATCH THREADS ROUND: one process; its JSON line goes to raw.jsonl.
measure() {
  local impl=$1 model=$2 batch=$3 t=$4 round=$5 cmd
  case $impl in
    uwaga) cmd=("${uwaga_env[@]}" OMP_NUM_THREADS=$t "$bin" --mode train) ;;
    torch) cmd=("${torch_env[@]}" OMP_NUM_THREADS=$t "$python" apps/bench/vit_torch2.py) ;;
    torch-compile) cmd=("${torch_env[@]}" OMP_NUM_THREADS=$t "$python" apps/bench/vit_torch2.py
                        --compile --impl torch-compile) ;;
    uwaga-bf16) cmd=("${uwaga_env[@]}" OMP_NUM_THREADS=$t "$bin" --mode train --precision bf16) ;;
    torch-bf16) cmd=("${torch_env[@]}" OMP_NUM_THREADS=$t "$python" apps/bench/vit_torch2.py
                     --bf16 --impl torch-bf16) ;;
  esac
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  "${cmd[@]}" --model "$model" --batch "$batch" --threads "$t" "${timing[@]}" >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; die "failed: ${cmd[*]} --model $model --batch $batch --threads $t"; }
  sed "s/^{/{\"round\": $round, \"loadavg\": $load, \"threads_asked\": $t, /" "$tmp/out" >>"$raw"
  $python -c 'import json, sys; print(round(json.load(sys.stdin)["median_images_per_s"]))' <"$tmp/out"
}

impls=(uwaga torch)
[[ ${COMPILE:-0} == 1 ]] && impls+=(torch-compile)
[[ ${BF16:-0} == 1 ]] && impls+=(torch-bf16 uwaga-bf16)
echo "round  model          batch threads  images/s: ${impls[*]}"
for ((round = 1; round <= rounds; ++round)); do
  for model in $models; do
    for batch in $batches; do
      for t in $threads_list; do
        order=("${impls[@]}")
        ((round % 2)) || order=("${impls[@]:1}" uwaga)  # even rounds: PyTorch first
        line=""
        for impl in "${order[@]}"; do line+=" $impl $(measure "$impl" "$model" "$batch" "$t" "$round")"; done
        printf '%-6s %-14s %5s %7s %s\n' "$round" "$model" "$batch" "$t" "$line"
      done
    done
  done
done

# The medians over every repeat of every round, the ratios, and the per-image cost against batch 128.
$python - "$raw" <<'EOF'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pooled, notes = {}, {}
for j in lines:
    key = (j["model"], j["batch"], j["threads_asked"], j["impl"])
    pooled.setdefault(key, []).extend(j["images_per_s"])
    if j["impl"] == "uwaga-bf16":
        notes["uwaga-bf16"] = f'--precision bf16, bf16_gemm on {j.get("bf16_path")}'
    elif j["impl"] != "uwaga":
        notes[j["impl"]] = f'PyTorch {j.get("torch_version", "?")}, attention {j.get("attention")}, compile {j.get("compile")}'
    else:
        notes.setdefault("uwaga", f'OpenBLAS core {j.get("blas_core")}, {j.get("blas_config")}')
for impl, note in notes.items():
    print(f"{impl}: {note}")
met = True
print(f"\n{'model':14s} {'batch':>5s} {'threads':>7s} {'uwaga':>9s}  others (images/s, ratio)   uwaga vs batch 128, vs fewest threads")
fewest = min(k[2] for k in pooled)
for (model, batch, t, impl) in sorted(k for k in pooled if k[3] == "uwaga"):
    u = statistics.median(pooled[(model, batch, t, "uwaga")])
    row = f"{model:14s} {batch:5d} {t:7d} {u:9.0f} "
    for other in sorted({k[3] for k in pooled} - {"uwaga"}):
        if (model, batch, t, other) in pooled:
            o = statistics.median(pooled[(model, batch, t, other)])
            if other == "torch":
                met &= u >= 2 * o
            row += f"  {other} {o:7.0f} {u / o:5.2f}x"
    if batch != 128 and (model, 128, t, "uwaga") in pooled:
        row += f"   {u / statistics.median(pooled[(model, 128, t, 'uwaga')]):.2f}x"
    if t != fewest and (model, batch, fewest, "uwaga") in pooled:
        row += f"   {u / statistics.median(pooled[(model, batch, fewest, 'uwaga')]):.2f}x over {fewest} thread(s)"
    print(row)
sys.exit(0 if met else 1)
EOF
