#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "core/uwaga.h"
#include "tests/support/gradcheck.h"

using namespace uwaga;
using Catch::Contains;
using uwaga::testing::max_abs_diff;
using uwaga::testing::require_gradcheck;

TEST_CASE("backward computes the gradient of a small expression", "[core][autograd]") {
  // L = Σ (a·b + a)  →  dL/da = b + 1,  dL/db = a
  Tensor a = Tensor::from_vector({1, 2, 3}, {3}, DType::Float64).requires_grad_();
  Tensor b = Tensor::from_vector({4, 5, 6}, {3}, DType::Float64).requires_grad_();
  Tensor loss = sum(a * b + a);
  REQUIRE(loss.item() == 1 * 4 + 2 * 5 + 3 * 6 + 6);
  loss.backward();
  REQUIRE(a.grad().to_vector() == std::vector<double>{5, 6, 7});
  REQUIRE(b.grad().to_vector() == std::vector<double>{1, 2, 3});
}

TEST_CASE("a tensor used twice accumulates both gradients", "[core][autograd]") {
  Tensor x = Tensor::from_vector({3}, {1}, DType::Float64).requires_grad_();
  Tensor y = sum(x * x * x);  // d/dx x³ = 3x² = 27
  y.backward();
  REQUIRE(x.grad().item() == Approx(27.0));
  // Gradients accumulate across backward calls until zero_grad().
  sum(x * 2.0).backward();
  REQUIRE(x.grad().item() == Approx(29.0));
  x.zero_grad();
  REQUIRE_FALSE(x.grad().defined());
}

TEST_CASE("an intermediate tensor used several times gets the sum, however its gradients are shared",
          "[core][autograd]") {
  // a = 2x is not a leaf. add's rule hands the same g to both its inputs, so in a + a both
  // gradients of a are one buffer: the sum must not be taken in place into it. In b + b + b·b + b
  // the running sum of b's gradient becomes a fresh buffer after the first addition, and later
  // ones are added to it in place: each way the result is the plain sum.
  Tensor x = Tensor::from_vector({1, 2, 3}, {3}, DType::Float64).requires_grad_();
  Tensor a = x * 2.0;
  sum(a + a).backward();  // d/dx 2a = 4
  REQUIRE(max_abs_diff(x.grad(), Tensor::from_vector({4, 4, 4}, {3}, DType::Float64)) == 0);
  x.zero_grad();
  Tensor b = x * 2.0;
  sum(b + b + b * b + b).backward();  // d/dx (3b + b²) = (3 + 2b)·2 = 6 + 8x
  REQUIRE(max_abs_diff(x.grad(), Tensor::from_vector({14, 22, 30}, {3}, DType::Float64)) == 0);
  require_gradcheck([](const std::vector<Tensor>& in) {
    Tensor c = in[0] * 3.0;
    return c + c * c + c + exp(c * 0.1);
  }, {Tensor::from_vector({0.1, -0.2, 0.3}, {3}, DType::Float64).requires_grad_()});
}

TEST_CASE("a leaf takes over a fresh gradient and copies a shared one", "[core][autograd]") {
  // y = 3w: the backward rule makes one fresh tensor, 3·dy, which w's gradient becomes without a
  // copy — one buffer requested during backward, not two.
  Tensor w = Tensor::ones({1000}).requires_grad_();
  Tensor y = w * 3.0;
  Tensor dy = Tensor::ones({1000});
  auto requests = [] {
    AllocatorStats s = allocator_stats();
    return s.system_allocations + s.cache_hits;
  };
  const std::size_t before = requests();
  y.backward(dy);
  CHECK(requests() - before == 1);
  CHECK(w.grad().to_vector() == std::vector<double>(1000, 3.0));

  // z = a + b hands the same upstream tensor to both inputs: each leaf gets a buffer of its own,
  // and neither is the caller's dz.
  Tensor a = Tensor::ones({4}).requires_grad_(), b = Tensor::ones({4}).requires_grad_();
  Tensor dz = Tensor::full({4}, 2.0);
  (a + b).backward(dz);
  CHECK(a.grad().data<float>() != b.grad().data<float>());
  CHECK(a.grad().data<float>() != dz.data<float>());
  CHECK(b.grad().data<float>() != dz.data<float>());
  Tensor ga = a.grad();
  add_inplace(ga, Tensor::ones({4}));
  CHECK(b.grad().to_vector() == std::vector<double>(4, 2.0));
  CHECK(dz.to_vector() == std::vector<double>(4, 2.0));
}

TEST_CASE("requires_grad propagates; no_grad and detach cut the graph", "[core][autograd]") {
  Tensor w = Tensor::ones({2}).requires_grad_();
  Tensor c = Tensor::ones({2});
  REQUIRE((w * c).requires_grad());
  REQUIRE_FALSE((c * c).requires_grad());
  {
    NoGradGuard guard;
    Tensor y = w * c;
    REQUIRE_FALSE(y.requires_grad());
    REQUIRE(y.grad_fn() == nullptr);
  }
  REQUIRE(grad_enabled());
  Tensor d = (w * 3.0).detach();
  REQUIRE_FALSE(d.requires_grad());
  REQUIRE(d.is_leaf());
}

TEST_CASE("one backward rule alone is checked as the engine checks it", "[core][autograd]") {
  Tensor a = Tensor::from_vector({2, 3}, {2}, DType::Float64).requires_grad_();
  Tensor b = Tensor::from_vector({5, 7}, {2}, DType::Float64).requires_grad_();
  Tensor c = a * b;
  const Node& node = *c.grad_fn();
  std::vector<Tensor> d = apply_backward_rule(node, Tensor::ones({2}, DType::Float64));
  REQUIRE(d[0].to_vector() == b.to_vector());  // d(ab)/da = b
  REQUIRE(d[1].to_vector() == a.to_vector());
  // A dL/dout of another shape or dtype would make the rule read past its buffers.
  REQUIRE_THROWS_WITH(apply_backward_rule(node, Tensor::ones({200, 300}, DType::Float64)),
                      Contains("'mul' produced (2,) float64, so dL/dout must be that too, got "
                               "(200, 300) float64"));
  REQUIRE_THROWS_WITH(apply_backward_rule(node, Tensor::ones({2})), Contains("got (2,) float32"));
  b.detach().fill_(0);  // changed in place after mul used it
  REQUIRE_THROWS_WITH(apply_backward_rule(node, Tensor::ones({2}, DType::Float64)),
                      Contains("changed in place"));
}

TEST_CASE("backward misuse gives clear errors", "[core][autograd]") {
  Tensor x = Tensor::ones({3}).requires_grad_();
  Tensor c = Tensor::ones({3});
  REQUIRE_THROWS_WITH(sum(c).backward(), Contains("does not require grad"));
  REQUIRE_THROWS_WITH((x * 2.0).backward(), Contains("output has shape (3,)"));
  REQUIRE_THROWS_WITH((x * 2.0).backward(Tensor::ones({2})),
                      Contains("gradient of shape (2,)"));
  Tensor loss = sum(x * 2.0);
  loss.backward();
  REQUIRE_THROWS_WITH(loss.backward(), Contains("already freed"));
  // With retain_graph the graph survives a second pass.
  Tensor loss2 = sum(x * 2.0);
  loss2.backward(true);
  loss2.backward();
  REQUIRE(x.grad().to_vector() == std::vector<double>{6, 6, 6});
  REQUIRE_THROWS_WITH(Tensor::from_indices({1}, {1}).requires_grad_(),
                      Contains("int64 tensors"));
}

TEST_CASE("backward with an explicit upstream gradient", "[core][autograd]") {
  Tensor x = Tensor::from_vector({1, 2}, {2}, DType::Float64).requires_grad_();
  Tensor y = x * x;
  y.backward(Tensor::from_vector({10, 100}, {2}, DType::Float64));
  REQUIRE(x.grad().to_vector() == std::vector<double>{20, 400});
}

TEST_CASE("broadcast gradients are summed back to the input shape", "[core][autograd]") {
  Tensor a = Tensor::ones({2, 3}, DType::Float64).requires_grad_();
  Tensor b = Tensor::ones({3}, DType::Float64).requires_grad_();
  Tensor s = Tensor::ones({2, 1}, DType::Float64).requires_grad_();
  sum((a + b) * s).backward();
  REQUIRE(b.grad().shape() == Shape{3});
  REQUIRE(b.grad().to_vector() == std::vector<double>{2, 2, 2});
  REQUIRE(s.grad().shape() == Shape{2, 1});
  REQUIRE(s.grad().to_vector() == std::vector<double>{6, 6});
  REQUIRE(reduce_to(Tensor::ones({4, 2, 3}), {2, 1}).to_vector() == std::vector<double>{12, 12});
  REQUIRE_THROWS_WITH(reduce_to(Tensor::ones({2, 3}), {4}), Contains("cannot be summed back"));
}

TEST_CASE("the graph is sorted topologically", "[core][autograd]") {
  Tensor x = Tensor::ones({2}).requires_grad_();
  Tensor a = x * 2.0;
  Tensor b = exp(a);
  Tensor c = a + b;
  auto order = topological_order(c);
  REQUIRE(order.size() == 3);
  REQUIRE(std::string(order.front()->op) == "mul_scalar");
  REQUIRE(std::string(order.back()->op) == "add");
}

TEST_CASE("float32 and float64 agree; the dtype cast is differentiable", "[core][autograd]") {
  using uwaga::testing::require_gradcheck;
  Tensor x = uwaga::testing::leaf({3, 2}, 5);
  require_gradcheck([](const std::vector<Tensor>& in) {
    return (exp(in[0].to(DType::Float32)) * 2.0).to(DType::Float64);
  }, {x}, {.eps = 1e-3, .atol = 1e-3, .rtol = 1e-2});
}

TEST_CASE("node ids follow creation order on a thread and are unique across threads",
          "[core][autograd]") {
  auto ids_of_a_chain = [] {
    Tensor x = Tensor::from_vector({1, 2}, {2}, DType::Float64).requires_grad_();
    std::vector<std::size_t> ids;
    Tensor y = x;
    for (int i = 0; i < 3; ++i) {
      y = y * x;
      ids.push_back(y.grad_fn()->id);
    }
    return ids;
  };
  std::vector<std::size_t> here = ids_of_a_chain(), there;
  std::thread other([&] { there = ids_of_a_chain(); });
  other.join();
  for (const auto* ids : {&here, &there})
    for (std::size_t i = 1; i < ids->size(); ++i) CHECK((*ids)[i - 1] < (*ids)[i]);
  for (std::size_t a : here)
    for (std::size_t b : there) CHECK(a != b);
}

TEST_CASE("changing a tensor in place after an op used it makes backward fail, naming the op",
          "[core][autograd]") {
  Tensor x = Tensor::from_vector({1, 2, 3}, {3}).requires_grad_();
  Tensor w = Tensor::ones({3});
  Tensor loss = sum(mul(x, w));
  w.fill_(100);  // dL/dx would come out as 100 instead of the 1 the forward pass used
  REQUIRE_THROWS_WITH(loss.backward(),
                      Contains("input 1 (3,) of 'mul' was changed in place after 'mul' used it"));

  // An op's saved output: exp's backward multiplies by the exp(x) it kept, here changed
  // through another handle on the same storage.
  Tensor y = exp(x);
  REQUIRE_NOTHROW(exp(x).backward(Tensor::ones({3})));  // unchanged: fine
  y.detach().fill_(0);
  REQUIRE_THROWS_WITH(y.backward(Tensor::ones({3})),
                      Contains("saved output 0 (3,) of 'exp' was changed in place"));

  // Every in-place method counts: set, set_flat, copy_from, add_inplace.
  Tensor v = Tensor::zeros({2});
  const std::uint64_t v0 = v.version();
  v.set({0}, 1);
  v.set_flat(1, 2);
  v.copy_from(Tensor::ones({2}));
  add_inplace(v, Tensor::ones({2}));
  v.fill_(3);
  REQUIRE(v.version() == v0 + 5);
  REQUIRE(reshape(v, {1, 2}).version() == v.version());  // a view shares the count
}

TEST_CASE("a graph of a million ops is freed without recursion", "[core][autograd]") {
  // Each node holds its inputs, whose nodes hold theirs: freed recursively, a chain this long
  // overflows the stack. Freed unused, after backward with retain_graph, and with two handles on
  // one node.
  const int n = 1000000;
  auto chain = [](const Tensor& leaf, int length) {
    Tensor y = leaf;
    for (int i = 0; i < length; ++i) y = add(y, 1.0);
    return y;
  };
  Tensor x = Tensor::scalar(0.0, DType::Float64).requires_grad_();
  { Tensor unused = chain(x, n); }
  {
    Tensor y = chain(x, n);
    y.backward({}, true);
    REQUIRE(x.grad().item() == 1.0);
  }
  // A chain that forks: two handles on the same middle node, the graph freed once both go.
  Tensor mid = chain(x, 200000);
  Tensor end = mul(mid, mid);
  REQUIRE(end.item() == 4e10);
  mid = Tensor();
  end = Tensor();
  REQUIRE(x.grad().item() == 1.0);
}
