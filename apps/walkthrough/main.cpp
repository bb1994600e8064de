// uwaga-walkthrough: one attention layer, then one multi-head layer, on the lecture notes' sentence
// "we are eating bread", printing every intermediate matrix with its shape and the formula of the
// notes (SEEDS.md) it computes. Made to be stepped through in a debugger: each step is a function
// of its own (README: "Stepping through attention in gdb").
//   uwaga-walkthrough [--dim 8] [--d-k 4] [--heads 2] [--seed 0]
//
// The steps call the same core ops the layers are made of (matmul, transpose, softmax), and each
// part ends by checking its result against the nn/ module that computes it in one call, so the
// walkthrough cannot drift from the real thing. Part 2 checks both of MultiHeadAttention's paths:
// the reference one, which is these steps in the module (MultiHeadAttention::reference_heads in
// nn/multi_head_attention.cpp), and the fast one training uses (nn/attention_kernels.h).
#include <cxxopts.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/command_line.h"
#include "core/elementwise.h"
#include "core/error.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/init.h"
#include "nn/multi_head_attention.h"
#include "nn/self_attention.h"
#include "nn/softmax.h"

namespace {

using uwaga::Generator;
using uwaga::Tensor;
using uwaga::nn::AttentionPath;
using Labels = std::vector<std::string>;

const Labels kWords = {"we", "are", "eating", "bread"};

// ---- printing -----------------------------------------------------------------------------------

// Text from parts. (Not "literal" + std::string: GCC 12 warns falsely on it, -Wrestrict.)
template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

void heading(const std::string& text) { std::printf("\n== %s\n", text.c_str()); }

// A 2-D tensor with its name, shape and meaning; rows (and columns, when given) labelled.
void show(const std::string& name, const Tensor& t, const std::string& meaning,
          const Labels& rows = {}, const Labels& cols = {}) {
  std::printf("\n%s %s  %s\n", name.c_str(), uwaga::shape_str(t.shape()).c_str(),
              meaning.c_str());
  const std::int64_t R = t.size(0), C = t.size(1);
  std::printf("%10s", "");
  for (std::int64_t j = 0; j < C; ++j)
    std::printf("%9s", cols.empty() ? str("[", j, "]").c_str() : cols[j].c_str());
  std::printf("\n");
  for (std::int64_t i = 0; i < R; ++i) {
    std::printf("%10s", rows.empty() ? str("[", i, "]").c_str() : rows[i].c_str());
    for (std::int64_t j = 0; j < C; ++j) std::printf("%9.4f", t.at({i, j}));
    std::printf("\n");
  }
}

double max_difference(const Tensor& a, const Tensor& b) {
  return uwaga::max(uwaga::abs(a - b)).item();
}

void check(const std::string& what, const Tensor& mine, const Tensor& module) {
  const double d = max_difference(mine, module);
  std::printf("\ncheck: %s, largest difference %.3g  %s\n", what.c_str(), d,
              d < 1e-12 ? "OK" : "NOT OK");
  if (!(d < 1e-12)) uwaga::fail("the walkthrough and the module disagree on ", what);
}

// ---- part 1: one attention layer (SEEDS §2–3) ---------------------------------------------------

struct AttentionSteps {
  Tensor Q, K, V;  // (N, d_k), (N, d_k), (N, d_v)
  Tensor E;        // (N, N) alignment scores
  Tensor A;        // (N, N) attention weights, rows sum to 1
  Tensor Y;        // (N, d_v) outputs
};

// Q = X W_Q, K = X W_K, V = X W_V
void queries_keys_values(AttentionSteps& s, const Tensor& X, const Tensor& W_Q,
                         const Tensor& W_K, const Tensor& W_V) {
  s.Q = uwaga::matmul(X, W_Q);  // (N, d_k)
  s.K = uwaga::matmul(X, W_K);  // (N, d_k)
  s.V = uwaga::matmul(X, W_V);  // (N, d_v)
}

// E = Q Kᵀ / √d_k: E_ij = ⟨Q_i, K_j⟩ / √d_k, how well query i matches key j
void alignment_scores(AttentionSteps& s) {
  const double d_k = static_cast<double>(s.Q.size(1));
  s.E = uwaga::matmul(s.Q, uwaga::transpose(s.K, 0, 1)) / std::sqrt(d_k);  // (N, N)
}

// A = softmax(E), along each row
void attention_weights(AttentionSteps& s) { s.A = uwaga::nn::softmax(s.E, 1); }

// Y = A V: each output row is a weighted average of the value rows
void attention_output(AttentionSteps& s) { s.Y = uwaga::matmul(s.A, s.V); }

void one_attention_layer(const Tensor& X, std::int64_t d_k, Generator& gen) {
  const std::int64_t D = X.size(1);
  uwaga::nn::SelfAttention layer({.d_x = D, .d_k = d_k, .d_v = d_k}, gen);
  layer.to(uwaga::DType::Float64);
  // The module starts from trunc-normal(0, 0.02), which makes every score nearly 0 and every
  // weight nearly 1/N; weights of size 1/√D give scores of order 1 and a sharper picture.
  for (Tensor* w : {&layer.W_Q, &layer.W_K, &layer.W_V})
    uwaga::nn::init::normal(*w, gen, 1.0 / std::sqrt(static_cast<double>(D)));

  heading(str("Part 1: one self-attention layer (SEEDS §3), N = 4 words, D_X = ", D,
              ", d_k = d_v = ", d_k));
  show("W_Q", layer.W_Q, "learned projection to queries (D_X x d_k)");
  show("W_K", layer.W_K, "learned projection to keys (D_X x d_k)");
  show("W_V", layer.W_V, "learned projection to values (D_X x d_v)");

  AttentionSteps s;
  queries_keys_values(s, X, layer.W_Q, layer.W_K, layer.W_V);
  show("Q", s.Q, "= X W_Q   queries: what each word is looking for", kWords);
  show("K", s.K, "= X W_K   keys: what each word offers to be found by", kWords);
  show("V", s.V, "= X W_V   values: what each word passes on", kWords);

  alignment_scores(s);
  show("E", s.E, "= Q K^T / sqrt(d_k)   alignment scores, row = query word, column = key word",
       kWords, kWords);

  attention_weights(s);
  show("A", s.A, "= softmax(E) along each row   attention weights", kWords, kWords);
  const Tensor row_sums = uwaga::sum(s.A, {1});
  std::printf("row sums of A:");
  for (std::int64_t i = 0; i < row_sums.numel(); ++i) std::printf(" %.6f", row_sums.flat(i));
  std::printf("   (each row is a probability distribution over the words)\n");

  attention_output(s);
  show("Y", s.Y, "= A V   each row a weighted average of the rows of V", kWords);

  Tensor A_module;
  check("Y against nn::SelfAttention::forward(X)", s.Y, layer.forward(X, {}, &A_module));
  check("A against the weights the module returns", s.A, A_module);
}

// ---- part 2: multi-head attention (SEEDS §4) ----------------------------------------------------

// Head i's columns of a projection P (N, n·D) laid out as [Q | K | V], each [head_1 | … | head_h].
Tensor head_columns(const Tensor& P, std::int64_t part, std::int64_t i, std::int64_t D,
                    std::int64_t d) {
  const std::int64_t start = part * D + i * d;
  return uwaga::slice(P, 1, start, start + d);  // (N, d)
}

void one_multi_head_layer(const Tensor& X, std::int64_t heads, Generator& gen) {
  const std::int64_t D = X.size(1);
  uwaga::nn::MultiHeadAttention mha({.dim = D, .heads = heads, .path = AttentionPath::reference},
                                    gen);
  mha.to(uwaga::DType::Float64);
  for (Tensor* w : {&mha.qkv->weight, &mha.proj->weight})
    uwaga::nn::init::normal(*w, gen, 1.0 / std::sqrt(static_cast<double>(D)));
  const std::int64_t d = mha.head_dim;

  heading(str("Part 2: multi-head attention (SEEDS §4), h = ", heads, " heads, D = ", D,
              ", d_k = d_v = D/h = ", d));
  std::printf("The per-head W_i^Q, W_i^K, W_i^V are stored side by side in one Linear, qkv\n"
              "(D -> 3D), so one product gives every head's queries, keys and values:\n"
              "  X qkv.weight^T + qkv.bias = [X W_1^Q | ... | X W_h^Q | X W_1^K | ... | X W_h^V]"
              "  (N x 3D; the biases start at 0)\n");
  const Tensor P = mha.qkv->forward(X);  // (N, 3D)

  std::vector<Tensor> outputs;
  for (std::int64_t i = 0; i < heads; ++i) {
    const std::string n = std::to_string(i + 1);
    heading(str("head ", n, " = Attention(X W_", n, "^Q, X W_", n, "^K, X W_", n, "^V)"));
    AttentionSteps s;
    s.Q = head_columns(P, 0, i, D, d);
    s.K = head_columns(P, 1, i, D, d);
    s.V = head_columns(P, 2, i, D, d);
    show(str("Q_", n), s.Q, str("= X W_", n, "^Q"), kWords);
    show(str("K_", n), s.K, str("= X W_", n, "^K"), kWords);
    show(str("V_", n), s.V, str("= X W_", n, "^V"), kWords);
    alignment_scores(s);
    show(str("E_", n), s.E, str("= Q_", n, " K_", n, "^T / sqrt(d_k)"), kWords, kWords);
    attention_weights(s);
    show(str("A_", n), s.A, str("= softmax(E_", n, ")   this head's own pattern"), kWords, kWords);
    attention_output(s);
    show(str("head_", n), s.Y, str("= A_", n, " V_", n), kWords);
    outputs.push_back(s.Y);
  }

  heading("MultiHead(X) = Concat(head_1, ..., head_h) W_O");
  const Tensor concat = uwaga::cat(outputs, 1);  // (N, h·d_v)
  show("Concat", concat, "the heads side by side (N x h*d_v)", kWords);
  show("W_O", uwaga::transpose(mha.proj->weight, 0, 1), "mixes the heads (h*d_v x D), stored "
       "transposed in the Linear proj");
  const Tensor Y = mha.proj->forward(concat);  // (N, D)
  show("Y", Y, "= Concat W_O (+ proj.bias, 0 here)   one output row per word, width D", kWords);

  // The module takes a batch (B, N, D): here B = 1.
  const Tensor X_batch = uwaga::unsqueeze(X, 0);
  check("Y against nn::MultiHeadAttention's reference path (split_heads, attention, merge_heads, "
        "W_O)", Y, uwaga::squeeze(mha.forward(X_batch), 0));
  Generator unused(0);  // its draws are overwritten by load_state_dict
  uwaga::nn::MultiHeadAttention fast({.dim = D, .heads = heads, .path = AttentionPath::fast},
                                     unused);
  fast.to(uwaga::DType::Float64);
  fast.load_state_dict(mha.state_dict());
  check("Y against its fast path (attention_heads: every head at once, in place)", Y,
        uwaga::squeeze(fast.forward(X_batch), 0));
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options o("uwaga-walkthrough",
                     "One attention layer, then one multi-head layer, on \"we are eating bread\", "
                     "every intermediate printed.");
  o.add_options()
      ("dim", "width D of the word vectors", cxxopts::value<std::int64_t>()->default_value("8"))
      ("d-k", "d_k = d_v of the single attention layer", cxxopts::value<std::int64_t>()->default_value("4"))
      ("heads", "heads h of the multi-head layer (must divide --dim)", cxxopts::value<std::int64_t>()->default_value("2"))
      ("seed", "seed of the word vectors and the weights", cxxopts::value<std::uint64_t>()->default_value("0"))
      ("h,help", "show this help");
  try {
    auto r = o.parse(argc, argv);
    if (r.count("help")) {
      std::cout << o.help() << "\n";
      return 0;
    }
    uwaga::apps::reject_unexpected_arguments(r, "");
    const std::int64_t D = r["dim"].as<std::int64_t>();
    const std::int64_t d_k = r["d-k"].as<std::int64_t>();
    const std::int64_t heads = r["heads"].as<std::int64_t>();
    if (D < 1 || d_k < 1 || heads < 1) uwaga::fail("--dim, --d-k and --heads must be positive");
    if (D > 16 || d_k > 16) uwaga::fail("--dim and --d-k are at most 16 (the matrices are printed)");
    if (D % heads != 0) uwaga::fail("--heads ", heads, " must divide --dim ", D);
    Generator gen(r["seed"].as<std::uint64_t>());

    std::printf("uwaga-walkthrough: attention on \"we are eating bread\" (float64)\n");
    // Made-up word vectors: a trained model would learn them (an embedding table).
    const Tensor X = Tensor::randn({4, D}, gen, uwaga::DType::Float64);
    show("X", X, "the input vectors, one row per word (N x D_X)", kWords);

    one_attention_layer(X, d_k, gen);
    one_multi_head_layer(X, heads, gen);
    std::printf("\nDone: every matrix above is what nn/ computes for this input.\n");
    return 0;
  } catch (const uwaga::Error& e) {
    std::cerr << "uwaga-walkthrough: " << e.what() << "\n";
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "uwaga-walkthrough: " << uwaga::apps::parse_error_message(e, argc, argv)
              << " (see --help)\n";
    return 2;
  }
}
