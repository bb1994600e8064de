# Sourced by the speed scripts (gpt_speed.sh, vit_speed.sh): what each one needs before its
# rounds. Expects $python and $bin to be set and a die function.

# Checks that uwaga-bench is built and PyTorch importable; makes OUT, an empty OUT/raw.jsonl
# ($raw) and a temporary directory ($tmp, removed on exit).
bench_start() {
  local out=$1
  [[ -x $bin ]] || die "$bin not found; build it with cmake --build ${BUILD_DIR:-build-bench} --target uwaga-bench (or run apps/bench/run.sh once)"
  $python -c "import torch" 2>/dev/null || die "$python cannot import torch; install Debian's python3-torch"
  mkdir -p "$out"
  raw=$out/raw.jsonl
  : >"$raw"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
}

# The machine and the revision, as the first fields of a meta.json object: date, cpu, cores,
# load average, git revision (-dirty with uncommitted changes), PyTorch's version.
machine_fields() {
  cat <<EOF2
"date": "$(date -Iseconds)", "cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)",
 "cores": $(nproc), "loadavg_start": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "git": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo -dirty)",
 "torch": "$($python -c 'import torch; print(torch.__version__)')"
EOF2
}
