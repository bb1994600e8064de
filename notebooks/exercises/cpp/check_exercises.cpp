// The checks of the C++ exercises (exercises.h): each runs the student's function on random
// float64 inputs and compares it with uwaga's own version — the output, the gradient of every
// input under a random upstream gradient, and gradcheck — and says what is wrong: the shape, the
// values (where, by how much), or the gradient of which input.
//   uwaga-exercises [NAME ...]           every exercise, or the named ones; exit 0 when all pass
//   uwaga-exercises --expect-stubs       exit 0 when every exercise is still an empty stub (CI)
//   --expect-wrong                       exit 0 when every check fails as wrong (planted_mistakes.cpp)
// Linked with exercises.cpp (uwaga-exercises, the student's) or solutions.cpp
// (uwaga-exercises-solutions, which CTest runs so that the checks themselves are tested).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/gradcheck.h"
#include "core/matmul.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "nn/cross_entropy.h"
#include "nn/layer_norm.h"
#include "nn/multi_head_attention.h"
#include "nn/scaled_dot_product_attention.h"
#include "nn/sampling.h"
#include "nn/softmax.h"
#include "notebooks/exercises/cpp/exercises.h"
#include "optim/adam.h"

namespace uwaga::exercises {
namespace {

constexpr double kTolerance = 1e-9;  // float64: a right answer agrees to ~1e-15

// What a check found wrong: the sentence the student reads.
struct Wrong : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

Tensor randn(const Shape& shape, std::uint64_t seed, bool requires_grad = true) {
  Generator gen(seed);
  Tensor t = Tensor::randn(shape, gen, DType::Float64);
  t.requires_grad_(requires_grad);
  return t;
}

std::vector<Tensor> fresh(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  for (const Tensor& t : inputs) {
    Tensor c = t.detach().clone();
    c.requires_grad_(t.requires_grad());
    out.push_back(c);
  }
  return out;
}

std::string index_str(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "(";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + ")";
}

void expect_tensor(const std::string& what, const Tensor& got, const Tensor& expected) {
  if (!got.defined()) throw Wrong(what + " is an undefined Tensor: nothing was returned yet");
  if (got.shape() != expected.shape())
    throw Wrong(str(what, " has shape ", shape_str(got.shape()), ", expected ",
                    shape_str(expected.shape())));
  double worst = 0;
  std::int64_t at = -1;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const double d = std::abs(got.flat(i) - expected.flat(i));
    if (std::isnan(d) && !std::isnan(expected.flat(i))) {  // NaN or inf where a number belongs
      worst = d, at = i;
      break;
    }
    if (d > worst) worst = d, at = i;
  }
  if (at >= 0 && !(worst <= kTolerance))
    throw Wrong(str(what, ": values differ, largest difference ", worst, " at index ",
                    index_str(got.shape(), at), ": got ", got.flat(at), ", expected ",
                    expected.flat(at)));
}

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// A classic mistake, how to mend it, and what it gives on the check's inputs: a wrong answer
// equal to it is named ("the output is what attention without the 1/sqrt(d_k) gives: divide the
// scores ..."), not only located.
struct Suspect {
  std::string mistake;
  std::string mend;
  Fn gives;
};

// Equal to within the tolerance, NaN where the other has NaN, ±inf where it has the same inf.
bool same_values(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.shape() != b.shape()) return false;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.flat(i), y = b.flat(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return false;
    } else if (x != y && !(std::abs(x - y) <= kTolerance)) {
      return false;
    }
  }
  return true;
}

// expect_tensor, and when got is wrong, the first suspect whose answer it equals is named.
void expect_tensor_naming(const std::string& what, const Tensor& got, const Tensor& expected,
                          const std::vector<Suspect>& suspects,
                          const std::vector<Tensor>& inputs) {
  try {
    expect_tensor(what, got, expected);
  } catch (const Wrong& wrong) {
    for (const Suspect& s : suspects) {
      Tensor candidate;
      {
        NoGradGuard no_grad;
        candidate = s.gives(fresh(inputs));
      }
      if (same_values(got, candidate))
        throw Wrong(str(what, " is what ", s.mistake, " gives: ", s.mend, " (", wrong.what(),
                        ")"));
    }
    throw;
  }
}

// Output and every input's gradient of mine against reference, under one random dY; then
// gradcheck of mine. A wrong output equal to a suspect's is named as that mistake.
void compare_function(const Fn& mine, const Fn& reference, const std::vector<Tensor>& inputs,
                      const std::vector<std::string>& names,
                      const std::vector<Suspect>& suspects = {}) {
  const std::vector<Tensor> a = fresh(inputs), b = fresh(inputs);
  const Tensor expected = reference(b);
  const Tensor got = mine(a);
  expect_tensor_naming("the output", got, expected, suspects, inputs);
  const Tensor dY = randn(expected.shape(), 100, false);
  expected.backward(dY);
  if (!got.grad_fn()) throw Wrong("the output is not connected to the inputs (no grad_fn)");
  got.backward(dY);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!b[i].requires_grad()) continue;
    if (!a[i].grad().defined()) throw Wrong("no gradient reached " + names[i]);
    expect_tensor("the gradient of " + names[i], a[i].grad(), b[i].grad());
  }
  const GradcheckResult r = gradcheck(mine, fresh(inputs));
  if (!r.ok) throw Wrong(r.message);
}

// ---- the checks -------------------------------------------------------------------------------

void check_softmax() {
  compare_function([](const auto& x) { return softmax(x[0]); },
                   [](const auto& x) { return nn::softmax(x[0], -1); }, {randn({3, 5}, 1)},
                   {"E"});
  const Tensor big = Tensor::from_vector({1000.0, 999.0, -1000.0}, {1, 3}, DType::Float64);
  expect_tensor("softmax of [1000, 999, -1000] (subtract the row's max first)", softmax(big),
                nn::softmax(big, -1));
}

void check_softmax_backward() {
  for (const Shape& shape : {Shape{4, 6}, Shape{2, 3, 5}}) {
    const Tensor E = randn(shape, 2), dA = randn(shape, 3, false);
    const Tensor A = nn::softmax(E, -1);
    A.backward(dA);
    expect_tensor(str("dE for E of shape ", shape_str(shape)),
                  softmax_backward(A.detach(), dA), E.grad());
  }
}

// softmax(Q Kᵀ · scale, masked where hide(i, j)) V, for the suspects of exercises 3 and 4.
Tensor attention_with(const Tensor& Q, const Tensor& K, const Tensor& V, double scale,
                      const std::function<bool(std::int64_t, std::int64_t)>& hide) {
  const std::int64_t T = Q.size(-2), S = K.size(-2);
  Tensor hidden = Tensor::zeros({T, S}, Q.dtype());
  for (std::int64_t i = 0; i < T; ++i)
    for (std::int64_t j = 0; j < S; ++j)
      if (hide(i, j)) hidden.set({i, j}, 1.0);
  const Tensor E = matmul(Q, transpose(K, -2, -1)) * scale;
  return matmul(nn::softmax(masked_fill(E, hidden, -std::numeric_limits<double>::infinity()), -1),
                V);
}

double sqrt_d_k(const Tensor& Q) { return std::sqrt(static_cast<double>(Q.size(-1))); }

const auto kNothingHidden = [](std::int64_t, std::int64_t) { return false; };
const auto kFuture = [](std::int64_t i, std::int64_t j) { return j > i; };

// The scale forgotten, or d_k for √d_k; the softmax over the queries (dim −2) for the keys.
std::vector<Suspect> attention_suspects(
    const std::function<bool(std::int64_t, std::int64_t)>& hide) {
  return {
      {"attention without the 1/sqrt(d_k)", "divide the scores Q K^T by sqrt(d_k)",
       [=](const auto& x) { return attention_with(x[0], x[1], x[2], 1.0, hide); }},
      {"attention scaled by 1/d_k", "the scale is 1/sqrt(d_k)",
       [=](const auto& x) {
         return attention_with(x[0], x[1], x[2], 1.0 / static_cast<double>(x[0].size(-1)), hide);
       }},
      {"a softmax over the queries (dim -2)", "take it over the keys, the last dim",
       [](const auto& x) {
         return matmul(nn::softmax(matmul(x[0], transpose(x[1], -2, -1)) / sqrt_d_k(x[0]), -2),
                       x[2]);
       }},
  };
}

void check_attention() {
  compare_function([](const auto& x) { return attention(x[0], x[1], x[2]); },
                   [](const auto& x) { return nn::scaled_dot_product_attention(x[0], x[1], x[2]); },
                   {randn({2, 3, 4}, 4), randn({2, 5, 4}, 5), randn({2, 5, 2}, 6)},
                   {"Q", "K", "V"}, attention_suspects(kNothingHidden));
}

void check_causal_attention() {
  const auto masked = [](std::function<bool(std::int64_t, std::int64_t)> hide) {
    return [=](const std::vector<Tensor>& x) {
      return attention_with(x[0], x[1], x[2], 1.0 / sqrt_d_k(x[0]), hide);
    };
  };
  std::vector<Suspect> suspects = {
      {"a causal mask one step off, hiding the diagonal too",
       "query i must see key i, itself: hide j > i only (the first row, all hidden, is NaN)",
       masked([](std::int64_t i, std::int64_t j) { return j >= i; })},
      {"a causal mask one step off, each query also seeing the next key",
       "hide every j > i",
       masked([](std::int64_t i, std::int64_t j) { return j > i + 1; })},
      {"a causal mask on the wrong side", "hide the future, j > i, not the past, j < i",
       masked([](std::int64_t i, std::int64_t j) { return j < i; })},
      {"attention without the causal mask", "hide the keys j > i", masked(kNothingHidden)},
  };
  for (Suspect& s : attention_suspects(kFuture)) suspects.push_back(std::move(s));
  compare_function([](const auto& x) { return causal_attention(x[0], x[1], x[2]); },
                   [](const auto& x) {
                     return nn::scaled_dot_product_attention(x[0], x[1], x[2], {.causal = true});
                   },
                   {randn({2, 5, 4}, 7), randn({2, 5, 4}, 8), randn({2, 5, 3}, 9)},
                   {"Q", "K", "V"}, suspects);
}

void check_layer_norm_backward() {
  const Tensor x = randn({3, 6}, 10), gamma = randn({6}, 11), beta = randn({6}, 12);
  const Tensor dy = randn({3, 6}, 13, false);
  nn::layer_norm(x, gamma, beta).backward(dy);
  const LayerNormGrads g = layer_norm_backward(x.detach(), gamma.detach(), dy);
  expect_tensor("dx", g.dx, x.grad());
  expect_tensor("dgamma", g.dgamma, gamma.grad());
  expect_tensor("dbeta", g.dbeta, beta.grad());
}

void check_heads() {
  compare_function([](const auto& x) { return split_heads(x[0], 2); },
                   [](const auto& x) { return nn::split_heads(x[0], 2); }, {randn({2, 3, 8}, 14)},
                   {"x"});
  compare_function([](const auto& x) { return merge_heads(x[0]); },
                   [](const auto& x) { return nn::merge_heads(x[0]); }, {randn({2, 4, 3, 2}, 15)},
                   {"heads"});
}

void check_block() {
  Generator gen(16);
  nn::TransformerEncoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 16}, gen);
  block.to(DType::Float64);
  const std::vector<Suspect> suspects = {
      {"a post-LN block",
       "the norm goes before each sub-layer, inside the residual: z' = z + MSA(LN1(z)), "
       "not after the addition, LN(z + MSA(z)), as in the original Transformer",
       [&](const auto& x) {
         const Tensor z1 = block.norm1->forward(block.attn->forward(x[0]) + x[0]);
         return block.norm2->forward(block.mlp->forward(z1) + z1);
       }},
      {"a block without its residual additions",
       "add each sub-layer's input back: z' = MSA(LN1(z)) + z",
       [&](const auto& x) {
         const Tensor z1 = block.attn->forward(block.norm1->forward(x[0]));
         return block.mlp->forward(block.norm2->forward(z1));
       }},
  };
  compare_function([&](const auto& x) { return block_forward(x[0], block); },
                   [&](const auto& x) { return block.forward(x[0]); }, {randn({2, 4, 8}, 17)},
                   {"z"}, suspects);
}

void check_patchify() {
  compare_function([](const auto& x) { return patchify(x[0], 2); },
                   [](const auto& x) { return nn::patchify(x[0], 2); }, {randn({2, 3, 8, 4}, 18)},
                   {"images"});
}

void check_train_step() {
  const nn::VitConfig config{.image_size = 8, .channels = 1, .patch = 4, .dim = 8, .depth = 1,
                             .heads = 2, .mlp_dim = 16, .num_classes = 3};
  const auto make = [&] {
    Generator gen(19);
    auto model = std::make_shared<nn::VisionTransformer>(config, gen);
    model->to(DType::Float64);
    return model;
  };
  const auto mine = make(), ref = make();
  optim::AdamW opt_mine(optim::make_param_groups(*mine, 0.01), {.lr = 1e-2});
  optim::AdamW opt_ref(optim::make_param_groups(*ref, 0.01), {.lr = 1e-2});
  const Tensor images = randn({6, 1, 8, 8}, 20, false);
  const Tensor labels = Tensor::from_indices({0, 1, 2, 0, 1, 2}, {6});
  const double loss = train_step(*mine, opt_mine, images, labels);
  const Tensor expected = nn::cross_entropy(ref->forward(images), labels);
  expected.backward();
  opt_ref.step();
  opt_ref.zero_grad();
  if (!(std::abs(loss - expected.item()) <= kTolerance))
    throw Wrong(str("the loss is ", loss, ", expected ", expected.item(),
                    " (the cross-entropy of the logits before the update)"));
  const auto p = mine->named_parameters(), q = ref->named_parameters();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].second.grad().defined())
      throw Wrong(p[i].first + " still has a gradient after the step: zero them");
    expect_tensor(p[i].first + " after the step", p[i].second, q[i].second);
  }
}

std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + str(v[i]);
  return s + "]";
}

void check_sampling() {
  Generator gen(21);
  for (int c = 0; c < 5; ++c) {
    std::vector<double> z = Tensor::randn({7}, gen, DType::Float64).to_vector();
    if (c == 0) z[2] = z[5] = 10.0;  // a tie: the lower index wins
    const std::int64_t want = nn::sample_token(z, {.temperature = 0.0}, gen);
    const std::int64_t got = greedy(z);
    if (got != want) throw Wrong(str("greedy(", list(z), ") gave ", got, ", expected ", want));
  }
  for (auto [k, tau] : {std::pair<std::int64_t, double>{1, 1.0}, {3, 1.0}, {3, 0.5}, {7, 2.0}}) {
    const std::vector<double> z = Tensor::randn({7}, gen, DType::Float64).to_vector();
    // p_i ∝ exp(z_i / τ) over the k largest: the softmax of z/τ with the others at −∞.
    std::vector<double> sorted = z;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    Tensor masked = Tensor::from_vector(z, {7}, DType::Float64) / tau;
    for (std::int64_t i = 0; i < 7; ++i)
      if (z[i] < sorted[k - 1]) masked.set({i}, -std::numeric_limits<double>::infinity());
    const std::vector<double> got = top_k_probabilities(z, k, tau);
    expect_tensor(str("top_k_probabilities(z, k = ", k, ", temperature = ", tau, ")"),
                  Tensor::from_vector(got, {static_cast<std::int64_t>(got.size())},
                                      DType::Float64),
                  nn::softmax(masked, 0));
  }
}

void check_cross_entropy_backward() {
  const Tensor logits = randn({5, 4}, 22);
  const Tensor targets = Tensor::from_indices({0, 3, 1, 1, 2}, {5});
  nn::cross_entropy(logits, targets).backward();
  expect_tensor("dlogits", cross_entropy_backward(logits.detach(), targets), logits.grad());
}

// Autograd's gradients through attention, step by step: each forward step's backward run on
// copies of its inputs, fed autograd's gradient of the step after it.
AttentionGrads attention_gradients(const Tensor& Q, const Tensor& K, const Tensor& V,
                                   const Tensor& dY) {
  const auto leaf = [](const Tensor& t) { return t.detach().clone().requires_grad_(); };
  const double scale = 1.0 / sqrt_d_k(Q);
  AttentionGrads r;
  const Tensor A = nn::softmax(matmul(Q, transpose(K, -2, -1)) * scale, -1).detach();
  const Tensor A_leaf = leaf(A), V_leaf = leaf(V);
  matmul(A_leaf, V_leaf).backward(dY);
  r.dA = A_leaf.grad(), r.dV = V_leaf.grad();
  const Tensor E_leaf = leaf(matmul(Q, transpose(K, -2, -1)) * scale);
  nn::softmax(E_leaf, -1).backward(r.dA);
  r.dE = E_leaf.grad();
  const Tensor Q_leaf = leaf(Q), K_leaf = leaf(K);
  (matmul(Q_leaf, transpose(K_leaf, -2, -1)) * scale).backward(r.dE);
  r.dQ = Q_leaf.grad(), r.dK = K_leaf.grad();
  return r;
}

// In the order the backward pass computes them: the first wrong one is where the mistake is.
void check_attention_backward() {
  const Tensor Q = randn({2, 3, 4}, 23, false), K = randn({2, 5, 4}, 24, false),
               V = randn({2, 5, 2}, 25, false), dY = randn({2, 3, 2}, 26, false);
  const AttentionGrads want = attention_gradients(Q, K, V, dY);
  const AttentionGrads got = attention_backward(Q, K, V, dY);
  const double root = sqrt_d_k(Q);
  const std::vector<Tensor> none;
  const auto is = [](const Tensor& t) { return [t](const std::vector<Tensor>&) { return t; }; };
  expect_tensor("dA = dL/dA", got.dA, want.dA);
  expect_tensor("dV = dL/dV", got.dV, want.dV);
  expect_tensor_naming("dE = dL/dE", got.dE, want.dE,
                       {{"the softmax's backward without its row-sum term",
                         "dE = A * (dA - rowsum(dA * A)), exercise 2",
                         is(nn::softmax(matmul(Q, transpose(K, -2, -1)) / root, -1) * want.dA)}},
                       none);
  expect_tensor_naming("dQ = dL/dQ", got.dQ, want.dQ,
                       {{"dE K without the 1/sqrt(d_k)",
                         "E = Q K^T / sqrt(d_k), so the scale carries into dQ",
                         is(want.dQ * root)}},
                       none);
  expect_tensor_naming("dK = dL/dK", got.dK, want.dK,
                       {{"dE^T Q without the 1/sqrt(d_k)",
                         "E = Q K^T / sqrt(d_k), so the scale carries into dK",
                         is(want.dK * root)}},
                       none);
}

struct Exercise {
  const char* name;
  const char* title;
  void (*check)();
};

const Exercise kExercises[] = {
    {"softmax", "1. softmax", check_softmax},
    {"softmax_backward", "2. softmax's backward", check_softmax_backward},
    {"attention", "3. scaled dot-product attention", check_attention},
    {"causal_attention", "4. causal attention", check_causal_attention},
    {"layer_norm_backward", "5. LayerNorm's backward", check_layer_norm_backward},
    {"heads", "6. multi-head split and merge", check_heads},
    {"block_forward", "7. one pre-LN block", check_block},
    {"patchify", "8. the ViT's patches", check_patchify},
    {"train_step", "9. a training step", check_train_step},
    {"sampling", "10. greedy and top-k sampling", check_sampling},
    {"cross_entropy_backward", "11. cross-entropy's backward", check_cross_entropy_backward},
    {"attention_backward", "12. attention's backward", check_attention_backward},
};

enum class Outcome { ok, wrong, not_implemented };

Outcome run(const Exercise& e) {
  std::string message;
  Outcome outcome = Outcome::wrong;
  try {
    e.check();
    std::printf("%-34s OK\n", e.title);
    return Outcome::ok;
  } catch (const NotImplemented& err) {
    message = err.what();
    outcome = Outcome::not_implemented;
  } catch (const Wrong& err) {
    message = err.what();
  } catch (const std::exception& err) {
    message = str("threw: ", err.what());
  }
  std::printf("%-34s NOT YET - %s\n", e.title, message.c_str());
  return outcome;
}

}  // namespace
}  // namespace uwaga::exercises

int main(int argc, char** argv) {
  using namespace uwaga::exercises;
  bool expect_stubs = false, expect_wrong = false;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-stubs") == 0) expect_stubs = true;
    else if (std::strcmp(argv[i], "--expect-wrong") == 0) expect_wrong = true;
    else names.push_back(argv[i]);
  }
  for (const std::string& n : names) {
    bool known = false;
    for (const Exercise& e : kExercises) known |= n == e.name;
    if (!known) {
      std::fprintf(stderr, "uwaga-exercises: no exercise '%s'; they are:", n.c_str());
      for (const Exercise& e : kExercises) std::fprintf(stderr, " %s", e.name);
      std::fprintf(stderr, "\n");
      return 2;
    }
  }
  int passed = 0, stubs = 0, wrong = 0, total = 0;
  for (const Exercise& e : kExercises) {
    if (!names.empty() && std::find(names.begin(), names.end(), e.name) == names.end()) continue;
    const Outcome o = run(e);
    ++total;
    passed += o == Outcome::ok;
    stubs += o == Outcome::not_implemented;
    wrong += o == Outcome::wrong;
  }
  std::printf("\n%d of %d exercises pass\n", passed, total);
  if (expect_stubs) {
    std::printf("%d of %d are empty stubs%s\n", stubs, total,
                stubs == total ? ", and every check fails on its stub, as it must" : "");
    return stubs == total ? 0 : 1;
  }
  if (expect_wrong) {
    std::printf("%d of %d fail as wrong%s\n", wrong, total,
                wrong == total ? ": every check catches its planted mistake" : "");
    return wrong == total ? 0 : 1;
  }
  return passed == total ? 0 : 1;
}
