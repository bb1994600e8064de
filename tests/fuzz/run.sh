#!/usr/bin/env bash
# Builds uwaga's libFuzzer targets (tests/fuzz/CMakeLists.txt: clang, ASan + UBSan) and runs each
#   1. on its regression inputs, tests/fuzz/regressions/<target>/ (past findings): each must pass;
#   2. for --seconds N (default 60) from the seed corpus, tests/fuzz/corpus/<target>/, with the
#      dictionary tests/fuzz/dictionary.txt.
# Fails on any finding; the input that triggered it is left in $FUZZ_BUILD_DIR/findings/<target>/
# (make it a regression input once fixed). New inputs the fuzzer finds go to a scratch corpus in
# the build directory, not into the tree.
#   bash tests/fuzz/run.sh                      # every target, 60 s each
#   bash tests/fuzz/run.sh --seconds 20 idx pnm # two targets, 20 s each
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (build jobs, default nproc).
# Needs clang with its fuzzer runtime and libomp (Debian: clang libclang-rt-14-dev
# libomp-14-dev), installed with apt-get when missing and running as root.
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=60
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#--seconds=}; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $seconds =~ ^[0-9]+$ ]] || { echo "run.sh: --seconds '$seconds' is not a whole number" >&2; exit 2; }
all=(safetensors checkpoint_vit checkpoint_translate run_config idx cifar10 pnm vocabulary jpeg
     coco_keypoints)
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
failed=()
summary=()
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  findings=$build/findings/$t
  scratch=$build/corpus/$t
  mkdir -p "$findings" "$scratch"
  regressions=tests/fuzz/regressions/$t
  if [[ -d $regressions ]] && compgen -G "$regressions/*" >/dev/null; then
    if ! "$bin" "$regressions"/* >"$build/$t.regressions.log" 2>&1; then
      tail -n 30 "$build/$t.regressions.log" >&2
      echo "run.sh: $t: a regression input fails again (log: $build/$t.regressions.log)" >&2
      failed+=("$t")
      continue
    fi
  fi
  echo "== fuzz_$t for ${seconds} s"
  # Limits: an input may take 10 s, 2 GB of memory, 512 MB in one allocation; beyond that it is
  # a finding (a reader that allocates what a header claims).
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
       -max_len=65536 -dict=tests/fuzz/dictionary.txt -artifact_prefix="$findings/" \
       -print_final_stats=1 "$scratch" "tests/fuzz/corpus/$t" >"$build/$t.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log")
    secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/$t.log")
    summary+=("$t: ${runs:-?} runs, ${secs:-?} exec/s, no finding")
  else
    tail -n 40 "$build/$t.log" >&2
    echo "run.sh: fuzz_$t found a problem; the input is in $findings/ (log: $build/$t.log)" >&2
    summary+=("$t: FINDING (see $findings/)")
    failed+=("$t")
  fi
done
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "run.sh: findings in ${failed[*]}" >&2
  exit 1
fi
