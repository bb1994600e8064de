# Sourced by the programs' smoke tests (tests/apps/*_smoke.sh), after `bin` is set: a temporary
# directory ($tmp, removed on exit), the pass/failed tally ($failures), and the checks they share.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
pass() { echo "ok: $1"; }
failed() { echo "FAIL: $1"; failures=$((failures + 1)); }

# first|last: the loss of the first or last step record of $tmp/run/log.jsonl.
step_loss() {
  grep '"type":"step"' "$tmp/run/log.jsonl" | "$([[ $1 == first ]] && echo head || echo tail)" -1 |
    grep -o '"loss":[-0-9.e]*' | cut -d: -f2
}

# expected-text, then the program's arguments: bad input must exit 2 with one line of message
# that contains the text (as it is, not a pattern).
expect_error() {
  local want=$1; shift
  "$bin" "$@" >"$tmp/err.out" 2>&1 </dev/null
  local rc=$?
  if [[ $rc -eq 2 && $(grep -c . "$tmp/err.out") -eq 1 ]] && grep -qF -- "$want" "$tmp/err.out"; then
    pass "error: $(cat "$tmp/err.out")"
  else
    failed "'$*' exited $rc with: $(cat "$tmp/err.out") (expected one line with '$want')"
  fi
}
