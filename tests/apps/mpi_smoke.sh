#!/usr/bin/env bash
# uwaga-vit under mpirun, on a slice of real MNIST: two runs of 2 processes repeat bit for bit; a
# run stopped and resumed on 2 processes equals the run in one go; a checkpoint resumes on another
# number of processes (and the log says so); kill -9 of one process ends the others within 10 s
# and leaves a checkpoint that resumes; Ctrl-C on mpirun saves once and ends every process; a
# process whose data is missing, or whose flags differ, ends them all with its message.
#   bash tests/apps/mpi_smoke.sh BUILD/apps/uwaga-vit MPIRUN
set -uo pipefail
bin=$1
mpirun=${2:-mpirun}
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$root/data/cache/mnist
if [[ ! -f $data/t10k-labels-idx1-ubyte ]]; then
  bash "$root/data/fetch.sh" mnist "$data" >/dev/null || { echo "FAIL: could not fetch MNIST"; exit 1; }
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
pass() { echo "ok: $1"; }
failed() { echo "FAIL: $1"; failures=$((failures + 1)); }
mpi() { local n=$1; shift; timeout 120 "$mpirun" --oversubscribe --bind-to none -np "$n" "$@"; }
same() { /usr/bin/python3 "$root/apps/bench/compare_checkpoints.py" "$@" >"$tmp/compare.out" 2>&1; }

small=(--data-dir "$data" --train-size 1024 --batch-size 64 --dim 32 --layers 2 --heads 2
       --mlp-dim 64 --warmup 5 --no-augment --log-every 4 --threads 1)

# 1. Two runs on 2 processes, same seed: the same checkpoint, every tensor byte for byte.
mpi 2 "$bin" train "${small[@]}" --epochs 2 --out "$tmp/a" >"$tmp/a.out" 2>&1 || failed "2 processes: exit $? ($(tail -2 "$tmp/a.out"))"
mpi 2 "$bin" train "${small[@]}" --epochs 2 --out "$tmp/b" >"$tmp/b.out" 2>&1 || failed "2 processes, again: exit $?"
if same "$tmp/a" "$tmp/b"; then pass "two 2-process runs are identical"; else failed "two 2-process runs differ: $(cat "$tmp/compare.out")"; fi
grep -q '"processes":2' "$tmp/a/log.jsonl" && pass "the log records 2 processes" || failed "no processes in the start record"
[[ $(grep -c "^test accuracy:" "$tmp/a.out") == 1 ]] && pass "process 0 alone prints the result" || failed "the result printed $(grep -c "^test accuracy:" "$tmp/a.out") times"

# 2. Stopped after 10 steps and resumed: the same as the run in one go.
mpi 2 "$bin" train "${small[@]}" --epochs 2 --max-steps 10 --out "$tmp/c" >"$tmp/c.out" 2>&1 || failed "stop at 10: exit $?"
mpi 2 "$bin" train "${small[@]}" --epochs 2 --resume --out "$tmp/c" >"$tmp/c2.out" 2>&1 || failed "resume: exit $? ($(tail -2 "$tmp/c2.out"))"
# (The log's window means restart at a resume, so the checkpoints are compared, not the logs.)
if same --tensors-only "$tmp/a" "$tmp/c"; then pass "stopped and resumed on 2 processes: identical to one go"; else failed "resumed run differs: $(cat "$tmp/compare.out")"; fi

# 3. A 2-process checkpoint resumed by one process, and a 1-process one by two.
"$bin" train "${small[@]}" --epochs 2 --max-steps 10 --out "$tmp/d" >"$tmp/d.out" 2>&1 || failed "1 process, 10 steps: exit $?"
mpi 2 "$bin" train "${small[@]}" --epochs 2 --resume --out "$tmp/d" >"$tmp/d2.out" 2>&1 || failed "resume on 2: exit $?"
grep -q '"processes_before":1' "$tmp/d/log.jsonl" && grep -q "resuming on 2 process" "$tmp/d2.out" &&
  pass "resumed on 2 processes from 1: the log and the output say so" || failed "no processes_before in the resume record"

# 4. kill -9 of process 1: every process ends within 10 s, non-zero; the checkpoint resumes.
mpi 2 "$bin" train "${small[@]}" --epochs 400 --out "$tmp/k" >"$tmp/k.out" 2>&1 &
runner=$!
for _ in $(seq 1 100); do [[ -f $tmp/k/checkpoint.safetensors ]] && break; sleep 0.1; done
sleep 0.5
victim=$(pgrep -f -- "--out $tmp/k" | grep -v "^$runner$" | while read -r p; do
  [[ $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null) == "$bin"* ]] && echo "$p"; done | tail -1)
start=$(date +%s)
[[ -n $victim ]] && kill -9 "$victim"
wait "$runner"; status=$?
took=$(( $(date +%s) - start ))
if [[ -n $victim && $status -ne 0 && $took -le 10 ]]; then pass "kill -9 of a process: all ended in ${took} s, status $status"
else failed "kill -9: victim '$victim', status $status after ${took} s"; fi
"$bin" eval --checkpoint "$tmp/k/checkpoint.safetensors" --data-dir "$data" >/dev/null 2>&1 &&
  pass "the checkpoint left by the killed run loads" || failed "the checkpoint of the killed run does not load"
ls "$tmp/k" | grep -q "\.tmp\." && failed "a temporary file was left: $(ls "$tmp/k")" || true
mpi 2 "$bin" train "${small[@]}" --epochs 400 --max-steps 60 --resume --out "$tmp/k" >"$tmp/k2.out" 2>&1 &&
  pass "the killed run resumes" || failed "resuming the killed run: $(tail -2 "$tmp/k2.out")"

# 5. Ctrl-C on mpirun while the processes train (mpirun gives them 1 s before SIGKILL: its
# odls_base_sigkill_timeout; an evaluation in progress can take longer): one checkpoint, one stop
# record, every process ends.
mpi 2 "$bin" train "${small[@]/1024/8192}" --epochs 400 --out "$tmp/i" >"$tmp/i.out" 2>&1 &
runner=$!
for _ in $(seq 1 100); do [[ -f $tmp/i/log.jsonl ]] && grep -q '"type":"step"' "$tmp/i/log.jsonl" && break; sleep 0.1; done
pkill -INT -f "^[^ ]*(mpirun|mpiexec|orterun) .*--out $tmp/i"
wait "$runner"; status=$?
stops=$(grep -c '"reason":"interrupted"' "$tmp/i/log.jsonl")
if [[ $stops == 1 && -f $tmp/i/checkpoint.safetensors ]] && ! pgrep -f -- "--out $tmp/i" >/dev/null; then
  pass "Ctrl-C: one interrupted record, a checkpoint, no process left (status $status)"
else failed "Ctrl-C: $stops stop records, status $status"; fi

# 6. One process's data is missing: both end, with that process's message.
mpi 1 "$bin" train "${small[@]}" --out "$tmp/m" : -np 1 "$bin" train "${small[@]/$data/$tmp/nowhere}" \
  --out "$tmp/m" >"$tmp/m.out" 2>&1
status=$?
if [[ $status -ne 0 ]] && [[ $(grep -c "process 1 of 2: .*nowhere" "$tmp/m.out") == 2 ]]; then
  pass "missing data on process 1: both processes report it"
else failed "missing data: status $status, $(grep -c "process 1 of 2" "$tmp/m.out") messages: $(tail -3 "$tmp/m.out")"; fi

# 7. Flags that differ between processes: named.
mpi 1 "$bin" train "${small[@]}" --out "$tmp/f" : -np 1 "$bin" train "${small[@]}" --lr 0.01 \
  --out "$tmp/f" >"$tmp/f.out" 2>&1
status=$?
if [[ $status -ne 0 ]] && grep -q "the setting run.lr is 0.01 here" "$tmp/f.out"; then
  pass "a flag that differs between processes is named"
else failed "differing flags: status $status: $(tail -3 "$tmp/f.out")"; fi

echo "$failures failure(s)"
exit $((failures > 0))
