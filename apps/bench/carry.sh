#!/usr/bin/env bash
# Packs uwaga-bench builds with every library they load — glibc's loader and libc included — into
# one folder (default build-carry/, git-ignored), so that the benchmark scripts run unchanged on a
# machine that has none of uwaga's build dependencies (or an older glibc), e.g. a many-core server
# with only PyTorch installed:
#   bash apps/bench/carry.sh build-bench                     # → build-carry/apps/uwaga-bench
#   bash apps/bench/carry.sh build-old:old build-bench:new   # → build-carry/old/apps/uwaga-bench, …
#   tar -cJf build-carry.tar.xz build-carry                  # ≈ 10 MB: copy it with the repository
#   # there: tar -xf build-carry.tar.xz, then e.g.
#   BUILD_DIR=build-carry PYTHON=python3 BF16=1 THREADS="1 2 16" bash apps/bench/vit_speed.sh
# For such a machine build with its CPU's -march (e.g. -DUWAGA_NATIVE=OFF
# -DCMAKE_CXX_FLAGS=-march=sapphirerapids for Sapphire or Emerald Rapids): that is what a user
# building there gets from -march=native.
# Each argument is BUILD_DIR or BUILD_DIR:NAME (the binary then goes to OUT/NAME/apps/). The
# libraries are the ones `ldd` lists for the first binary; apps/uwaga-bench is a small sh script
# that starts the binary through the carried loader with the carried libraries only.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${CARRY_DIR:-build-carry}
(($#)) || set -- build-bench
die() { echo "carry.sh: $*" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/lib"
first=""
for spec in "$@"; do
  dir=${spec%%:*} name=""
  [[ $spec == *:* ]] && name=${spec#*:}
  bin=$dir/apps/uwaga-bench
  [[ -x $bin ]] || die "$bin not found (cmake --build $dir --target uwaga-bench)"
  first=${first:-$bin}
  dest=$out${name:+/$name}
  mkdir -p "$dest/apps"
  cp "$bin" "$out/lib/uwaga-bench${name:+-$name}.bin"
  # The relative path from the wrapper to lib/ ("../lib" or "../../lib").
  up=../lib
  [[ -n $name ]] && up=../../lib
  # uwaga-bench re-executes itself (/proc/self/exe) to set its OpenMP wait policy when neither
  # variable is set (apps/common/thread_policy.h); through the loader that would start the
  # loader, so the wrapper sets the idle machine's policy itself (the speed scripts set it anyway).
  cat >"$dest/apps/uwaga-bench" <<WRAP
#!/bin/sh
lib=\$(cd "\$(dirname "\$0")/$up" && pwd)
[ -n "\$OMP_WAIT_POLICY\$GOMP_SPINCOUNT" ] || export GOMP_SPINCOUNT=10000
exec "\$lib/ld-linux-x86-64.so.2" --library-path "\$lib" "\$lib/uwaga-bench${name:+-$name}.bin" "\$@"
WRAP
  chmod +x "$dest/apps/uwaga-bench"
done
ldd "$first" | awk '/=> \// {print $3} /^[[:space:]]*\/.*ld-linux/ {print $1}' | sort -u |
  while read -r lib; do cp -L "$lib" "$out/lib/"; done
[[ -f $out/lib/ld-linux-x86-64.so.2 ]] || die "no ld-linux-x86-64.so.2 among $first's libraries"
ls "$out/lib" | sed 's/^/  /' >&2
echo "carry.sh: $(du -sh "$out" | cut -f1) in $out; for the other machine: tar -cJf $out.tar.xz $out" >&2
