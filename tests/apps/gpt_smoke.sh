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

if ((failures)); then echo "$failures failure(s)"; exit 1; fi
echo "all passed"
