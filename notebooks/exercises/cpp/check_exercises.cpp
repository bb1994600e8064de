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
#include <stdexcept>
#include <functional>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/gradcheck.h"
#include "core/reduction.h"
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

// Output and every input's gradient of mine against reference, under one random dY; then
// gradcheck of mine.
void compare_function(const Fn& mine, const Fn& reference, const std::vector<Tensor>& inputs,
                      const std::vector<std::string>& names) {
  const std::vector<Tensor> a = fresh(inputs), b = fresh(inputs);
  const Tensor expected = reference(b);
  const Tensor got = mine(a);
  expect_tensor("the output", got, expected);
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

void check_attention() {
  compare_function([](const auto& x) { return attention(x[0], x[1], x[2]); },
                   [](const auto& x) { return nn::scaled_dot_product_attention(x[0], x[1], x[2]); },
                   {randn({2, 3, 4}, 4), randn({2, 5, 4}, 5), randn({2, 5, 2}, 6)},
                   {"Q", "K", "V"});
}

void check_causal_attention() {
  compare_function([](const auto& x) { return causal_attention(x[0], x[1], x[2]); },
                   [](const auto& x) {
                     return nn::scaled_dot_product_attention(x[0], x[1], x[2], {.causal = true});
                   },
                   {randn({2, 5, 4}, 7), randn({2, 5, 4}, 8), randn({2, 5, 3}, 9)},
                   {"Q", "K", "V"});
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
  compare_function([&](const auto& x) { return block_forward(x[0], block); },
                   [&](const auto& x) { return block.forward(x[0]); }, {randn({2, 4, 8}, 17)},
                   {"z"});
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
