#pragma once
// Which of OpenBLAS's kernels uwaga's matrix products run on.
//
// Debian's OpenBLAS is built for every x86 core at once and picks its kernels when it loads: from
// the CPU's model, or from the environment variable OPENBLAS_CORETYPE. Either can pick badly for
// uwaga's many small products. OpenBLAS 0.3.21 (Debian bookworm's) recognises no Intel model
// newer than its release — on an Emerald Rapids server (family 6, model 207) it falls through to
// "Prescott", SSE3 kernels without a small-matrix path, and trains 3–6× slower (a missing break in
// get_coretype(), driver/others/dynamic.c; fixed in 0.3.25). Its "Haswell" and "Zen" cores have
// no small-matrix kernels either, which core/matmul.cpp's pieces of at most 100³ multiply-adds are
// made for (1.7× slower training on an AVX-512 machine set to Haswell).
//
// So uwaga chooses: on a CPU with AVX-512 it runs OpenBLAS's SkylakeX kernels (Cooperlake's are
// the same for float products), on one with AVX2 and FMA the Haswell ones, by re-initialising
// OpenBLAS's kernel table once, before the first product (gotoblas_dynamic_quit / _init, which
// DYNAMIC_ARCH builds export). UWAGA_OPENBLAS_CORE overrides the choice: "keep" leaves OpenBLAS's
// own, a core name ("Haswell", "SkylakeX", …) forces that one.
#include <string>

namespace uwaga {

// Makes the choice (once; later calls do nothing). init_threads() calls it, before any product.
void choose_blas_kernels();

// OpenBLAS's core now, e.g. "SkylakeX", and what it was when the library loaded.
std::string blas_core();
std::string blas_core_at_load();
// Whether OpenBLAS's core now has small-matrix kernels for float products (in 0.3.21: SkylakeX
// and the cores that share its kernels); where it has none, gemm runs the small products on
// uwaga's own kernel by default (core/matmul.h).
bool blas_has_small_kernels();
// OpenBLAS's build configuration ("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64").
std::string blas_config();

}  // namespace uwaga
