#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "tests/support/occurrences.h"

using namespace uwaga;
using Catch::Contains;
using uwaga::testing::occurrences;

TEST_CASE("to_dot draws ops, leaves, values and gradients", "[core][graph_dot]") {
  // loss = Σ tanh(x · w + b), with x a constant input.
  Tensor w = Tensor::from_vector({0.5, -1}, {2}).set_name("w").requires_grad_();
  Tensor b = Tensor::from_vector({0.25}, {1}).set_name("b").requires_grad_();
  Tensor x = Tensor::from_vector({1, 2}, {2}).set_name("x");
  Tensor loss = sum(tanh(x * w + b));
  loss.backward(/*retain_graph=*/true);

  const std::string dot = to_dot(loss);
  INFO(dot);
  REQUIRE(dot.rfind("digraph", 0) == 0);
  REQUIRE(dot.back() == '\n');
  // One box per op, labelled with the op and its output shape; the root is doubled.
  REQUIRE_THAT(dot, Contains("label=\"mul\\n(2,)\""));
  REQUIRE_THAT(dot, Contains("label=\"add\\n(2,)\""));
  REQUIRE_THAT(dot, Contains("label=\"tanh\\n(2,)\""));
  REQUIRE_THAT(dot, Contains("label=\"sum\\n()\", peripheries=2"));
  // Leaves: name, shape, values and (after backward) gradients; constants are dashed.
  REQUIRE_THAT(dot, Contains("w (2,)\\ndata [0.5, -1]\\ngrad ["));
  REQUIRE_THAT(dot, Contains("b (1,)\\ndata [0.25]\\ngrad ["));
  REQUIRE_THAT(dot, Contains("x (2,)\\ndata [1, 2]\", style=dashed"));
  REQUIRE(occurrences(dot, "shape=box") == 4);
  REQUIRE(occurrences(dot, "shape=ellipse") == 3);
  REQUIRE(occurrences(dot, " -> ") == 6);  // x, w -> mul; mul, b -> add; add -> tanh; tanh -> sum
}

TEST_CASE("to_dot leaves out the values of large tensors", "[core][graph_dot]") {
  Tensor big = Tensor::ones({3, 4}).requires_grad_();
  Tensor y = big * 2.0;
  std::string dot = to_dot(y);
  REQUIRE_THAT(dot, Contains("tensor (3, 4)"));  // unnamed leaves are called "tensor"
  REQUIRE_THAT(dot, !Contains("data ["));
  REQUIRE_THAT(to_dot(y, 12), Contains("data [1, 1, 1"));
}

TEST_CASE("to_dot of a leaf, a tensor used twice, and a freed graph", "[core][graph_dot]") {
  Tensor a = Tensor::from_vector({3}, {1}, DType::Float64);
  a.set_name("a \"quoted\"").requires_grad_();
  REQUIRE_THAT(to_dot(a), Contains("a \\\"quoted\\\" (1,) float64"));
  REQUIRE(occurrences(to_dot(a), "shape=ellipse") == 1);

  // a used twice: one ellipse with two edges into the mul.
  Tensor y = a * a;
  std::string dot = to_dot(y);
  REQUIRE(occurrences(dot, "shape=ellipse") == 1);
  REQUIRE(occurrences(dot, " -> ") == 2);

  // After backward without retain_graph the node remains but its inputs are gone.
  sum(y).backward();
  REQUIRE_THAT(to_dot(y), Contains("freed by backward"));
  REQUIRE_THROWS_WITH(to_dot(Tensor()), Contains("to_dot: got an undefined tensor"));
}
