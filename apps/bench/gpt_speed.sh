#!/usr/bin/env bash
# uwaga-gpt's training speed against PyTorch's: the same model, batch and optimiser on both sides
# (uwaga-bench --mode gpt; apps/bench/gpt_torch.py, which reads the preset's fields from
# uwaga-bench --mode gpt-config), in tokens (predicted characters) per second. The two alternate
# process by process in rounds within one run — odd rounds uwaga first, even rounds PyTorch first
# — so the machine's drift hits both alike; each figure is the median over all repeats of all
# rounds. Target: uwaga at least 2x PyTorch on every preset.
#   bash apps/bench/gpt_speed.sh                                  the measurement (about 7 minutes)
#   ROUNDS=2 WARMUP=1 REPEATS=1 STEPS=2 bash apps/bench/gpt_speed.sh    a quick check
# Environment: ROUNDS (4), PRESETS ("shakespeare-tiny shakespeare-small"), THREADS (2; a list such
#   as "1 2 16" measures each: uwaga --threads, torch.set_num_threads), WARMUP (2), REPEATS (3),
#   STEPS (5, per repeat), PYTHON (the interpreter with PyTorch; /usr/bin/python3, Debian's 1.13),
#   BF16 (0; 1: PyTorch under bfloat16 autocast as well, gpt_torch.py --bf16),
#   COMPILE (0; 1: PyTorch with --compile as well, where it has torch.compile), BUILD_DIR
#   (build-bench; uwaga-bench must be built: bash apps/bench/run.sh builds it), OUT (default
#   runs/gpt-speed/<date>-<time>, git-ignored), UWAGA_SPINCOUNT (10000).
# Writes OUT/raw.jsonl (each process's JSON line with its round and the load average), OUT/meta.json
# and OUT/<preset>.json (the configuration PyTorch trained). Exit status 0 when the target is met,
# 1 when it is missed, 2 on errors.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BUILD_DIR:-build-bench}/apps/uwaga-bench
python=${PYTHON:-/usr/bin/python3}
torch_script=apps/bench/gpt_torch.py
rounds=${ROUNDS:-4}
threads_list=${THREADS:-2}
presets=${PRESETS:-"shakespeare-tiny shakespeare-small"}
timing=(--warmup "${WARMUP:-2}" --repeats "${REPEATS:-3}" --steps "${STEPS:-5}")
out=${OUT:-runs/gpt-speed/$(date +%Y-%m-%d-%H%M)}
# How idle OpenMP threads wait, as in run.sh: uwaga as its apps run on an idle machine (a short
# spin, then sleep), PyTorch with OMP_WAIT_POLICY=PASSIVE (its best setting on a loaded machine).
uwaga_env=(env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=${UWAGA_SPINCOUNT:-10000})
torch_env=(env OMP_WAIT_POLICY=PASSIVE)
unset UWAGA_NUM_THREADS

die() { echo "gpt_speed.sh: $*" >&2; exit 2; }
source apps/bench/bench_lib.sh
bench_start "$out"

cat >"$out/meta.json" <<EOF
{$(machine_fields), "threads": "$threads_list",
 "rounds": $rounds, "timing": "${timing[*]}", "compile": ${COMPILE:-0}}
EOF
echo "gpt_speed.sh: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), threads $threads_list, $rounds rounds; results in $out" >&2

for preset in $presets; do
  "$bin" --mode gpt-config --model "$preset" >"$out/$preset.json" || die "uwaga-bench --mode gpt-config --model $preset failed"
done

# measure IMPL PRESET THREADS ROUND: one process; its JSON line goes to raw.jsonl with the round,
# the threads and the load average when it started.
measure() {
  local impl=$1 preset=$2 threads=$3 round=$4 cmd
  case $impl in
    uwaga) cmd=("${uwaga_env[@]}" OMP_NUM_THREADS=$threads "$bin" --mode gpt --model "$preset") ;;
    torch) cmd=("${torch_env[@]}" OMP_NUM_THREADS=$threads "$python" "$torch_script" --config "$out/$preset.json") ;;
    torch-compile) cmd=("${torch_env[@]}" OMP_NUM_THREADS=$threads "$python" "$torch_script"
                        --config "$out/$preset.json" --compile --impl torch-compile) ;;
    torch-bf16) cmd=("${torch_env[@]}" OMP_NUM_THREADS=$threads "$python" "$torch_script"
                     --config "$out/$preset.json" --bf16 --impl torch-bf16) ;;
  esac
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  "${cmd[@]}" --threads "$threads" "${timing[@]}" >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; die "failed: ${cmd[*]} --threads $threads ${timing[*]}"; }
  sed "s/^{/{\"round\": $round, \"loadavg\": $load, \"threads_asked\": $threads, /" "$tmp/out" >>"$raw"
  $python -c 'import json, sys; print(round(json.load(sys.stdin)["median_tokens_per_s"]))' <"$tmp/out"
}

impls=(uwaga torch)
[[ ${COMPILE:-0} == 1 ]] && impls+=(torch-compile)
[[ ${BF16:-0} == 1 ]] && impls+=(torch-bf16)
echo "round  preset              threads  tokens/s: ${impls[*]}"
for ((round = 1; round <= rounds; ++round)); do
  for preset in $presets; do
    for threads in $threads_list; do
      order=("${impls[@]}")
      ((round % 2)) || order=("${impls[@]:1}" uwaga)  # even rounds: PyTorch first
      line=""
      for impl in "${order[@]}"; do line+=" $impl $(measure "$impl" "$preset" "$threads" "$round")"; done
      printf '%-6s %-19s %7s%s\n' "$round" "$preset" "$threads" "$line"
    done
  done
done

# The medians over every repeat of every round, the ratios and the target.
$python - "$raw" <<'EOF'
import json, statistics, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pooled, params, notes = {}, {}, {}
for j in lines:
    pooled.setdefault((j["model"], j["threads_asked"], j["impl"]), []).extend(j["tokens_per_s"])
    params.setdefault(j["model"], {})[j["impl"]] = j["parameters"]
    if j["impl"] != "uwaga":
        notes[j["impl"]] = f'PyTorch {j["torch_version"]}, attention {j["attention"]}, compile {j["compile"]}, bf16 {j.get("bf16", False)}'
met = True
print()
for impl, note in notes.items():
    print(f"{impl}: {note}")
for model in dict.fromkeys(j["model"] for j in lines):
    if len(set(params[model].values())) != 1:
        sys.exit(f"gpt_speed.sh: {model}: the two sides' models differ: parameters {params[model]}")
    for threads in sorted({t for (m, t, i) in pooled if m == model}):
        u = statistics.median(pooled[(model, threads, "uwaga")])
        row = f"{model:19s} {params[model]['uwaga']:>9,} parameters {threads:3d} threads  uwaga {u:8.0f} tokens/s"
        for impl in sorted(i for (m, t, i) in pooled if m == model and t == threads and i != "uwaga"):
            o = statistics.median(pooled[(model, threads, impl)])
            row += f"  {impl} {o:8.0f}  ratio {u / o:.2f}x"
            if impl == "torch":
                ok = u >= 2 * o
                met &= ok
                row += f" ({'met' if ok else 'NOT MET'}: >= 2x)"
        print(row)
sys.exit(0 if met else 1)
EOF
