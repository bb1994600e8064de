#!/usr/bin/env bash
# The README's gdb table, run as written: uwaga-walkthrough-gdb (the walkthrough and the library
# files its steps enter, built -O0 -g) in gdb batch mode with core/gdb/uwaga_gdb.py loaded. Checks
# that the Tensor pretty-printer prints the values the program prints, that `step` lands in uwaga's
# code (not in std::, Tensor's accessors or glibc), and that every breakpoint of the table is
# reached. Skipped (exit 77) without gdb or when ptrace is not allowed here.
#   bash tests/apps/walkthrough_gdb.sh build/apps/uwaga-walkthrough-gdb
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
program=$1
command -v gdb >/dev/null || { echo "SKIP: gdb is not installed (apt-get install gdb)"; exit 77; }
failures=0

# gdb in batch mode: the walkthrough's part $1, then the gdb commands that follow.
run_gdb() {
  local part=$1
  shift
  local args=()
  for c in "$@"; do args+=(-ex "$c"); done
  (cd "$root" && timeout 120 gdb -batch -nx -x core/gdb/uwaga_gdb.py "${args[@]}" \
     --args "$program" --part "$part" 2>&1)
}

expect() {  # expect NAME TEXT PATTERN: PATTERN (grep -E) must occur in TEXT
  if grep -qE -- "$3" <<<"$2"; then
    echo "ok    $1"
  else
    echo "FAIL  $1: no match for /$3/ in gdb's output:"
    tail -25 <<<"$2" | sed 's/^/      /'
    failures=$((failures + 1))
  fi
}

probe=$(run_gdb 1 'break main' run)
if grep -qE "ptrace: Operation not permitted|Couldn't get registers|not in executable format" \
    <<<"$probe"; then
  echo "SKIP: gdb cannot run programs here:"; grep -m1 -E "ptrace|registers|format" <<<"$probe"
  exit 77
fi

# The first value of E and of Q as the program prints them (4 decimals): gdb must agree.
printout=$("$program" --part 1)
e00=$(grep -A2 '^E (4, 4)' <<<"$printout" | awk 'NR == 3 {print $2}')
q00=$(grep -A2 '^Q (4, 4)' <<<"$printout" | awk 'NR == 3 {print $2}')
round4() { python3 -c "print(f'{float(\"$1\"):.4f}')"; }
first_value() { grep -oE '^\$[0-9]+ = Tensor \([0-9, ]+\) float64 \[[^],]+' <<<"$1" | head -1 |
                sed 's/.*\[//'; }

out=$(run_gdb 1 'break uwaga::walkthrough::queries_keys_values' run finish 'p s.Q')
expect "queries_keys_values: finish, p s.Q is the pretty-printed (4, 4) Q" "$out" \
  '^\$1 = Tensor \(4, 4\) float64 \['
got=$(first_value "$out")
[[ -n $got && $(round4 "$got") == "$q00" ]] && echo "ok    p s.Q's first value $got is the printed $q00" ||
  { echo "FAIL  p s.Q's first value '$got' is not the printed $q00"; failures=$((failures + 1)); }

out=$(run_gdb 1 'break uwaga::walkthrough::alignment_scores' run step step 'bt 1' finish step step 'bt 1')
expect "alignment_scores: s lands in uwaga::transpose (core/shape_ops.cpp)" "$out" \
  '^#0 +uwaga::transpose .* at .*core/shape_ops.cpp'
expect "alignment_scores: then in uwaga::matmul (core/matmul.cpp)" "$out" \
  '^#0 +uwaga::matmul .* at .*core/matmul.cpp'
if grep -qE '^#0 +(std::|uwaga::Tensor::size|__)' <<<"$out"; then
  echo "FAIL  step stopped in std::, Tensor::size or glibc despite the skip rules"
  failures=$((failures + 1))
else
  echo "ok    no step stopped in std::, Tensor's accessors or glibc"
fi

out=$(run_gdb 1 'break uwaga::walkthrough::attention_weights' run 'p s.E' next 'p s.A')
got=$(first_value "$out")
[[ -n $got && $(round4 "$got") == "$e00" ]] && echo "ok    p s.E's first value $got is the printed $e00" ||
  { echo "FAIL  p s.E's first value '$got' is not the printed $e00"; failures=$((failures + 1)); }
expect "attention_weights: next, p s.A shows the softmax" "$out" \
  '^\$2 = Tensor \(4, 4\) float64 .*grad_fn=softmax'
# prows prints a matrix row by row: four rows [0] to [3] of four values each.
out=$(run_gdb 1 'break uwaga::walkthrough::attention_weights' run 'prows s.E')
rows=$(awk '/^Tensor \(4, 4\)/ {on = 1; next} on && /^  \[[0-9]\]/ {print; next} {on = 0}' \
       <<<"$out")
if [[ $(wc -l <<<"$rows") -eq 4 && $(awk '{print NF}' <<<"$rows" | sort -u) == 5 ]]; then
  echo "ok    prows s.E prints its 4 rows of 4 values, labelled [0] to [3]"
else
  echo "FAIL  prows s.E does not print 4 rows of 4 values:"; sed 's/^/      /' <<<"$out" | tail -12
  failures=$((failures + 1))
fi

out=$(run_gdb 1 'break uwaga::nn::softmax_rows_forward<double>' run 'info args' 'p *x@n')
expect "softmax_rows_forward<double>: info args shows rows and n" "$out" '^rows = [0-9]+'
expect "softmax_rows_forward<double>: p *x@n is one row of scores" "$out" '^\$1 = \{-?[0-9.]+, '

out=$(run_gdb 1 'break uwaga::nn::scaled_dot_product_attention' run 'bt 2')
expect "scaled_dot_product_attention: reached from SelfAttention::forward" "$out" \
  'uwaga::nn::scaled_dot_product_attention'

out=$(run_gdb 2 'break uwaga::nn::attention_heads' run 'p qkv' 'prows qkv')
expect "attention_heads: p qkv is (B, T, 3*h*d_k) = (1, 4, 24)" "$out" \
  '^\$1 = Tensor \(1, 4, 24\) float64'
expect "attention_heads: prows labels a 3-D tensor's rows by their leading indices" "$out" \
  '^  \[0, 3\] +-?[0-9]'

# A leaf's gradient after backward: in part 4, once autograd has run, W_Q's .grad is dW_Q as the
# program prints it.
printout=$("$program" --part 4)
dwq00=$(grep -A2 '^dW_Q (8, 4)' <<<"$printout" | awk 'NR == 3 {print $2}')
out=$(run_gdb 4 'break uwaga::walkthrough::check_against_autograd' run up 'p layer.W_Q' 'prows layer.W_Q')
expect "check_against_autograd: up, p layer.W_Q shows requires_grad and its grad" "$out" \
  '^\$1 = Tensor \(8, 4\) float64 .*requires_grad grad=\['
expect "check_against_autograd: prows layer.W_Q shows its grad row by row" "$out" \
  '^grad: Tensor \(8, 4\) float64'
got=$(grep -oE 'requires_grad grad=\[[^],]+' <<<"$out" | head -1 | sed 's/.*\[//')
[[ -n $got && $(round4 "$got") == "$dwq00" ]] &&
  echo "ok    p layer.W_Q's grad starts with $got, the printed dW_Q[0][0] $dwq00" ||
  { echo "FAIL  p layer.W_Q's grad starts with '$got', not the printed dW_Q[0][0] $dwq00"
    failures=$((failures + 1)); }

if ((failures)); then echo "walkthrough_gdb: $failures failure(s)"; exit 1; fi
echo "walkthrough_gdb: the README's gdb table works as written"
