#include "core/matmul_precision.h"

#include <atomic>

#include "core/bfloat16.h"

namespace uwaga {
namespace {
std::atomic<MatmulPrecision> the_precision{MatmulPrecision::float32};
}  // namespace

void set_matmul_precision(MatmulPrecision p) { the_precision.store(p, std::memory_order_relaxed); }

MatmulPrecision matmul_precision() { return the_precision.load(std::memory_order_relaxed); }

bool matmul_in_bfloat16() {
  // cpu_has_avx512_bf16 reads the CPU and UWAGA_BF16_KERNEL once: bf16_gemm_path()'s answer.
  return matmul_precision() == MatmulPrecision::bfloat16 && cpu_has_avx512_bf16();
}

MatmulPrecisionScope::MatmulPrecisionScope(MatmulPrecision p) : previous_(matmul_precision()) {
  set_matmul_precision(p);
}

MatmulPrecisionScope::~MatmulPrecisionScope() { set_matmul_precision(previous_); }

}  // namespace uwaga
