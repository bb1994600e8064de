#!/usr/bin/env bash
# Builds uwaga's libFuzzer targets (tests/fuzz/CMakeLists.txt: clang, ASan + UBSan) and runs each
#   1. on its regression inputs, tests/fuzz/regressions/<target>/ (past findings): each must pass;
#   2. for --seconds N (default 60) or --minutes N from the seed corpus,
#      tests/fuzz/corpus/<target>/, with the dictionary tests/fuzz/dictionary.txt.
#   Every build's test suite also replays both without clang (tests/fuzz/replay_main.cpp, CTest
#   fuzz_replay_<target>); fuzzing is only here.
# Fails on any finding; the input that triggered it is left in $FUZZ_BUILD_DIR/findings/<target>/
# (make it a regression input once fixed). New inputs the fuzzer finds go to a scratch corpus in
# the build directory, not into the tree. The targets are the files tests/fuzz/fuzz_<target>.cpp.
#   bash tests/fuzz/run.sh                      # every target, 60 s each
#   bash tests/fuzz/run.sh --seconds 20 idx pnm # two targets, 20 s each
#   nice -n 19 bash tests/fuzz/run.sh --minutes 10 --parallel 2   # a long run, two at a time
# Each target's last line: executions, executions per second, coverage (cov: edges, ft: features),
# corpus size; the whole log is $FUZZ_BUILD_DIR/<target>.log.
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (build jobs, default nproc).
# Needs clang with its fuzzer runtime and libomp (Debian: clang libclang-rt-14-dev
# libomp-14-dev), installed with apt-get when missing and running as root.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=60
parallel=1
targets=()
whole() { [[ $2 =~ ^[0-9]+$ ]] || { echo "run.sh: $1 '$2' is not a whole number" >&2; exit 2; }; }
while (($#)); do
  case $1 in
    --seconds) whole --seconds "${2:-}"; seconds=$2; shift 2 ;;
    --seconds=*) whole --seconds "${1#*=}"; seconds=${1#*=}; shift ;;
    --minutes) whole --minutes "${2:-}"; seconds=$((60 * $2)); shift 2 ;;
    --minutes=*) whole --minutes "${1#*=}"; seconds=$((60 * ${1#*=})); shift ;;
    --parallel) whole --parallel "${2:-}"; parallel=$2; shift 2 ;;
    --parallel=*) whole --parallel "${1#*=}"; parallel=${1#*=}; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((parallel >= 1)) || { echo "run.sh: --parallel must be at least 1" >&2; exit 2; }
all=()
for source in tests/fuzz/fuzz_*.cpp; do
  name=${source#tests/fuzz/fuzz_}
  all+=("${name%.cpp}")
done
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "run.sh: unknown target '$t' (${all[*]})" >&2; exit 2; }
done

# clang able to link -fsanitize=fuzzer and -fopenmp?
probe() {
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
    clang++ -fsanitize=fuzzer,address,undefined -fopenmp -x c++ - -o /dev/null 2>/dev/null
}
if ! command -v clang++ >/dev/null || ! probe; then
  packages=(clang libclang-rt-14-dev libomp-14-dev)
  if [[ $(id -u) -ne 0 ]]; then
    echo "run.sh: clang with libFuzzer is missing; as root run: apt-get install -y ${packages[*]}" >&2
    exit 1
  fi
  echo "run.sh: installing ${packages[*]}"
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
    --no-install-recommends "${packages[@]}" >/dev/null
  probe || { echo "run.sh: clang++ still cannot link -fsanitize=fuzzer" >&2; exit 1; }
fi

build=${FUZZ_BUILD_DIR:-build-fuzz}
CXX=clang++ cmake -S tests/fuzz -B "$build" -DCMAKE_BUILD_TYPE=None >/dev/null
cmake --build "$build" -j"${FUZZ_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"

export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# fuzz TARGET: its regressions, then the fuzzing; writes one summary line to $build/TARGET.summary
# and exits non-zero on a finding.
fuzz() {
  local t=$1
  local bin=$build/fuzz_$t findings=$build/findings/$t scratch=$build/corpus/$t
  local summary=$build/$t.summary regressions=tests/fuzz/regressions/$t seeds=()
  mkdir -p "$findings" "$scratch"
  if [[ -d $regressions ]] && compgen -G "$regressions/*" >/dev/null; then
    if ! "$bin" "$regressions"/* >"$build/$t.regressions.log" 2>&1; then
      tail -n 30 "$build/$t.regressions.log" >&2
      echo "run.sh: $t: a regression input fails again (log: $build/$t.regressions.log)" >&2
      echo "$t: a regression input fails again" >"$summary"
      return 1
    fi
  fi
  [[ -d tests/fuzz/corpus/$t ]] && seeds=("tests/fuzz/corpus/$t")
  echo "== fuzz_$t for ${seconds} s"
  # Limits: an input may take 10 s, 2 GB of memory, 512 MB in one allocation; beyond that it is
  # a finding (a reader that allocates what a header claims).
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
       -max_len=65536 -dict=tests/fuzz/dictionary.txt -artifact_prefix="$findings/" \
       -print_final_stats=1 "$scratch" "${seeds[@]}" >"$build/$t.log" 2>&1; then
    local runs secs cov
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log")
    secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/$t.log")
    # The last status line: "#N DONE cov: 1234 ft: 5678 corp: 90/12Kb ..."
    cov=$(grep -E '^#[0-9]+' "$build/$t.log" | tail -1 |
            grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' || true)
    echo "$t: ${runs:-?} runs, ${secs:-?} exec/s, ${cov:-cov: ?}, no finding" >"$summary"
  else
    tail -n 40 "$build/$t.log" >&2
    echo "run.sh: fuzz_$t found a problem; the input is in $findings/ (log: $build/$t.log)" >&2
    echo "$t: FINDING (see $findings/)" >"$summary"
    return 1
  fi
}

failed=()
running=()  # "pid:target"
reap() {  # waits for the oldest running target
  local entry=${running[0]}
  running=("${running[@]:1}")
  wait "${entry%%:*}" || failed+=("${entry#*:}")
}
for t in "${targets[@]}"; do
  ((${#running[@]} < parallel)) || reap
  fuzz "$t" &
  running+=("$!:$t")
done
while ((${#running[@]})); do reap; done
for t in "${targets[@]}"; do cat "$build/$t.summary"; done
if ((${#failed[@]})); then
  echo "run.sh: findings in ${failed[*]}" >&2
  exit 1
fi
