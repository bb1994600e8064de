#!/usr/bin/env bash
# Smoke test of uwaga-gpt on a small generated text (nothing to fetch): a few dozen steps of the
# "smoke" preset lower the loss; --resume continues; eval --json ends with a JSON line; sample
# writes the asked number of characters, the same with and without the cache and for the same
# seed; bad input exits 2 with a one-line message naming the flag or the characters.
#   bash tests/apps/gpt_smoke.sh BUILD/apps/uwaga-gpt
set -uo pipefail
bin=$1
source "$(dirname "$0")/smoke_lib.sh"

# A text with structure to learn: 4,000 lines of a few repeated verses.
text=$tmp/verses.txt
for i in $(seq 1 1000); do
  printf 'ROMEO: what light breaks there?\nJULIET: it is the east.\nROMEO: and juliet is the sun.\nJULIET: arise, fair sun.\n'
done >"$text"

# 1. Forty steps lower the loss and write a checkpoint.
if "$bin" train --preset smoke --text "$text" --threads 2 --log-every 5 --out "$tmp/run" >"$tmp/train.out" 2>&1; then
  first=$(step_loss first)
  last=$(step_loss last)
  awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 1.0) }' &&
    pass "train: loss fell from $first to $last in 40 steps" || failed "train: loss did not fall enough ($first -> $last)"
  [[ -f $tmp/run/checkpoint.safetensors ]] && pass "train: checkpoint written" || failed "train: no checkpoint"
  grep -q "params" "$tmp/train.out" && pass "train: summary printed" || failed "train: no summary"
else
  failed "train exited with $?"; cat "$tmp/train.out"
fi
ckpt=$tmp/run/checkpoint.safetensors

# 2. --resume continues to more epochs.
if "$bin" train --out "$tmp/run" --resume --epochs 3 --threads 2 --log-every 5 >"$tmp/resume.out" 2>&1; then
  grep -q '"type":"resume"' "$tmp/run/log.jsonl" && grep -q '"step":60' "$tmp/run/log.jsonl" &&
    pass "resume: continued from step 40 to 60" || failed "resume: no resume record or step 60 in the log"
else
  failed "resume exited with $?"; cat "$tmp/resume.out"
fi

# 2b. --grad-accum 2 of --batch-size 4 is the step of --batch-size 8 taken 4 windows a pass: the
# same windows, losses and weights bit for bit (one thread); a resume cannot change it.
compare=$(dirname "$0")/../../apps/bench/compare_checkpoints.py
if "$bin" train --preset smoke --text "$text" --threads 1 --max-steps 6 --batch-size 8 \
       --micro-batch 4 --out "$tmp/b8" >"$tmp/b8.out" 2>&1 &&
   "$bin" train --preset smoke --text "$text" --threads 1 --max-steps 6 --batch-size 4 \
       --grad-accum 2 --out "$tmp/a2" >"$tmp/a2.out" 2>&1; then
  grep -q "accumulate the gradients of 2 batches of 4 windows a step (8 windows)" "$tmp/a2.out" &&
    pass "grad-accum: the summary names the accumulation" || failed "grad-accum: no summary line"
  /usr/bin/python3 "$compare" "$tmp/b8" "$tmp/a2" >"$tmp/cmp.out" 2>&1 &&
    pass "grad-accum: 2 x 4 windows trains as 8 windows in passes of 4, bit for bit" ||
    { failed "grad-accum: differs from --batch-size 8 --micro-batch 4"; cat "$tmp/cmp.out"; }
else
  failed "grad-accum runs exited with $?"; cat "$tmp/b8.out" "$tmp/a2.out"
fi
expect_error "grad_accum = 2 and the flags ask for 4" train --out "$tmp/a2" --resume --grad-accum 4
expect_error "--grad-accum must be from 1" train --preset smoke --text "$text" --grad-accum 0 --out "$tmp/a0"

# 2c. --precision bf16: the run records it, and a resume keeps it. Without AVX512-BF16 (forced here
# by UWAGA_BF16_KERNEL=reference) it says so in one line and trains as fp32 does, bit for bit;
# with it (this CPU permitting) the products round to bfloat16 and the weights differ a little.
precision_of() {  # the run configuration's precision, from the checkpoint's metadata
  /usr/bin/python3 -c 'import json, struct, sys
f = open(sys.argv[1] + "/checkpoint.safetensors", "rb")
meta = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))["__metadata__"]
print(next(json.loads(v)["precision"] for v in meta.values() if v.startswith("{") and "precision" in v))' "$1"
}
small_run=(train --preset smoke --text "$text" --threads 1 --max-steps 6 --log-every 1)
if "$bin" "${small_run[@]}" --out "$tmp/p32" >"$tmp/p32.out" 2>&1 &&
   UWAGA_BF16_KERNEL=reference "$bin" "${small_run[@]}" --precision bf16 --out "$tmp/pref" \
       >"$tmp/pref.out" 2>&1 &&
   "$bin" "${small_run[@]}" --precision bf16 --out "$tmp/p16" >"$tmp/p16.out" 2>&1; then
  [[ $(precision_of "$tmp/p32") == fp32 && $(precision_of "$tmp/p16") == bf16 ]] &&
    pass "precision: the run configuration records fp32 and bf16" ||
    failed "precision: the checkpoints record $(precision_of "$tmp/p32"), $(precision_of "$tmp/p16")"
  [[ $(grep -c -- "--precision bf16" "$tmp/pref.out") -eq 1 ]] &&
    grep -qF -- "--precision bf16: UWAGA_BF16_KERNEL=reference asks for no AVX512-BF16; training in float32" "$tmp/pref.out" &&
    pass "precision: without AVX512-BF16, one line says it trains in float32" ||
    { failed "precision: no one line about float32"; cat "$tmp/pref.out"; }
  /usr/bin/python3 "$compare" "$tmp/p32" "$tmp/pref" >"$tmp/cmp.out" 2>&1 &&
    pass "precision: bf16 without AVX512-BF16 trains as fp32, bit for bit" ||
    { failed "precision: bf16 without AVX512-BF16 differs from fp32"; cat "$tmp/cmp.out"; }
  if grep -q "precision *bf16 matrix products" "$tmp/p16.out"; then
    if /usr/bin/python3 "$compare" "$tmp/p32" "$tmp/p16" >"$tmp/cmp.out" 2>&1; then
      failed "precision: bf16 trained the same weights as fp32 (were the products bfloat16?)"
    else
      pass "precision: bf16 products (AVX512-BF16) trained slightly different weights"
    fi
  else
    grep -q -- "--precision bf16: this CPU has no AVX512-BF16" "$tmp/p16.out" &&
      pass "precision: this CPU has no AVX512-BF16, said in one line" ||
      { failed "precision: neither the bf16 summary line nor the float32 line"; cat "$tmp/p16.out"; }
  fi
else
  failed "precision runs exited with $?"; cat "$tmp/p32.out" "$tmp/pref.out" "$tmp/p16.out"
fi
expect_error 'precision = "bf16" and the flags ask for "fp32"' train --out "$tmp/p16" --resume --precision fp32
expect_error "--precision must be fp32 or bf16, got 'fp16'" train --preset smoke --text "$text" --precision fp16 --out "$tmp/p0"

# 3. eval --json: bits per character is the loss over ln 2.
if "$bin" eval --checkpoint "$ckpt" --json >"$tmp/eval.out" 2>&1; then
  json=$(tail -1 "$tmp/eval.out")
  python3 -c 'import json, math, sys
j = json.loads(sys.argv[1])
assert 0 < j["loss"] < 5 and abs(j["bits_per_character"] - j["loss"] / math.log(2)) < 1e-9, j
assert abs(j["perplexity"] - math.exp(j["loss"])) < 1e-6 * j["perplexity"], j' "$json" &&
    pass "eval --json: $json" || failed "eval --json: last line is not the expected JSON: $json"
else
  failed "eval exited with $?"; cat "$tmp/eval.out"
fi

# 4. sample: the prompt and 100 characters; cache or not, the same text; the same seed, the same.
sample() { "$bin" sample --checkpoint "$ckpt" --prompt "ROMEO:" --tokens 100 --top-k 10 --top-p 0.9 "$@"; }
if sample --seed 3 >"$tmp/a.out" 2>"$tmp/a.err" && sample --seed 3 --no-cache >"$tmp/b.out" 2>&1 &&
   sample --seed 3 >"$tmp/c.out" 2>&1; then
  chars=$(head -c -1 "$tmp/a.out" | wc -c)  # without the final newline
  [[ $chars -eq 106 ]] && pass "sample: prompt + 100 characters" || failed "sample: $chars characters written"
  cmp -s "$tmp/a.out" "$tmp/b.out" && pass "sample: --no-cache writes the same text" || failed "sample: cache and no cache differ"
  cmp -s "$tmp/a.out" "$tmp/c.out" && pass "sample: same seed, same text" || failed "sample: same seed, different text"
else
  failed "sample exited with $?"; cat "$tmp/a.err"
fi

# 4b. attention: an SVG of the causal attention over the prompt's characters, the mean and each
# of the 1 x 2 heads, on one colour scale with a legend; explore: the same in one HTML page.
if "$bin" attention --checkpoint "$ckpt" --prompt "ROMEO: what" --out "$tmp/att.svg" >"$tmp/att.out" 2>&1; then
  grep -q "layer 1, head 2" "$tmp/att.svg" && grep -q "one scale for every map" "$tmp/att.svg" &&
    [[ $(grep -c ">E<" "$tmp/att.svg") -ge 3 ]] && pass "attention: $(cat "$tmp/att.out")" ||
    failed "attention: the SVG lacks its maps or labels"
else
  failed "attention exited with $?: $(cat "$tmp/att.out")"
fi
"$bin" explore --checkpoint "$ckpt" --prompt "ROMEO: what" --out "$tmp/explore.html" >"$tmp/explore.out" 2>&1 &&
  grep -q '"token_view":true' "$tmp/explore.html" && pass "explore: $(cat "$tmp/explore.out")" ||
  failed "explore: $(cat "$tmp/explore.out")"

# 5. Bad input: exit 2, one line naming the flag or the characters.
expect_error "'Z', '@'" sample --checkpoint "$ckpt" --prompt "ROMZO@"
expect_error "--tokens" sample --checkpoint "$ckpt" --tokens 0
expect_error "--temperature" sample --checkpoint "$ckpt" --temperature -1
expect_error "--top-k" sample --checkpoint "$ckpt" --top-k 0
expect_error "--top-k" sample --checkpoint "$ckpt" --top-k 1000
expect_error "--top-p" sample --checkpoint "$ckpt" --top-p 0
expect_error "--top-p" sample --checkpoint "$ckpt" --top-p 1.5
expect_error "'Z', '@'" explore --checkpoint "$ckpt" --prompt "ROMZO@" --out "$tmp/x.html"
expect_error "--prompt has 19 characters; the model reads at most its context of 16" attention --checkpoint "$ckpt" --prompt "ROMEO: what light b" --out "$tmp/x.svg"
expect_error "--prompt TEXT is required" explore --checkpoint "$ckpt" --out "$tmp/x.html"
expect_error "missing.txt" train --preset smoke --text "$tmp/missing.txt" --out "$tmp/r2"
head -c 20 "$text" >"$tmp/short.txt"
expect_error "--context 16" train --preset smoke --text "$tmp/short.txt" --out "$tmp/r3"
expect_error "unknown preset" train --preset nope --out "$tmp/r4"

# 6. Byte-pair tokens: --tokenizer bpe:64 learns 64 merges from the training text and trains on
# them; eval reports bits per character from the bytes its tokens spell; sample and tokenize use
# the checkpoint's vocabulary.
if "$bin" train --preset smoke --tokenizer bpe:64 --text "$text" --threads 2 --log-every 5 --out "$tmp/bpe" \
     >"$tmp/bpe.out" 2>&1; then
  # At most 256 + 64 tokens: merging stops early once every piece of this text is one token.
  grep -qE "tokens of a bpe:64 vocabulary of (2[6-9][0-9]|3[01][0-9]|320)$" "$tmp/bpe.out" &&
    pass "train --tokenizer bpe:64: $(grep -o 'vocabulary of [0-9]*' "$tmp/bpe.out")" ||
    failed "train --tokenizer bpe:64: no summary line: $(grep data "$tmp/bpe.out")"
  json=$("$bin" eval --checkpoint "$tmp/bpe/checkpoint.safetensors" --json 2>&1 | tail -1)
  python3 -c 'import json, math, sys
j = json.loads(sys.argv[1])
assert j["bytes"] > 2 * j["characters"], j  # a token spells more than one character
assert abs(j["bits_per_character"] - j["loss"] * j["characters"] / (j["bytes"] * math.log(2))) < 1e-9, j' "$json" &&
    pass "eval of a BPE run: $json" || failed "eval of a BPE run: $json"
  out=$("$bin" sample --checkpoint "$tmp/bpe/checkpoint.safetensors" --prompt "ROMEO:" --tokens 20 2>&1)
  [[ $out == ROMEO:* && ${#out} -gt 30 ]] && pass "sample of a BPE run: ${out:0:40}..." || failed "sample of a BPE run: $out"
  ids=$(printf 'JULIET: arise' | "$bin" tokenize --tokenizer "$tmp/bpe/checkpoint.safetensors")
  back=$(echo "$ids" | "$bin" tokenize --tokenizer "$tmp/bpe/checkpoint.safetensors" --decode)
  [[ $back == "JULIET: arise" && $(wc -w <<<"$ids") -lt 13 ]] && pass "tokenize: '$ids' and back" ||
    failed "tokenize: '$ids' -> '$back'"
else
  failed "train --tokenizer bpe:64 exited with $?"; cat "$tmp/bpe.out"
fi
expect_error "--tokenizer must be char or bpe:N" train --preset smoke --tokenizer bpe:x --text "$text" --out "$tmp/r5"
expect_error "--tokenizer 'nowhere' does not exist" tokenize --tokenizer nowhere
out=$(echo "1 99999" | "$bin" tokenize --tokenizer "$tmp/bpe/checkpoint.safetensors" --decode 2>&1)
rc=$?
[[ $rc -eq 2 && $out == *"'99999' is not a token id from 0 to "* ]] && pass "error: $out" ||
  failed "tokenize --decode of a bad id exited $rc with: $out"

# 7. GPT-2: a small one written by PyTorch in Hugging Face's layout (tests/nn/gpt2_torch_reference.py)
# with GPT-2's tokenizer (data/fetch.sh gpt2-tokenizer): sample, eval, explore, tokenize.
root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ ! -f $root/data/cache/gpt2-tokenizer/encoder.json ]]; then
  echo "skipped: GPT-2 (data/cache/gpt2-tokenizer not fetched: bash data/fetch.sh gpt2-tokenizer)"
elif ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "skipped: GPT-2 (/usr/bin/python3 has no torch to write the test model)"
else
  /usr/bin/python3 "$root/tests/nn/gpt2_torch_reference.py" "$tmp/g2" >/dev/null
  g2=$tmp/g2/model.safetensors
  tok=$root/data/cache/gpt2-tokenizer
  out=$("$bin" sample --checkpoint "$g2" --tokenizer "$tok" --prompt "Hello, my dog is a" --tokens 10 --temperature 0 2>&1)
  [[ $out == "Hello, my dog is a"* ]] && pass "GPT-2 sample: ${out:0:60}" || failed "GPT-2 sample: $out"
  "$bin" eval --checkpoint "$g2" --tokenizer "$tok" --text "$text" --eval-windows 2 --json >"$tmp/g2eval.out" 2>&1 &&
    python3 -c 'import json, math, sys; j = json.loads(sys.argv[1]); assert j["characters"] == 2 * 1024 and 9 < j["loss"] < 13, j' \
      "$(tail -1 "$tmp/g2eval.out")" && pass "GPT-2 eval: $(tail -1 "$tmp/g2eval.out")" || failed "GPT-2 eval: $(cat "$tmp/g2eval.out")"
  "$bin" explore --checkpoint "$g2" --tokenizer "$tok" --prompt "Hello world, it's me" --out "$tmp/g2.html" >"$tmp/g2x.out" 2>&1 &&
    grep -q '␣world' "$tmp/g2.html" && pass "GPT-2 explore: $(cat "$tmp/g2x.out")" || failed "GPT-2 explore: $(cat "$tmp/g2x.out")"
  ids=$(printf 'Hello world' | "$bin" tokenize --tokenizer "$tok")
  [[ $ids == "15496 995" ]] && pass "tokenize --tokenizer DIR: $ids" || failed "tokenize: $ids"
  # A vocabulary of 256 tokens beside a checkpoint whose embedding has 50,257 rows.
  mkdir -p "$tmp/tok256"
  python3 -c 'import json, sys
bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256)); cs = bs[:]
for b in range(256):
    if b not in bs: bs.append(b); cs.append(256 + len(cs) - 188)
json.dump({chr(c): i for i, c in enumerate(cs)}, open(sys.argv[1] + "/encoder.json", "w"))
open(sys.argv[1] + "/vocab.bpe", "w").write("#version: 0.2\n")' "$tmp/tok256"
  expect_error "has 256 tokens, but the embedding of" sample --checkpoint "$g2" --tokenizer "$tmp/tok256"
  mkdir -p "$tmp/tokbad"; cp "$tmp/tok256/vocab.bpe" "$tmp/tokbad/"
  echo '{"a": 0' >"$tmp/tokbad/encoder.json"
  expect_error "encoder.json' is not valid JSON" sample --checkpoint "$g2" --tokenizer "$tmp/tokbad"
  expect_error "carries no tokenizer" sample --checkpoint "$g2"
  expect_error "is a uwaga-gpt checkpoint, which carries its own" sample --checkpoint "$ckpt" --tokenizer "$tok"
  expect_error "the model reads at most its context of 1024" sample --checkpoint "$g2" --tokenizer "$tok" --prompt "$(printf 'a %.0s' $(seq 1 1100))"

  # 8. Fine-tuning it: the gpt2-shakespeare preset cut to 4 steps; the run records the file; its
  # checkpoint carries GPT-2's tokenizer; export writes Hugging Face's files back, which score
  # the same loss; a resume names a changed --init; contradictions are refused.
  ft=(train --preset gpt2-shakespeare --init "$g2" --tokenizer "$tok" --text "$text" --threads 2
      --epochs 2 --steps-per-epoch 2 --eval-windows 2 --sample-every 2 --log-every 1)
  if "$bin" "${ft[@]}" --out "$tmp/ft" >"$tmp/ft.out" 2>&1; then
    grep -q "sample after step 2:" "$tmp/ft.out" && grep -q "init .*model.safetensors" "$tmp/ft.out" &&
      pass "fine-tune: 4 steps from GPT-2, a sample, the init file named" ||
      { failed "fine-tune: no sample or init line"; head -12 "$tmp/ft.out"; }
    start=$(head -1 "$tmp/ft/log.jsonl")
    (( ${#start} < 20000 )) && [[ $start == *'"tokens":50257'* ]] &&
      pass "fine-tune: the log's first record gives the tokenizer's size, not its tables (${#start} bytes)" ||
      failed "fine-tune: the log's first record is ${#start} bytes"
    sha=$(sha256sum "$g2" | cut -c1-64)
    grep -q "$sha" "$tmp/ft/run.json" 2>/dev/null || grep -aq "$sha" "$tmp/ft/checkpoint.safetensors" &&
      pass "fine-tune: the run records the SHA-256 of --init" || failed "fine-tune: no SHA-256 of --init recorded"
    a=$("$bin" eval --checkpoint "$tmp/ft/checkpoint.safetensors" --text "$text" --eval-windows 3 --json 2>&1 | tail -1)
    "$bin" export --checkpoint "$tmp/ft/checkpoint.safetensors" --hf "$tmp/ft/hf" >"$tmp/export.out" 2>&1
    b=$("$bin" eval --checkpoint "$tmp/ft/hf/model.safetensors" --tokenizer "$tmp/ft/hf" --window 64 --text "$text" --eval-windows 3 --json 2>&1 | tail -1)
    [[ -n $a && $a == "$b" && $a == *'"loss"'* ]] && pass "export: the Hugging Face files score as the checkpoint: $b" ||
      failed "export: checkpoint $a, exported $b ($(cat "$tmp/export.out"))"
    cp "$g2" "$tmp/g2copy.safetensors"; cp "$tmp/g2/config.json" "$tmp/config.json"
    printf 'x' >>"$tmp/g2copy.safetensors"
    expect_error "init" train --out "$tmp/ft" --resume --init "$tmp/g2copy.safetensors" --tokenizer "$tok"
  else
    failed "fine-tune exited with $?"; cat "$tmp/ft.out"
  fi
  expect_error "fine-tunes GPT-2: give --init" train --preset gpt2-shakespeare --text "$text" --out "$tmp/ft2"
  expect_error "--dim 128 contradicts --init" "${ft[@]}" --dim 128 --out "$tmp/ft3"
  expect_error "has 256 tokens, but the embedding of --init" train --preset gpt2-shakespeare --init "$g2" --tokenizer "$tmp/tok256" --text "$text" --out "$tmp/ft4"
  expect_error "is a uwaga-gpt checkpoint, which carries its own" train --init "$ckpt" --tokenizer "$tok" --text "$text" --out "$tmp/ft5"
  expect_error "not a safetensors file" train --init "$text" --text "$text" --out "$tmp/ft6"
fi

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all passed"
