#!/usr/bin/env bash
# data/fetch.sh on bad input, without the network: every case must fail with a message naming
# what is wrong and leave no file under a dataset's name.
set -uo pipefail
fetch="$(cd "$(dirname "$0")/../.." && pwd)/data/fetch.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "ok: $*"; }
failed() { echo "FAILED: $*"; fails=$((fails + 1)); }

expect_error() {  # expected-text, then the arguments
  local text=$1; shift
  bash "$fetch" "$@" >"$tmp/out" 2>&1
  local status=$?
  if [[ $status -ne 0 ]] && grep -q -- "$text" "$tmp/out"; then
    pass "exit $status for: $* -> $(tail -1 "$tmp/out")"
  else
    failed "expected an error with '$text' for: $* (got $status: $(cat "$tmp/out"))"
  fi
}

expect_error "--from needs a directory" cifar10 "$tmp/c" --from ""
expect_error "--from needs a directory" cifar10 "$tmp/c" --from=
expect_error "an empty argument" mnist ""
expect_error "unknown dataset 'imagenet'" imagenet
expect_error "--from is only for cifar10" mnist --from "$tmp"

# A batch of the right size but not the official bytes (every label 255) is refused by its
# SHA-256, whatever lists the source carries, and nothing is installed.
mkdir -p "$tmp/src"
head -c 30730000 /dev/zero | tr '\0' '\377' >"$tmp/src/data_batch_1.bin"
printf 'deadbeef  data_batch_1.bin\r\n' >"$tmp/src/SHA256SUMS"
expect_error "the official data_batch_1.bin has 41b9a102" cifar10 "$tmp/c" --from "$tmp/src"
if [[ -z "$(ls "$tmp/c")" ]]; then pass "nothing installed after the refusal"; else
  failed "files left in $tmp/c: $(ls -a "$tmp/c")"; fi

# A destination that cannot be written fails before any download (root writes anywhere, so the
# check runs only for other users).
if [[ $(id -u) -ne 0 ]]; then
  mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
  expect_error "cannot write to $tmp/ro" mnist "$tmp/ro"
fi

((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
