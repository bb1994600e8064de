#pragma once
// The fused attention kernel: the fast path of scaled dot-product attention (SEEDS §2–3) and of
// multi-head attention (SEEDS §4). For each of N = batch·heads (T × S) problems at once,
//   E = Q Kᵀ / √d_k,   A = softmax(E + mask) along each row,   Y = A V
// as one autograd node whose backward is derived by hand (attention_kernels.cpp). The kernel reads
// Q, K and V where they already lie — for multi-head attention, inside the projections — so no
// head is copied out and no concatenation is copied back in.
//
// This file is about speed. The formula step by step (split into heads, E, mask, A, Y, Concat,
// W_O) is MultiHeadAttention's AttentionPath::reference (nn/multi_head_attention.h), built from
// scaled_dot_product_attention_composed; tests/nn/test_multi_head_attention.cpp checks that the
// two paths agree.
#include <array>
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "nn/attention_dropout.h"
#include "nn/attention_mask.h"

namespace uwaga::nn {

// What the backward pass keeps from the forward pass.
struct AttentionSaved {
  Tensor A;  // (N, T, S) attention weights
  Tensor M;  // (N, T, S) attention dropout's mask, 0 or 1/(1 − p); undefined without dropout
};

// The sizes of one fused call.
struct AttentionDims {
  std::int64_t N, T, S, dk, dv;  // batch·heads, queries, keys, key width, value width
  std::int64_t B;                // rows of the key padding mask (1 when there is none)
};

// Where the matrix of batch·head n of one operand lives: its row r starts at
//   data + (n / heads)·batch_stride + (n % heads)·head_offset + column + r·row_stride.
// A contiguous (N, rows, width) tensor is heads = 1, batch_stride = rows·width, row_stride =
// width. The heads of a projection (B, rows, parts·h·d) are heads = h, head_offset = d,
// row_stride = parts·h·d and `column` = where the part (Q, K or V) starts: the kernel reads them
// in place, so multi-head attention needs no split or merge copies.
struct OperandLayout {
  std::int64_t heads, batch_stride, head_offset, row_stride, column;
  std::int64_t at(std::int64_t n) const {
    return (n / heads) * batch_stride + (n % heads) * head_offset + column;
  }
  // (N, rows, width), one matrix after the other.
  static OperandLayout contiguous(std::int64_t rows, std::int64_t width) {
    return {1, rows * width, 0, width, 0};
  }
  // Head i of the part starting at `column` of a projection (B, rows, row_width): columns
  // column + i·d … column + (i+1)·d.
  static OperandLayout packed(std::int64_t heads, std::int64_t rows, std::int64_t row_width,
                              std::int64_t d, std::int64_t column) {
    return {heads, rows * row_width, d, row_width, column};
  }
};

// The layouts of Q, K, V and Y (the gradients dQ, dK, dV, dY have the same ones).
struct AttentionLayouts {
  OperandLayout q, k, v, y;
};

// Runs the fused forward and records the node. `source` says which input holds Q, K and V (for
// self-attention's packed projections all three live in input 0, so the node has one input and
// one gradient); the layouts say where in it. `y_shape` and `a_shape` are the shapes Y and A are
// returned with; `weights`, when given, receives A. With `drop` on, Y = (A ⊙ M) V
// (nn/attention_dropout.h), M drawn for A (N, T, S) in order. The caller has checked the shapes.
Tensor fused_attention(const char* op, const AttentionDims& d, const AttentionLayouts& l,
                       const AttentionMask& mask, const std::vector<Tensor>& inputs,
                       std::array<std::size_t, 3> source, const Shape& y_shape,
                       const Shape& a_shape, Tensor* weights, const AttentionDropout& drop = {});

// Every head of multi-head attention at once (SEEDS §4), read straight out of the projections
// and written side by side, so no head is copied out or back in:
//   qkv (B, T, 3·h·d) = [Q | K | V] as the fused projection x W_QKVᵀ + b_QKV returns it; head i
//   of Q is columns i·d … (i+1)·d of Q, and likewise for K and V. Returns (B, T, h·d) =
//   Concat(head_1, …, head_h), head_i = softmax(Q_i K_iᵀ/√d_k + mask) V_i. `weights` receives
//   A (B, h, T, T). The same numbers as split_heads → scaled_dot_product_attention →
//   merge_heads (nn/multi_head_attention.h), as one autograd node. With `drop` on (training),
//   head_i = (A_i ⊙ M_i) V_i, the mask M (B, h, T, T) drawn in that order.
Tensor attention_heads(const Tensor& qkv, std::int64_t heads, const AttentionMask& mask = {},
                       Tensor* weights = nullptr, const AttentionDropout& drop = {});
// Cross-attention: q (B, T, h·d) from the queries' sequence, kv (B, S, 2·h·d) = [K | V] from the
// memory. `weights` receives A (B, h, T, S); `drop` as above.
Tensor attention_heads(const Tensor& q, const Tensor& kv, std::int64_t heads,
                       const AttentionMask& mask = {}, Tensor* weights = nullptr,
                       const AttentionDropout& drop = {});

}  // namespace uwaga::nn
