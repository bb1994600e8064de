#include "nn/attention_rollout.h"

#include "core/elementwise.h"
#include "core/graph.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/shape_ops.h"

namespace uwaga::nn {

namespace {
void check_map(const Tensor& A, const char* op) {
  check_float(A, op);
  if (A.dim() != 4 || A.size(2) != A.size(3))
    fail(op, ": attention map ", shape_str(A.shape()), " should be (B, heads, T, T)");
}
}  // namespace

Tensor class_token_attention(const Tensor& A) {
  check_map(A, "class_token_attention");
  NoGradGuard no_grad;
  Tensor mean_heads = mean(A, {1});                      // (B, T, T)
  Tensor cls_row = squeeze(slice(mean_heads, 1, 0, 1), 1);  // (B, T)
  return slice(cls_row, 1, 1, A.size(3));                // (B, T−1): patches only
}

Tensor attention_rollout(const std::vector<Tensor>& maps) {
  if (maps.empty()) fail("attention_rollout: no attention maps");
  NoGradGuard no_grad;
  Tensor R;
  for (const Tensor& A : maps) {
    check_map(A, "attention_rollout");
    const std::int64_t T = A.size(3);
    Tensor eye = Tensor::zeros({T, T}, A.dtype());
    for (std::int64_t i = 0; i < T; ++i) eye.set({i, i}, 1);
    Tensor mixed = mean(A, {1}) * 0.5 + eye * 0.5;              // ½ Ā + ½ I   (B, T, T)
    Tensor layer = mixed / sum(mixed, {-1}, true);              // rows sum to 1
    R = R.defined() ? matmul(layer, R) : layer;                 // Â_ℓ ⋯ Â_1
  }
  return R;
}

}  // namespace uwaga::nn
