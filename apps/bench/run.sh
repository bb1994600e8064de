#!/usr/bin/env bash
# uwaga against PyTorch on this machine, in one run: training and evaluation throughput of the
# mnist-tiny ViT, peak RSS, OpenBLAS sgemm (the ceiling), micro-benchmarks (attention layer,
# LayerNorm, GELU, softmax-cross-entropy), attention cost for n = 16 … 1024, and a profile of
# uwaga's training step. uwaga and PyTorch run alternately, process by process, with the same
# thread count (OpenMP wait policies: see below); every figure is a median over all repeats of all
# rounds. See apps/bench/README.md for what each number means.
#   bash apps/bench/run.sh                      the full run (about 10 minutes)
#   ROUNDS=1 SCALING=0 PROFILE=0 bash apps/bench/run.sh   a quick check (about 3 minutes)
# Environment: BUILD_DIR (default build-bench), ROUNDS (4), THREADS ("1 2"), SCALING (1),
#   PROFILE (1), OUT (default runs/bench/<date>-<time>, git-ignored), SKIP_BUILD (0).
# Writes OUT/{raw.jsonl, results.json, summary.md, profile.txt, mha_scaling.csv, mha_scaling.png}.
# Exit status: 0 when every target is met, 1 when one is missed, 2 on errors.
set -euo pipefail
cd "$(dirname "$0")/../.."

build_dir=${BUILD_DIR:-build-bench}
rounds=${ROUNDS:-4}
threads_list=${THREADS:-"1 2"}
out=${OUT:-runs/bench/$(date +%Y-%m-%d-%H%M)}
python=/usr/bin/python3
torch_script=apps/bench/vit_torch.py
bin=$build_dir/apps/uwaga-bench
# How idle OpenMP threads wait (apps/common/thread_policy.h). uwaga runs as its apps do on an idle
# machine: a short spin, then sleep (GOMP_SPINCOUNT=10000). PyTorch gets OMP_WAIT_POLICY=PASSIVE
# (its best setting on a loaded machine) for every figure, and its training is also measured with
# ACTIVE and with uwaga's short spin: the best of the three is the one compared.
uwaga_env=(env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=${UWAGA_SPINCOUNT:-10000})
unset UWAGA_NUM_THREADS OMP_WAIT_POLICY GOMP_SPINCOUNT

say() { echo "run.sh: $*" >&2; }
die() { say "$*"; exit 2; }

# ---- tools -------------------------------------------------------------------------------------
apt_install() {
  local sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  say "installing $* with apt-get"
  $sudo apt-get install -y -qq "$@" >/dev/null 2>&1 ||
    { $sudo apt-get update -qq >/dev/null 2>&1 && $sudo apt-get install -y -qq "$@" >/dev/null 2>&1; }
}
[[ -x /usr/bin/time ]] || apt_install time || die "/usr/bin/time is missing and could not be installed (package 'time')"
perf --version >/dev/null 2>&1 || apt_install linux-perf || true
have_perf=0
perf --version >/dev/null 2>&1 && have_perf=1
$python -c "import torch" 2>/dev/null || die "$python cannot import torch; install Debian's python3-torch"
$python -c "import matplotlib" 2>/dev/null || apt_install python3-matplotlib || say "no matplotlib: no plot"

# ---- build -------------------------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  if [[ ! -f $build_dir/CMakeCache.txt ]]; then
    nice -n 10 cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null ||
      die "cmake could not configure $build_dir"
  fi
  say "building uwaga-bench in $build_dir (nice, 1 job)"
  nice -n 10 cmake --build "$build_dir" --target uwaga-bench -j"${BUILD_JOBS:-1}" >/dev/null ||
    die "the build failed (cmake --build $build_dir --target uwaga-bench); SKIP_BUILD=1 uses the binary as it is"
fi
[[ -x $bin ]] || die "$bin not found"

mkdir -p "$out"
raw=$out/raw.jsonl
: >"$raw"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- the machine -------------------------------------------------------------------------------
cat >"$out/meta.json" <<EOF
{"date": "$(date -Iseconds)", "cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)",
 "cores": $(nproc), "kernel": "$(uname -r)", "loadavg_start": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "git": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo -dirty)",
 "openblas": "$(dpkg-query -W -f '${Package} ${Version}' libopenblas0-openmp 2>/dev/null || echo unknown)",
 "torch": "$($python -c 'import torch; print(torch.__version__)')",
 "wait_policy": {"uwaga": "GOMP_SPINCOUNT=${UWAGA_SPINCOUNT:-10000}", "torch": "OMP_WAIT_POLICY=PASSIVE (training also ACTIVE and GOMP_SPINCOUNT=10000)"},
 "rounds": $rounds, "threads": "$threads_list"}
EOF
say "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), results in $out"

# measure IMPL THREADS ROUND [ARGS...]: one process of uwaga-bench or vit_torch.py; its JSON lines
# go to raw.jsonl with the round, the load average and the process's peak RSS (/usr/bin/time).
measure() {
  local impl=$1 t=$2 round=$3
  shift 3
  local cmd
  if [[ $impl == uwaga ]]; then
    cmd=("${uwaga_env[@]}" "$bin")
  else
    cmd=(env "${TORCH_ENV:-OMP_WAIT_POLICY=PASSIVE}" "$python" "${TORCH_SCRIPT:-$torch_script}")
  fi
  local load t0
  load=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  if ! OMP_NUM_THREADS=$t /usr/bin/time -f %M -o "$tmp/rss" "${cmd[@]}" --threads "$t" "$@" \
      >"$tmp/out" 2>"$tmp/err"; then
    cat "$tmp/err" >&2
    die "failed: ${cmd[*]} --threads $t $*"
  fi
  local rss wall
  rss=$(tail -1 "$tmp/rss")
  wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  sed "s/^{/{\"round\": $round, \"time_max_rss_kb\": $rss, \"loadavg\": $load, \"process_seconds\": $wall, /" \
    "$tmp/out" >>"$raw"
}

# both THREADS ROUND [ARGS...]: uwaga then PyTorch in odd rounds, PyTorch first in even ones.
both() {
  local t=$1 round=$2
  shift 2
  if ((round % 2)); then
    measure uwaga "$t" "$round" "$@"
    measure torch "$t" "$round" "$@"
  else
    measure torch "$t" "$round" "$@"
    measure uwaga "$t" "$round" "$@"
  fi
}

# processes T ROUND WHAT: T copies of a one-thread workload at once, sharing nothing but the
# machine; their combined speed over one copy's alone is what T cores give it with no coordination
# at all. WHAT is "train" (the whole one-thread training workload, batch 128: the most any
# threading of it could reach here) or "sgemm" (OpenBLAS at 1024³: how that compares with one
# T-thread sgemm call, whose threads share work).
processes() {
  local t=$1 round=$2 what=$3 i
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  local args=("${train_args[@]}")
  [[ $what == sgemm ]] && args=(--mode sgemm --shapes "$ceiling_shape" --warmup 2 --repeats 5 --min-seconds 0.1)
  for ((i = 0; i < t; ++i)); do
    OMP_NUM_THREADS=1 "${uwaga_env[@]}" "$bin" --threads 1 "${args[@]}" \
      >"$tmp/process$i" 2>"$tmp/process$i.err" &
  done
  wait || die "failed: $t concurrent uwaga-bench --threads 1 ${args[*]} processes"
  $python -c '
import json, sys
what, round_, load, files = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
runs = [[json.loads(line) for line in open(f) if line.strip()] for f in files]
out = {"round": round_, "loadavg": load, "impl": "uwaga", "threads": len(runs), "processes": len(runs)}
if what == "train":
    out.update(mode="train_processes", batch_each=runs[0][0]["batch"],
               median_images_per_s=sum(r[0]["median_images_per_s"] for r in runs))
else:  # each process prints uwaga'"'"'s gemm and one cblas_sgemm call: its better one, as the ceiling
    out.update(mode="sgemm_processes", shape=runs[0][0]["shape"],
               median_gflops=sum(max(l["median_gflops"] for l in r) for r in runs))
print(json.dumps(out))' "$what" "$round" "$load" "$tmp"/process? >>"$raw"
}

ceiling_shape=1024x1024x1024  # the sgemm ceiling's shape (summarize.py: CEILING_SHAPE)
# The same fixed workload in both for training, so the peak RSS compares like with like:
# batch 128, 5 warm-up steps, then 5 repeats of 10 steps.
train_args=(--mode train --batch 128 --warmup 5 --repeats 5 --steps 10)
# The translator (uwaga-translate's default preset): both train on the same 20 batches of its
# first epoch, which uwaga-bench writes once (apps/bench/translator_throughput.h).
translate_batches=$tmp/translate_batches.json
"$bin" --mode translate-batches --count 20 >"$translate_batches" ||
  die "failed: $bin --mode translate-batches"
translator() {
  TORCH_SCRIPT=apps/bench/translate_torch.py both "$@" --batches "$translate_batches"
}
start=$(date +%s)
for ((round = 1; round <= rounds; ++round)); do
  for t in $threads_list; do
    say "round $round/$rounds, $t thread(s): sgemm, train, eval, micro, translator (load $(cut -d' ' -f1 /proc/loadavg))"
    both "$t" "$round" --mode sgemm --warmup 2 --repeats 5 --min-seconds 0.1
    both "$t" "$round" "${train_args[@]}"
    if ((t > 1)); then
      processes "$t" "$round" train
      processes "$t" "$round" sgemm
    fi
    # PyTorch under the spinning wait policies too (fewer steps: on a loaded machine spinning
    # collapses to a tenth of the speed at 2 threads).
    TORCH_ENV=OMP_WAIT_POLICY=ACTIVE measure torch "$t" "$round" --mode train --batch 128 --warmup 2 --repeats 5 --steps 2
    TORCH_ENV=GOMP_SPINCOUNT=10000 measure torch "$t" "$round" --mode train --batch 128 --warmup 2 --repeats 5 --steps 2
    both "$t" "$round" --mode eval --batch 128 --warmup 3 --repeats 5 --min-seconds 0.2
    both "$t" "$round" --mode micro --warmup 3 --repeats 5 --min-seconds 0.1
    translator "$t" "$round" --mode translate --warmup 3 --repeats 5 --steps 10
    for policy in OMP_WAIT_POLICY=ACTIVE GOMP_SPINCOUNT=10000; do  # PyTorch's best, as above
      TORCH_ENV=$policy TORCH_SCRIPT=apps/bench/translate_torch.py measure torch "$t" "$round" \
        --mode translate --warmup 3 --repeats 5 --steps 5 --batches "$translate_batches"
    done
    translator "$t" "$round" --mode translate-eval --warmup 3 --repeats 5 --min-seconds 0.2
  done
done

max_threads=$(tr ' ' '\n' <<<"$threads_list" | sort -n | tail -1)
if [[ ${SCALING:-1} == 1 ]]; then
  say "attention cost for n = 16 … 1024 on $max_threads thread(s)"
  both "$max_threads" 1 --mode mha-scaling --warmup 2 --repeats 5 --min-seconds 0.15 --tokens 4096
fi

# ---- profile of one training step --------------------------------------------------------------
profile=$out/profile.txt
if [[ ${PROFILE:-1} == 1 ]]; then
  say "profiling uwaga's training step"
  # About 100 steps: some 1,300 samples at 400 Hz, so an op's share is good to about ±1 %.
  profile_args=(--mode train --batch 128 --warmup 3 --repeats 4 --steps 25)
  # Lambdas and templates make very long names; shorten the noise, keep the function.
  shorten() {
    sed -E 's/\(anonymous namespace\)/{anon}/g; s/std::allocator<[^>]*> ?//g
      s/std::_Function_handler<std::vector<uwaga::Tensor, ?> \(uwaga::Tensor const&\), ([A-Za-z_:{}]+)\(.*/backward rule of \1/' |
      cut -c1-200
  }
  {
    echo "# Profile of uwaga's mnist-tiny training step: batch 128, ${uwaga_env[*]:3},"
    echo "# $(date -Iseconds), load $(cut -d' ' -f1-3 /proc/loadavg). Phase times (ms per step) are in"
    echo "# summary.md; this file says which ops inside the phases take the time."
  } >"$profile"
  if ((have_perf)); then
    # One thread with call graphs: every sample's stack leads back to its op (OpenMP workers'
    # stacks would not). Then the most threads without call graphs, for the parallel picture.
    OMP_NUM_THREADS=1 "${uwaga_env[@]}" perf record -q -F 400 --call-graph dwarf,16384 -o "$tmp/perf1.data" \
      "$bin" --threads 1 "${profile_args[@]}" >/dev/null 2>"$tmp/perf.err" || cat "$tmp/perf.err" >&2
    OMP_NUM_THREADS=$max_threads "${uwaga_env[@]}" perf record -q -F 400 -o "$tmp/perfn.data" \
      "$bin" --threads "$max_threads" "${profile_args[@]}" >/dev/null 2>"$tmp/perf.err" || cat "$tmp/perf.err" >&2
    {
      echo
      echo "## 1. Per op, 1 thread (perf samples attributed to autograd ops by apps/bench/profile_ops.py)"
      echo
      perf script -i "$tmp/perf1.data" --no-inline -F ip,sym 2>/dev/null | $python apps/bench/profile_ops.py
      echo
      echo "## 2. Self time per function, 1 thread (perf report --no-children)"
      perf report -i "$tmp/perf1.data" --stdio --no-children --sort dso,symbol -g none \
        --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$' | shorten
      echo
      echo "## 3. Self time per function, $max_threads threads, all threads (GOMP/futex entries: waiting)"
      perf report -i "$tmp/perfn.data" --stdio --no-children --sort dso,symbol \
        --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$' | shorten
      echo
      echo "## 4. Who calls the hottest functions, 1 thread (callers of functions with >= 3 % self time)"
      perf report -i "$tmp/perf1.data" --stdio --no-children --sort symbol -G --percent-limit 3 \
        2>/dev/null | grep -v '^#' | grep -v '^$' |
        grep -v -E '_start$|__libc_start|  main$|uwaga::apps::|time_calls|_Function_handler<void \(\)' | shorten | head -300
    } >>"$profile"
  else
    echo "(perf is not available: install linux-perf for the per-op profile)" >>"$profile"
  fi
  {
    echo
    echo "## 5. Time per op (forward + backward), ms per step, 1 and $max_threads threads (uwaga-bench --op-times; apps/bench/op_table.py splits it)"
    echo "# Summed over the threads (each runs a replica on its share of the batch): an op whose total"
    echo "# grows with the thread count is one that runs slower when both cores are busy. 'ratio' = 1 thread / N threads."
    echo
    for t in 1 "$max_threads"; do
      OMP_NUM_THREADS=$t "${uwaga_env[@]}" "$bin" --threads "$t" --mode train --batch 128 --warmup 3 \
        --repeats 1 --steps 5 --op-times 2>/dev/null
    done | $python -c '
import json, sys
runs = [json.loads(line) for line in sys.stdin]
lo = {op: r["forward_ms"] + r["backward_ms"] for op, r in runs[0]["op_times"]["ops"].items()}
hi = {op: r["forward_ms"] + r["backward_ms"] for op, r in runs[-1]["op_times"]["ops"].items()}
t_lo, t_hi = runs[0]["threads"], runs[-1]["threads"]
print("%-24s %2d thread  %2d threads  ratio" % ("op", t_lo, t_hi))
for op in sorted(lo, key=lambda o: -lo[o]):
    if lo[op] >= 0.05:
        print(f"{op:<24} {lo[op]:8.2f}  {hi.get(op, 0):9.2f}  {lo[op] / hi[op] if hi.get(op) else 0:7.2f}x")
'
  } >>"$profile"
  {
    echo
    echo "## 6. PyTorch's training step for comparison, $max_threads threads (torch.profiler, self CPU time)"
    OMP_NUM_THREADS=$max_threads OMP_WAIT_POLICY=PASSIVE $python "$torch_script" --mode profile --threads "$max_threads" \
      --batch 128 --warmup 3 --steps 10 2>&1
  } >>"$profile"
fi

elapsed=$(($(date +%s) - start))
say "measured in ${elapsed}s; load now $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- summary -----------------------------------------------------------------------------------
status=0
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg) SECONDS_MEASURED=$elapsed \
  $python apps/bench/summarize.py "$out" || status=$?
if [[ -s $out/mha_scaling.csv ]] && $python -c "import matplotlib" 2>/dev/null; then
  $python apps/bench/plot_scaling.py "$out/mha_scaling.csv" "$out/mha_scaling.png" || say "the plot failed"
fi
say "results in $out"
exit $status
