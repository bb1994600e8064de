// Part 4 of uwaga-walkthrough checks its hand-written gradients against autograd in the order the
// backward pass computes them, so a mistake is named where it is made: an error planted in dK is
// reported as dK (not as dX, which is computed from it), one in dA as dA.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "apps/walkthrough/attention_backward.h"
#include "core/error.h"
#include "core/random.h"
#include "nn/init.h"

using namespace uwaga;
using namespace uwaga::walkthrough;
using Catch::Contains;

namespace {

// The walkthrough's part 4 on a random layer: its steps, its gradients, autograd's.
struct WalkthroughBackward {
  Generator gen{3};
  Tensor X = Tensor::randn({4, 6}, gen, DType::Float64);
  nn::SelfAttention layer{{.d_x = 6, .d_k = 3, .d_v = 3}, gen};
  AttentionSteps s;
  AttentionGradients mine, autograd;

  explicit WalkthroughBackward(bool causal) {
    layer.to(DType::Float64);
    for (Tensor* w : {&layer.W_Q, &layer.W_K, &layer.W_V}) nn::init::normal(*w, gen, 0.4);
    queries_keys_values(s, X, layer.W_Q, layer.W_K, layer.W_V);
    alignment_scores(s);
    if (causal) causal_mask(s);
    attention_weights(s);
    attention_output(s);
    mine.dY = Tensor::randn(s.Y.shape(), gen, DType::Float64);
    output_backward(mine, s);
    softmax_backward(mine, s);
    scores_backward(mine, s);
    projections_backward(mine, X, layer.W_Q, layer.W_K, layer.W_V);
    autograd = autograd_gradients(s, X, layer, mine.dY, causal);
  }
};

// mine with its gradient `planted` replaced by `wrong`, and the ones the pass computes from it
// recomputed, as a mistake in that line of the walkthrough would leave them.
std::string failure_naming(WalkthroughBackward& w, Tensor AttentionGradients::*planted,
                           const Tensor& wrong) {
  AttentionGradients g = w.mine;
  g.*planted = wrong;
  if (planted == &AttentionGradients::dA) softmax_backward(g, w.s);
  if (planted == &AttentionGradients::dA || planted == &AttentionGradients::dE)
    scores_backward(g, w.s);
  if (planted != &AttentionGradients::dX)
    projections_backward(g, w.X, w.layer.W_Q, w.layer.W_K, w.layer.W_V);
  try {
    check_against_autograd(g, w.autograd);
  } catch (const Error& e) {
    return e.what();
  }
  return "no failure";
}

}  // namespace

TEST_CASE("walkthrough: every hand-written gradient of part 4 equals autograd's",
          "[apps][walkthrough]") {
  for (bool causal : {false, true}) {
    WalkthroughBackward w(causal);
    REQUIRE_NOTHROW(check_against_autograd(w.mine, w.autograd));
  }
}

TEST_CASE("walkthrough: a planted error in dK is named as dK, one in dA as dA",
          "[apps][walkthrough]") {
  WalkthroughBackward w(true);
  // dK without its 1/√d_k: dQ is right, dW_K and dX (computed from dK) are wrong too.
  const std::string dK = failure_naming(w, &AttentionGradients::dK, w.mine.dK * std::sqrt(3.0));
  CHECK_THAT(dK, Contains("walkthrough's dK = dE^T Q / sqrt(d_k) disagrees with autograd"));
  CHECK_THAT(dK, Contains("the first gradient"));
  // A sign slip in dA; the softmax's row-sum term forgotten in dE; dX alone doubled.
  const std::string dA = failure_naming(w, &AttentionGradients::dA, w.mine.dA * -1.0);
  CHECK_THAT(dA, Contains("walkthrough's dA = dY V^T disagrees"));
  const std::string dE = failure_naming(w, &AttentionGradients::dE, w.s.A * w.mine.dA);
  CHECK_THAT(dE, Contains("walkthrough's dE = "));
  const std::string dX = failure_naming(w, &AttentionGradients::dX, w.mine.dX * 2.0);
  CHECK_THAT(dX, Contains("walkthrough's dX = "));
}
