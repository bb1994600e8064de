// uwaga runs OpenBLAS's AVX-512 kernels on a CPU that has AVX-512 (and the AVX2 ones on one with
// AVX2), whatever core OpenBLAS picked when it loaded or OPENBLAS_CORETYPE named — unless
// UWAGA_OPENBLAS_CORE says otherwise; and where that core has no small-matrix kernels, the small
// products run on uwaga's own (core/small_gemm.h).
#include <catch2/catch.hpp>
#include <cstdlib>

#include "core/blas_kernels.h"
#include "core/matmul.h"
#include "core/threads.h"

using namespace uwaga;

TEST_CASE("blas kernels: the best of OpenBLAS's cores for this CPU runs the products",
          "[blas_kernels]") {
  init_threads();
  const std::string core = blas_core();
  INFO("OpenBLAS loaded " << blas_core_at_load() << ", now " << core << "; " << blas_config());
  CHECK_FALSE(core.empty());
  if (const char* forced = std::getenv("UWAGA_OPENBLAS_CORE"); forced && *forced) return;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    CHECK((core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids"));
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    CHECK(core == "Haswell");
  // The products still compute: (2×3)·(3×2).
  const Tensor a = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = Tensor::from_vector({1, 0, 0, 1, 1, 1}, {3, 2});
  CHECK(matmul(a, b).to_vector() == std::vector<double>{4, 5, 10, 11});
}

TEST_CASE("blas kernels: small products run on uwaga's kernel where OpenBLAS's core has none",
          "[blas_kernels]") {
  init_threads();
  if (const char* forced = std::getenv("UWAGA_GEMM_KERNEL"); forced && *forced) return;
  INFO("OpenBLAS core " << blas_core());
  const bool openblas_small = blas_core() == "SkylakeX" || blas_core() == "Cooperlake" ||
                              blas_core() == "SapphireRapids";
  CHECK(blas_has_small_kernels() == openblas_small);
  CHECK(gemm_kernel() == (openblas_small ? GemmKernel::openblas : GemmKernel::uwaga));
}
