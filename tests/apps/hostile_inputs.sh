#!/usr/bin/env bash
# Hostile input to the four programs and the Python bindings: flags (hexadecimal, unicode, huge),
# special files (FIFOs, devices, directories), crafted checkpoints and memory limits. Each must
# end within seconds with exit 2 and one line naming the flag or file at fault — never a hang, a
# crash, a silently changed value or an allocation that runs until memory is gone.
#   bash tests/apps/hostile_inputs.sh GPT TRANSLATE VIT POSE [PYTHONPATH]
set -uo pipefail
gpt=$(realpath "$1") translate=$(realpath "$2") vit=$(realpath "$3") pose=$(realpath "$4")
pypath=${5:+$(realpath "$5")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0
pass() { echo "ok: $1"; }
failed() { echo "FAIL: $1"; failures=$((failures + 1)); }

# expect_refusal TEXT PROGRAM ARGS...: exit 2 within 20 s, one line of output that contains
# TEXT (as it is, not a pattern), besides "warning:" lines. Standard input is empty unless the
# caller redirects it.
expect_refusal() {
  local want=$1; shift
  checks=$((checks + 1))
  timeout -s KILL 20 "$@" 2>&1 </dev/null | grep -v "warning:" >"$tmp/out"
  local rc=${PIPESTATUS[0]}
  if [[ $rc -eq 2 && $(grep -c . "$tmp/out") -eq 1 ]] && grep -qF -- "$want" "$tmp/out"; then
    pass "${1##*/} ${2:-}: $(cat "$tmp/out")"
  else
    [[ $rc -eq 137 ]] && echo "  (killed after 20 s: it hung)"
    failed "'${*##*/}' exited $rc with: $(head -c 600 "$tmp/out") (expected one line with '$want')"
  fi
}

# ---- a small run of each kind to aim at --------------------------------------------------------
text=$tmp/verses.txt
for i in $(seq 1 300); do printf 'ROMEO: what light breaks there?\nJULIET: it is the east.\n'; done >"$text"
if ! "$gpt" train --preset smoke --text "$text" --threads 2 --epochs 1 --out "$tmp/gpt" \
     >"$tmp/gpt.out" 2>&1; then
  cat "$tmp/gpt.out"; echo "FAIL: could not train the small gpt run the checks need"; exit 1
fi
ckpt=$tmp/gpt/checkpoint.safetensors

# ---- flags: hexadecimal, unicode, huge, blank ----------------------------------------------------
# cxxopts reads a float with a stream that stops at the "x" of 0x2: the value must be refused, not
# silently become 0 (clipping off, weight decay off, greedy sampling).
expect_refusal "--clip expects a decimal number, got '0x2'" "$gpt" train --preset smoke --text "$text" --clip 0x2 --out "$tmp/h1"
expect_refusal "--weight-decay expects a decimal number, got '0x5'" "$gpt" train --preset smoke --text "$text" --weight-decay 0x5 --out "$tmp/h2"
expect_refusal "--lr expects a decimal number, got '0x10'" "$gpt" train --preset smoke --text "$text" --lr 0x10 --out "$tmp/h3"
expect_refusal "--temperature expects a decimal number, got '0x1p-1'" "$gpt" sample --checkpoint "$ckpt" --temperature 0x1p-1
expect_refusal "--lr expects a decimal number, got '0x10'" "$vit" train --preset mnist-tiny --lr 0x10 --out "$tmp/h4"
expect_refusal "--lr expects a decimal number, got '0x10'" "$translate" train --preset tiny --lr 0x10 --out "$tmp/h5"
expect_refusal "--lr expects a decimal number, got '0x10'" "$pose" train --preset smoke --lr 0x10 --out "$tmp/h6"
expect_refusal "--lr expects a number, got '1e−3'" "$gpt" train --preset smoke --text "$text" --lr 1e−3 --out "$tmp/h7"
expect_refusal "--epochs" "$gpt" train --preset smoke --text "$text" --epochs ３ --out "$tmp/h8"
expect_refusal "--clip expects a finite number" "$gpt" train --preset smoke --text "$text" --clip 1e999 --out "$tmp/h9"
expect_refusal "--epochs" "$gpt" train --preset smoke --text "$text" --epochs 99999999999999999999 --out "$tmp/h10"

expect_refusal "--batch-size expects a whole number in digits (no exponent or point), got '1e8'" "$gpt" train --preset smoke --text "$text" --batch-size 1e8 --out "$tmp/h12"
expect_refusal "--epochs expects a number without spaces, got ' 3'" "$gpt" train --preset smoke --text "$text" --epochs " 3" --out "$tmp/h11"
# cxxopts reads no '+' before a whole number: it was called "out of range".
expect_refusal "--epochs expects a whole number without a '+' sign, got '+3'" "$gpt" train --preset smoke --text "$text" --epochs +3 --out "$tmp/h13"
# The schedule's own message named neither flag ("WarmupCosineLr: floor 1 is above base 0.001").
expect_refusal "--min-lr 1 is above --lr 0.003" "$gpt" train --preset smoke --text "$text" --min-lr 1 --out "$tmp/h14"
# Counts that ran for days, now bounded.
expect_refusal "sample: --tokens must be from 1 to 1,000,000, got 1000000000000" "$gpt" sample --checkpoint "$ckpt" --tokens 1000000000000
expect_refusal "augment: --time must be from 1 to 100,000 batches, got 1000000000000" "$vit" augment --time 1000000000000

# ---- paths: not UTF-8, symlink loops, names too long ----------------------------------------------
# A finished run used to end with exit 1 and nlohmann's exception when its JSON met the path.
expect_refusal "is not valid UTF-8" "$gpt" train --preset smoke --text "$text" --out "$tmp/$(printf 'r\xff')"
ln -s loop-b "$tmp/loop-a" && ln -s loop-a "$tmp/loop-b"
expect_refusal "Too many levels of symbolic links" "$gpt" train --preset smoke --text "$tmp/loop-a" --out "$tmp/p1"
expect_refusal "Too many levels of symbolic links" "$gpt" train --preset smoke --text "$text" --out "$tmp/loop-a/run"
long=$(printf 'n%.0s' $(seq 1 300))
expect_refusal "File name too long" "$gpt" train --preset smoke --text "$text" --out "$tmp/$long"

# A relative --text is stored absolute: a resume from another directory finds it, and the same
# file by its absolute name is the same setting. The text changed at the same path is noticed.
mkdir -p "$tmp/cwd" && cp "$text" "$tmp/cwd/t.txt"
(cd "$tmp/cwd" && "$gpt" train --preset smoke --text t.txt --epochs 1 --out "$tmp/rel" >"$tmp/rel.out" 2>&1)
checks=$((checks + 1))
if "$gpt" train --out "$tmp/rel" --resume --epochs 2 --text "$tmp/cwd/t.txt" >"$tmp/out" 2>&1; then
  pass "a run begun with a relative --text resumes from another directory, --text absolute"
else failed "resume of a relative --text run: $(tail -2 "$tmp/out")"; fi
printf 'JULIET: another text entirely, of the same characters.\n%.0s' $(seq 1 200) >"$tmp/cwd/t.txt"
expect_refusal "has changed since the run began" "$gpt" train --out "$tmp/rel" --resume --epochs 3

# ---- special files: FIFOs, devices, directories --------------------------------------------------
mkfifo "$tmp/fifo"
expect_refusal "is a FIFO (named pipe), not a regular file" "$gpt" eval --checkpoint "$tmp/fifo"
expect_refusal "is a FIFO (named pipe), not a regular file" "$translate" eval --checkpoint "$tmp/fifo"
expect_refusal "is a FIFO (named pipe), not a regular file" "$vit" eval --checkpoint "$tmp/fifo"
expect_refusal "is a FIFO (named pipe), not a regular file" "$pose" eval --checkpoint "$tmp/fifo"
expect_refusal "the text file '$tmp/fifo': is a FIFO" "$gpt" train --preset smoke --text "$tmp/fifo" --out "$tmp/s1"
expect_refusal "the text file '/dev/zero': is a character device" "$gpt" train --preset smoke --text /dev/zero --out "$tmp/s2"
expect_refusal "the text file '$tmp': is a directory" "$gpt" train --preset smoke --text "$tmp" --out "$tmp/s3"
mkdir -p "$tmp/fifo-run" && mkfifo "$tmp/fifo-run/log.jsonl"
expect_refusal "is a FIFO (named pipe), not a regular file" "$vit" plot --run "$tmp/fifo-run"
# The FIFO itself as --run was "no log at $tmp/fifo/log.jsonl".
expect_refusal "plot: $tmp/fifo is a FIFO (named pipe), not a run directory or its log.jsonl" "$vit" plot --run "$tmp/fifo"

# A loss of ±1e308 overflowed the panel's scale: "-nan" in the SVG's path. Left out, and said so.
mkdir -p "$tmp/huge-loss"
for step in 1 2 3 4; do
  case $step in 2) loss=1e308 ;; 3) loss=-1e308 ;; *) loss=2.5 ;; esac
  printf '{"type":"step","step":%d,"loss":%s,"lr":0.001}\n' "$step" "$loss"
done >"$tmp/huge-loss/log.jsonl"
checks=$((checks + 1))
if "$vit" plot --run "$tmp/huge-loss" --out "$tmp/huge-loss.svg" --no-png >"$tmp/out" 2>&1 &&
   ! grep -qi "nan\|inf" "$tmp/huge-loss.svg" &&
   grep -qF "2 values beyond float's range (|x| > 3.5e38) left out" "$tmp/out"; then
  pass "plot: a loss of ±1e308 is left out, and said so"
else failed "plot of ±1e308: $(cat "$tmp/out"; grep -o 'd="[^"]*' "$tmp/huge-loss.svg" | head -3)"; fi

# A run shorter than --log-every logged no step: train drew no curves and plot refused the run.
checks=$((checks + 1))
if "$gpt" train --preset smoke --text "$text" --epochs 1 --log-every 1000 --out "$tmp/short" \
     >"$tmp/short.out" 2>&1 && grep -q "^curves: " "$tmp/short.out" && [[ -f $tmp/short/curves.svg ]] &&
   "$vit" plot --run "$tmp/short" --out "$tmp/short.svg" --no-png >"$tmp/out" 2>&1; then
  pass "a run shorter than --log-every draws its curves from its epochs"
else failed "short run: $(tail -3 "$tmp/short.out") / $(cat "$tmp/out" 2>/dev/null)"; fi

# Unbounded input: a "line" of standard input without end.
if "$translate" train --preset tiny --max-steps 3 --out "$tmp/tr" >"$tmp/tr.out" 2>&1; then
  expect_refusal "a line of standard input is longer than 65536 bytes" bash -c '"$@" </dev/zero' _ "$translate" translate --checkpoint "$tmp/tr/checkpoint.safetensors"
  # An empty --attention read as "no picture": exit 0, nothing drawn.
  expect_refusal "translate: --attention is empty; give the SVG file" "$translate" translate --checkpoint "$tmp/tr/checkpoint.safetensors" --attention "" "i eat"
else failed "could not train the small translate run: $(tail -3 "$tmp/tr.out")"; fi

# The explorer's page is written atomically; a failed write names the reason and leaves nothing.
expect_refusal "cannot write '$tmp/no-dir/page.html': No such file or directory" "$gpt" explore --checkpoint "$ckpt" --prompt "ROMEO" --out "$tmp/no-dir/page.html"
checks=$((checks + 1))
if "$gpt" explore --checkpoint "$ckpt" --prompt "ROMEO" --out "$tmp/page.html" >"$tmp/out" 2>&1 &&
   [[ -s $tmp/page.html ]] && [[ -z $(ls "$tmp" | grep "page.html.tmp") ]]; then
  pass "explore: the page written whole, no temporary left"
else failed "explore: $(cat "$tmp/out")"; fi

# ---- crafted checkpoints -------------------------------------------------------------------------
head -c 5 "$ckpt" >"$tmp/truncated.safetensors"
expect_refusal "truncated.safetensors" "$gpt" eval --checkpoint "$tmp/truncated.safetensors"
head -c 4096 /dev/urandom >"$tmp/noise.safetensors"
expect_refusal "noise.safetensors" "$gpt" eval --checkpoint "$tmp/noise.safetensors"
printf '\xff\xff\xff\xff\xff\xff\xff\x7f{}' >"$tmp/huge-header.safetensors"
expect_refusal "header length 9223372036854775807" "$gpt" eval --checkpoint "$tmp/huge-header.safetensors"

# edit_metadata SRC DST KEY VALUE: a copy of the checkpoint SRC with one metadata entry changed (the
# JSON header rewritten, its length prefix with it; the tensors' offsets are relative to its end).
# With KEEP_METADATA_CRC=1 the metadata's checksums stay, and refuse the edit; without, they go, as
# in a checkpoint written before them, so that the checks behind them are reached.
edit_metadata() {
  KEEP_METADATA_CRC=${KEEP_METADATA_CRC:-0} python3 - "$@" <<'PY'
import json, os, struct, sys
src, dst, key, value = sys.argv[1:]
raw = open(src, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
header["__metadata__"][key] = value
if os.environ["KEEP_METADATA_CRC"] != "1":
    header["__metadata__"].pop("uwaga.metadata_crc32", None)
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
PY
}
mkdir -p "$tmp/edited"
edit_metadata "$ckpt" "$tmp/edited/checkpoint.safetensors" epoch 1000000
expect_refusal "metadata \"epoch\" 1000000 and" "$gpt" eval --checkpoint "$tmp/edited/checkpoint.safetensors"
edit_metadata "$ckpt" "$tmp/edited/checkpoint.safetensors" step 9223372036854775807
expect_refusal "metadata \"step\" is 9223372036854775807, more than the" "$gpt" eval --checkpoint "$tmp/edited/checkpoint.safetensors"
# The metadata's checksums refuse an edit they were not told of (it changed eval's results).
KEEP_METADATA_CRC=1 edit_metadata "$ckpt" "$tmp/edited/checkpoint.safetensors" step 7777
expect_refusal "metadata entry \"step\" is damaged or was edited" "$gpt" eval --checkpoint "$tmp/edited/checkpoint.safetensors"

# ---- memory limits ---------------------------------------------------------------------------------
# Under an address-space limit OpenBLAS's per-thread buffers did not fit and its allocator waited
# forever for one to come free. (AddressSanitizer reserves terabytes of address space for its
# shadow memory: a sanitized build cannot start under ulimit -v at all.)
sanitized=false
if [[ -n ${ASAN_OPTIONS:-} ]] || ldd "$gpt" 2>/dev/null | grep -q libasan; then sanitized=true; fi
if $sanitized; then
  echo "skipped: the ulimit -v checks (a sanitized build)"
else
expect_refusal "use at most" bash -c 'ulimit -v 2000000; exec "$@"' _ "$gpt" train --preset smoke --text "$text" --threads 16 --out "$tmp/m1"
checks=$((checks + 1))
if (ulimit -v 2000000; timeout -s KILL 60 "$gpt" train --preset smoke --text "$text" --epochs 1 --out "$tmp/m2" >"$tmp/out" 2>&1); then
  pass "under ulimit -v 2000000 the default thread count trains"
else failed "under ulimit -v 2000000 the default thread count: $(tail -3 "$tmp/out")"; fi
fi

# Sizes that cannot fit are refused before anything is allocated, with the estimate and the limit
# (they allocated for minutes, then ended in std::bad_alloc, exit 1).
expect_refusal "train: the run needs about" "$gpt" train --preset smoke --text "$text" --dim 65536 --layers 64 --out "$tmp/big1"
expect_refusal "train: the run needs about" "$vit" train --preset mnist-tiny --dim 8192 --layers 1000 --batch-size 4096 --out "$tmp/big2"
expect_refusal "train: the run needs about" "$translate" train --preset tiny --dim 8192 --encoder-layers 500 --out "$tmp/big3"
expect_refusal "train: the run needs about" "$pose" train --preset smoke --dim 8192 --layers 1000 --out "$tmp/big4"
$sanitized || expect_refusal "of the address-space limit (ulimit -v)" bash -c 'ulimit -v 3000000; exec "$@"' _ "$gpt" train --preset smoke --text "$text" --dim 2048 --layers 12 --threads 1 --out "$tmp/big5"

expect_refusal "--dataset synthetic: --train-size and --valid-size may be at most 1000000" "$pose" train --preset smoke --valid-size 100000000 --out "$tmp/big6"
# eval's --valid-size had no such limit: 10^9 stick figures were drawn for hours.
if "$pose" train --preset smoke --max-steps 1 --threads 2 --out "$tmp/po" >"$tmp/po.out" 2>&1; then
  expect_refusal "--dataset synthetic: --train-size and --valid-size may be at most 1000000" "$pose" eval --checkpoint "$tmp/po/checkpoint.safetensors" --valid-size 1000000000
else failed "could not train the small pose run: $(tail -3 "$tmp/po.out")"; fi
expect_refusal "--valid-size and --test-size may be at most 100000 sentences" "$translate" train --preset tiny --test-size 800000 --out "$tmp/big8"
expect_refusal "--coco-annotations and --data-dir are for --dataset coco" "$pose" train --preset smoke --coco-annotations "$tmp/x.json" --out "$tmp/big7"

# ---- messages name the cause: missing is not "not a directory", negative is not "out of range" --
expect_refusal "--seed expects a whole number >= 0, got '-1'" "$gpt" train --preset smoke --text "$text" --seed -1 --out "$tmp/c1"
expect_refusal "--seed is out of range, got '99999999999999999999'" "$gpt" train --preset smoke --text "$text" --seed 99999999999999999999 --out "$tmp/c2"
expect_refusal "--tokenizer '$tmp/no-tokenizer' does not exist" "$gpt" tokenize --tokenizer "$tmp/no-tokenizer"
expect_refusal "plot: $tmp/no-run does not exist" "$vit" plot --run "$tmp/no-run"
mkdir -p "$tmp/empty-run"
expect_refusal "plot: no log at $tmp/empty-run/log.jsonl" "$pose" plot --run "$tmp/empty-run"
coco=$(dirname "$0")/coco_fixture
expect_refusal "the directory of its photos '$text' is not a directory" "$pose" train --preset smoke --dataset coco --coco-annotations "$coco/person_keypoints.json" --data-dir "$text" --out "$tmp/c3"
expect_refusal "the directory of its photos '$tmp/no-photos' does not exist" "$pose" train --preset smoke --dataset coco --coco-annotations "$coco/person_keypoints.json" --data-dir "$tmp/no-photos" --out "$tmp/c4"

# ---- GPT-2's files: tokenizer, config.json, weights ----------------------------------------------
# A small GPT-2 of 256 byte tokens and its tokenizer (tests/apps/make_tiny_gpt2.py, no PyTorch).
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/make_tiny_gpt2.py" "$tmp/g2"
g2tok=$tmp/g2/tokenizer
# FIFOs blocked the readers of encoder.json, vocab.bpe and config.json; /dev/zero ran into
# bad_alloc or was read for seconds; a directory as vocab.bpe gave a tokenizer without merges.
for file in encoder.json vocab.bpe; do
  for kind in fifo zero dir; do
    bad=$tmp/tok-$kind-${file%.*}
    cp -r "$g2tok" "$bad" && rm "$bad/$file"
    case $kind in
      fifo) mkfifo "$bad/$file"; want="'$bad/$file': is a FIFO (named pipe), not a regular file" ;;
      zero) ln -s /dev/zero "$bad/$file"; want="'$bad/$file': is a character device, not a regular file" ;;
      dir) mkdir "$bad/$file"; want="'$bad/$file': is a directory, not a regular file" ;;
    esac
    expect_refusal "$want" "$gpt" tokenize --tokenizer "$bad"
  done
done
cp -r "$g2tok" "$tmp/tok-cr" && printf '#version: 0.2\r\xc4\xa0 t\r' >"$tmp/tok-cr/vocab.bpe"
expect_refusal "a carriage return (\r) inside the line" "$gpt" tokenize --tokenizer "$tmp/tok-cr"
cp -r "$tmp/g2" "$tmp/g2fifo" && rm "$tmp/g2fifo/config.json" && mkfifo "$tmp/g2fifo/config.json"
expect_refusal "config.json': is a FIFO (named pipe), not a regular file" "$gpt" sample --checkpoint "$tmp/g2fifo/model.safetensors" --tokenizer "$g2tok"
cp -r "$tmp/g2" "$tmp/g2zero" && rm "$tmp/g2zero/config.json" && ln -s /dev/zero "$tmp/g2zero/config.json"
expect_refusal "config.json': is a character device, not a regular file" "$gpt" eval --checkpoint "$tmp/g2zero/model.safetensors" --tokenizer "$g2tok" --text "$text"
cp -r "$tmp/g2" "$tmp/g2dir" && rm "$tmp/g2dir/config.json" && mkdir "$tmp/g2dir/config.json"
expect_refusal "config.json': is a directory, not a regular file" "$gpt" sample --checkpoint "$tmp/g2dir/model.safetensors" --tokenizer "$g2tok"
# --tokenizer beside a file that is no GPT-2: each was called "a uwaga-gpt checkpoint".
expect_refusal "'$tmp/fifo': is a FIFO (named pipe), not a regular file" "$gpt" sample --checkpoint "$tmp/fifo" --tokenizer "$g2tok"
expect_refusal "'$tmp/g2dir': is a directory, not a regular file" "$gpt" sample --checkpoint "$tmp/g2dir" --tokenizer "$g2tok"
expect_refusal "'/dev/zero': is a character device, not a regular file" "$gpt" sample --checkpoint /dev/zero --tokenizer "$g2tok"
# NaN weights were used: sample wrote garbage and eval a loss of -nan, exit 0.
python3 "$here/make_tiny_gpt2.py" "$tmp/g2nan" --nan h.0.attn.c_proj.weight
expect_refusal "the tensor transformer.h.0.attn.c_proj.weight holds NaN at index 5" "$gpt" sample --checkpoint "$tmp/g2nan/model.safetensors" --tokenizer "$g2tok"
expect_refusal "the tensor transformer.h.0.attn.c_proj.weight holds NaN at index 5" "$gpt" eval --checkpoint "$tmp/g2nan/model.safetensors" --tokenizer "$g2tok" --text "$text"
# sample dropped the NUL bytes it drew (fputs).
python3 "$here/make_tiny_gpt2.py" "$tmp/g2nul" --nul
checks=$((checks + 1))
nuls=$(timeout -s KILL 20 "$gpt" sample --checkpoint "$tmp/g2nul/model.safetensors" --tokenizer "$g2tok" --prompt x --tokens 5 --temperature 0 2>/dev/null | tr -cd '\000' | wc -c)
[[ $nuls -eq 5 ]] && pass "sample writes the NUL bytes it draws (5 of 5)" || failed "sample wrote $nuls of 5 NUL bytes"
# A GPT-2 too large for the address space (3.2 GB, a hole in the file): refused with the estimate
# before it is read, not by std::bad_alloc.
python3 "$here/make_tiny_gpt2.py" "$tmp/g2big" --sparse --dim 4096 --layers 4
$sanitized || expect_refusal "of the address-space limit (ulimit -v)" bash -c 'ulimit -v 3000000; exec "$@"' _ "$gpt" sample --checkpoint "$tmp/g2big/model.safetensors" --tokenizer "$g2tok"

# Standard input of tokenize was read whole before anything: < /dev/zero ran without bound.
expect_refusal "tokenize: standard input holds more than 134217728 bytes" bash -c '"$@" </dev/zero' _ "$gpt" tokenize --tokenizer "$g2tok"
expect_refusal "tokenize: the text on stdin has characters the model never saw" bash -c '"$@" </dev/zero' _ "$gpt" tokenize --tokenizer "$ckpt"
expect_refusal "is not a token id from 0 to 255" bash -c '"$@" </dev/zero' _ "$gpt" tokenize --tokenizer "$g2tok" --decode
# One long word is one piece: merging it by rescanning was quadratic (1 MB: about 20 minutes with
# GPT-2's 50,000 merges); by a heap it takes seconds.
root=$(cd "$here/../.." && pwd)
if [[ -f $root/data/cache/gpt2-tokenizer/encoder.json ]]; then
  python3 -c "import random, sys; random.seed(1); sys.stdout.write(''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(1 << 20)))" >"$tmp/word.txt"
  checks=$((checks + 1))
  start=$(date +%s)
  if timeout -s KILL 60 "$gpt" tokenize --tokenizer "$root/data/cache/gpt2-tokenizer" <"$tmp/word.txt" >"$tmp/word.ids" 2>&1 &&
     [[ $(wc -w <"$tmp/word.ids") -gt 100000 ]]; then
    pass "tokenize: 1 MB without a space in $(($(date +%s) - start)) s, $(wc -w <"$tmp/word.ids") tokens"
  else failed "tokenize of 1 MB without a space: not done within 60 s ($(head -c 300 "$tmp/word.ids"))"; fi
else
  echo "skipped: the long word (data/cache/gpt2-tokenizer not fetched: bash data/fetch.sh gpt2-tokenizer)"
fi

# ---- the Python bindings -------------------------------------------------------------------------
if [[ -n $pypath ]]; then
  checks=$((checks + 1))
  if PYTHONPATH=$pypath timeout -s KILL 20 python3 - "$tmp/fifo" "$ckpt" >"$tmp/py.out" 2>&1 <<'EOF'
import sys, uwaga
fifo, ckpt = sys.argv[1], sys.argv[2]
for load in (uwaga.optim.read_checkpoint_info, uwaga.data.read_text_file):
    try:
        load(fifo)
    except RuntimeError as e:
        assert "is a FIFO (named pipe), not a regular file" in str(e), e
    else:
        raise SystemExit(f"{load.__name__} accepted a FIFO")
for path, cause in ((fifo, "is not a directory"), (fifo + "-missing", "does not exist")):
    try:
        uwaga.data.BpeTokenizer.load(path)
    except RuntimeError as e:
        assert f"the tokenizer directory '{path}' {cause}" in str(e), e
    else:
        raise SystemExit(f"BpeTokenizer.load accepted {path}")
import os
bpe = uwaga.data.BpeTokenizer.train("we are eating bread", 2)
tok = fifo + "-tokenizer"
os.makedirs(tok + "/encoder.json")  # a directory where the file should go
try:
    bpe.save(tok)
except RuntimeError as e:
    assert f"'{tok}/encoder.json' is a directory" in str(e), e
else:
    raise SystemExit("BpeTokenizer.save wrote over a directory")
assert os.path.isdir(tok + "/encoder.json")
os.rmdir(tok + "/encoder.json")
bpe.save(tok)
os.remove(tok + "/vocab.bpe")
try:
    uwaga.data.BpeTokenizer.load(tok)
except RuntimeError as e:
    assert f"the tokenizer file '{tok}/vocab.bpe': cannot open: No such file or directory" in str(e), e
else:
    raise SystemExit("BpeTokenizer.load read a tokenizer without vocab.bpe")
print("ok")
EOF
  then pass "python: a FIFO is refused by read_checkpoint_info and read_text_file; BpeTokenizer.load names why"
  else failed "python: $(cat "$tmp/py.out")"; fi
  # The readers of GPT-2's files: a FIFO blocked BpeTokenizer.load and load_gpt2; a GPT-2 too
  # large for the address space ended load_gpt2 in std::bad_alloc.
  checks=$((checks + 1))
  if PYTHONPATH=$pypath timeout -s KILL 20 python3 - "$tmp" "$sanitized" >"$tmp/py.out" 2>&1 <<'EOF'
import resource, sys, uwaga
tmp, sanitized = sys.argv[1], sys.argv[2] == "true"
def refused(call, want):
    try:
        call()
    except RuntimeError as e:
        assert want in str(e), e
    else:
        raise SystemExit(f"accepted: expected {want}")
refused(lambda: uwaga.data.BpeTokenizer.load(tmp + "/tok-fifo-encoder"), "is a FIFO (named pipe)")
refused(lambda: uwaga.data.BpeTokenizer.load(tmp + "/tok-fifo-vocab"), "is a FIFO (named pipe)")
refused(lambda: uwaga.data.BpeTokenizer.load(tmp + "/tok-zero-encoder"), "is a character device")
refused(lambda: uwaga.apps.load_gpt2(tmp + "/g2fifo/model.safetensors"), "config.json': is a FIFO")
refused(lambda: uwaga.apps.load_gpt2(tmp + "/g2nan/model.safetensors"), "holds NaN at index 5")
assert uwaga.apps.load_gpt2(tmp + "/g2/model.safetensors") is not None
if not sanitized:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))
    refused(lambda: uwaga.apps.load_gpt2(tmp + "/g2big/model.safetensors"),
            "of the address-space limit (ulimit -v)")
print("ok")
EOF
  then pass "python: BpeTokenizer.load and load_gpt2 refuse FIFOs, devices, NaN weights and a GPT-2 too large"
  else failed "python: $(cat "$tmp/py.out")"; fi
fi

echo "$checks checks, $failures failed"
((failures == 0))
