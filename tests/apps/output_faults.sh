#!/usr/bin/env bash
# Training into a directory that cannot take it: a read-only --out fails at once, naming the
# directory and the reason; a disk that fills up while a checkpoint is saved, or while the log is
# written, ends the run with a message saying so, exit status non-zero, the previous checkpoint
# whole and loadable and log.jsonl whole lines of JSON; with room again the run resumes.
#   bash tests/apps/output_faults.sh BUILD/apps/uwaga-gpt BUILD/apps/uwaga-translate
# The full disk is a small tmpfs when this may mount (root), else a file-size limit (ulimit -f).
# The read-only directory is a read-only tmpfs, else a directory without write permission (not
# root), else an immutable one (chattr +i); when none can be made, that part is skipped (exit 77).
set -uo pipefail
gpt=$1
translate=$2
tmp=$(mktemp -d)
mounts=()
immutable=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
  ((${#immutable[@]})) && chattr -i "${immutable[@]}" 2>/dev/null
  chmod -R u+w "$tmp" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
skipped=""
pass() { echo "ok: $1"; }
failed() { echo "FAIL: $1"; failures=$((failures + 1)); }
mount_tmpfs() {  # DIR OPTIONS
  mkdir -p "$1" && mount -t tmpfs -o "$2" tmpfs "$1" 2>/dev/null && mounts+=("$1")
}
# Every line of FILE is a JSON object with a "type".
whole_log() {
  /usr/bin/python3 -c 'import json, sys
for n, line in enumerate(open(sys.argv[1], "rb"), 1):
    try:
        assert "type" in json.loads(line)
    except Exception:
        sys.exit(f"line {n} is not a JSON record: {line[:80]!r}")' "$1"
}
no_temporaries() { ! compgen -G "$1/*.tmp.*" >/dev/null; }

text=$tmp/verses.txt
for _ in $(seq 1 1000); do
  printf 'ROMEO: what light breaks there?\nJULIET: it is the east.\nROMEO: and juliet is the sun.\n'
done >"$text"
train() { "$gpt" train --preset smoke --text "$text" --threads 1 --log-every 1 "$@"; }

# One epoch, the run the rest starts from.
train --epochs 1 --out "$tmp/first" >"$tmp/first.out" 2>&1 ||
  { failed "the first epoch: $(tail -3 "$tmp/first.out")"; exit 1; }

# 1. A read-only directory holding that run: a resume into it, a new run into it or into a new
# directory under it all exit 2 before any step, with one line naming the directory and why.
ro=$tmp/read-only
if mount_tmpfs "$ro" "size=1m" && cp -r "$tmp/first" "$ro/run" && mount -o remount,ro "$ro"; then
  reason="Read-only file system"
else
  mkdir -p "$ro" && cp -r "$tmp/first" "$ro/run"
  if [[ $(id -u) -ne 0 ]]; then
    chmod a-w "$ro" "$ro/run"
    reason="Permission denied"
  elif chattr +i "$ro" "$ro/run" 2>/dev/null; then
    immutable=("$ro" "$ro/run")
    reason="Operation not permitted"
  else
    skipped="the read-only directory (no mount, and chattr +i is refused here)"
  fi
fi
if [[ -z $skipped ]]; then
  expect_refusal() {  # what, directory, then the command
    local what=$1 dir=$2; shift 2
    "$@" >"$tmp/ro.out" 2>"$tmp/ro.err"
    local rc=$?
    if [[ $rc -eq 2 && $(wc -l <"$tmp/ro.err") -eq 1 ]] && grep -qF "directory '$dir': $reason" "$tmp/ro.err" &&
       ! grep -q "^epoch" "$tmp/ro.out"; then
      pass "$what: $(cat "$tmp/ro.err")"
    else
      failed "$what: exit $rc, stderr: $(cat "$tmp/ro.err") (expected one line naming '$dir' and '$reason', no step)"
    fi
  }
  expect_refusal "uwaga-gpt resumed into a read-only --out" "$ro/run" train --out "$ro/run" --resume --epochs 2
  expect_refusal "uwaga-gpt into a read-only --out" "$ro" train --out "$ro"
  expect_refusal "uwaga-gpt into a new directory under a read-only one" "$ro/new" train --out "$ro/new"
  expect_refusal "uwaga-translate into a read-only --out" "$ro" \
    "$translate" train --preset tiny --threads 1 --out "$ro"
  cmp -s "$ro/run/checkpoint.safetensors" "$tmp/first/checkpoint.safetensors" &&
    cmp -s "$ro/run/log.jsonl" "$tmp/first/log.jsonl" && pass "the read-only run is as it was" ||
    failed "the read-only run changed"
fi

# 2. The disk fills up during a checkpoint save: the run of 1 epoch is copied onto a tmpfs with
# room for its checkpoint and half of another; resuming, the save at the end of epoch 2 fails.
size=$(stat -c %s "$tmp/first/checkpoint.safetensors")
disk=$tmp/disk
if mount_tmpfs "$disk" "size=$(( (size * 3 / 2 + 16384) / 1024 ))k"; then
  full="No space left on device"
else
  mkdir -p "$disk"
  full="File too large"
fi
# capped KB COMMAND...: COMMAND, its files limited to KB kilobytes when there is no tmpfs (SIGXFSZ
# ignored, so a write beyond fails with EFBIG).
capped() {
  local kb=$1; shift
  if [[ $full == "File too large" ]]; then (trap '' XFSZ; ulimit -f "$kb"; "$@"); else "$@"; fi
}
echo "(full disk: $full)"
run=$disk/run
cp -r "$tmp/first" "$run"
cp "$run/checkpoint.safetensors" "$tmp/saved.safetensors"
capped $((size / 2048)) train --out "$run" --resume --epochs 3 >"$tmp/full.out" 2>"$tmp/full.err"
rc=$?
if [[ $rc -ne 0 ]] && grep -qF "cannot save the checkpoint of step 40 (the last one, of step 20, is kept as it was)" "$tmp/full.err" &&
   grep -qF "$full" "$tmp/full.err"; then
  pass "disk full while saving: exit $rc, $(tail -1 "$tmp/full.err")"
else
  failed "disk full while saving: exit $rc, stderr: $(tail -3 "$tmp/full.err")"
fi
cmp -s "$run/checkpoint.safetensors" "$tmp/saved.safetensors" &&
  pass "the checkpoint of step 20 is kept byte for byte" || failed "the checkpoint changed"
"$gpt" eval --checkpoint "$run/checkpoint.safetensors" --json >"$tmp/eval.out" 2>&1 &&
  pass "it loads: $(tail -1 "$tmp/eval.out")" || failed "eval of the kept checkpoint: $(tail -2 "$tmp/eval.out")"
no_temporaries "$run" && pass "no temporary file left" || failed "left behind: $(ls "$run")"
if whole_log "$run/log.jsonl" 2>"$tmp/log.err" &&
   tail -1 "$run/log.jsonl" | grep -q '"reason":"error".*"type":"stop"'; then
  pass "log.jsonl: whole JSON lines, ending with the stop record of the error"
else
  failed "log.jsonl: $(cat "$tmp/log.err"; tail -c 200 "$run/log.jsonl")"
fi

# 3. The disk fills up while the log is written (a file fills the rest of the tmpfs; or the
# file-size limit is just above the log): the record that does not fit is not left cut.
[[ $full == "No space left on device" ]] && dd if=/dev/zero of="$disk/filler" bs=4k >/dev/null 2>&1
log_kb=$(( $(stat -c %s "$run/log.jsonl") / 1024 + 1 ))
capped "$log_kb" train --out "$run" --resume --epochs 3 >"$tmp/log-full.out" 2>"$tmp/log-full.err"
rc=$?
if [[ $rc -ne 0 ]] && grep -qF "cannot write to the log '$run/log.jsonl': $full" "$tmp/log-full.err"; then
  pass "disk full while logging: exit $rc, $(tail -1 "$tmp/log-full.err")"
else
  failed "disk full while logging: exit $rc, stderr: $(tail -3 "$tmp/log-full.err")"
fi
whole_log "$run/log.jsonl" 2>"$tmp/log.err" && pass "log.jsonl: still whole JSON lines" ||
  failed "log.jsonl after a failed write: $(cat "$tmp/log.err")"
cmp -s "$run/checkpoint.safetensors" "$tmp/saved.safetensors" &&
  pass "the checkpoint of step 20 is still kept" || failed "the checkpoint changed"

# 4. Drawing curves onto the full disk fails naming the file and why, leaving no cut-off SVG.
capped 1 "$translate" plot --run "$run" --out "$disk/curves.svg" --no-png >"$tmp/plot.out" 2>&1
rc=$?
if [[ $rc -ne 0 ]] && grep -qF "cannot write '$disk/curves.svg': $full" "$tmp/plot.out" &&
   [[ ! -e $disk/curves.svg ]]; then
  pass "plot onto a full disk: exit $rc, $(tail -1 "$tmp/plot.out"), no file left"
else
  failed "plot onto a full disk: exit $rc, $(cat "$tmp/plot.out"); curves.svg $( [[ -e $disk/curves.svg ]] && echo left || echo absent)"
fi

# 5. With room again, the run resumes from step 20 and finishes.
rm -f "$disk/filler"
[[ $full == "No space left on device" ]] && mount -o remount,size=4m "$disk"
if train --out "$run" --resume --epochs 3 >"$tmp/again.out" 2>&1; then
  grep -q "resumed from $run/checkpoint.safetensors at step 20" "$tmp/again.out" &&
    [[ $(/usr/bin/python3 -c 'import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]
print(json.loads(f.read(n))["__metadata__"]["step"])' "$run/checkpoint.safetensors") == 60 ]] &&
    pass "resumed from step 20 and saved step 60" || failed "resume: $(grep -i "resum\|step 60" "$tmp/again.out")"
  whole_log "$run/log.jsonl" 2>"$tmp/log.err" && pass "log.jsonl: whole JSON lines at the end" ||
    failed "log.jsonl at the end: $(cat "$tmp/log.err")"
  no_temporaries "$run" && pass "no temporary file left" || failed "left behind: $(ls "$run")"
else
  failed "resume with room again: $(tail -3 "$tmp/again.out")"
fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
if [[ -n $skipped ]]; then echo "SKIPPED: $skipped; everything else passed"; exit 77; fi
echo "all passed"
