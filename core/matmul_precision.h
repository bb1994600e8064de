#pragma once
// The precision of the float32 matrix products, as PyTorch's bf16 autocast on a CPU has it: with
// MatmulPrecision::bfloat16 every float32 product that goes through gemm (core/matmul.h) — so
// linear (nn::Linear, GPT's tied LM head), matmul (attention's Q·Kᵀ and A·V on the readable
// path), the fused attention kernels' per-head products and the convolutions' im2col products,
// forward and both gradients — rounds its two operands to bfloat16 and sums in float32
// (core/bf16_gemm.h). Everything else stays float32: the weights and the optimizer's state (the
// "master" copies), LayerNorm, softmax, the loss, every reduction and elementwise op. bfloat16
// has float32's range, so no loss scaling is needed. float64 products (gradient checks) never
// change.
//
// Only on a CPU with AVX512-BF16 (bf16_gemm_path() == "avx512-bf16"): elsewhere, or with
// UWAGA_BF16_KERNEL=reference, the setting is kept but the products stay float32, bit for bit —
// bfloat16 through the float32 kernels would be no faster and only less precise.
//
// One setting for the whole process, not per thread as torch.autocast's: the threads of
// optim::DataParallel's replicas and of OpenMP's loops multiply for the thread that set it.
namespace uwaga {

enum class MatmulPrecision { float32, bfloat16 };

void set_matmul_precision(MatmulPrecision precision);
MatmulPrecision matmul_precision();

// Whether gemm<float> runs on bf16_gemm now: bfloat16 asked for and the CPU able to.
bool matmul_in_bfloat16();

// The precision for as long as it lives, then the one before it: the scope of a training run.
class MatmulPrecisionScope {
 public:
  explicit MatmulPrecisionScope(MatmulPrecision precision);
  ~MatmulPrecisionScope();
  MatmulPrecisionScope(const MatmulPrecisionScope&) = delete;
  MatmulPrecisionScope& operator=(const MatmulPrecisionScope&) = delete;

 private:
  MatmulPrecision previous_;
};

}  // namespace uwaga
