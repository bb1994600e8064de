// SGD, Adam and AdamW against PyTorch's trajectories (tests/golden/optim_*.safetensors), their
// parameter groups, and the state round trip a checkpoint relies on.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "core/uwaga.h"
#include "nn/transformer_encoder_block.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "tests/support/golden.h"

using namespace uwaga;
using namespace uwaga::optim;
using namespace uwaga::testing;
using Catch::Contains;

namespace {

using MakeOptimizer = std::function<std::unique_ptr<Optimizer>(std::vector<ParamGroup>)>;

// The optimizer a golden file was written with, from its metadata.
MakeOptimizer optimizer_for(const Golden& g) {
  const std::string kind = g.metadata("optimizer");
  if (kind == "sgd" || kind == "sgd_nesterov") {
    REQUIRE(g.metadata_double("dampening") == 0.0);
    SgdOptions o;
    o.lr = g.metadata_double("lr");
    o.momentum = g.metadata_double("momentum");
    o.nesterov = g.metadata_int("nesterov") != 0;
    return [o](std::vector<ParamGroup> groups) { return std::make_unique<Sgd>(groups, o); };
  }
  REQUIRE(g.metadata_int("amsgrad") == 0);
  AdamOptions o;
  o.lr = g.metadata_double("lr");
  o.beta1 = g.metadata_double("beta1");
  o.beta2 = g.metadata_double("beta2");
  o.eps = g.metadata_double("eps");
  if (kind == "adamw")
    return [o](std::vector<ParamGroup> groups) { return std::make_unique<AdamW>(groups, o); };
  REQUIRE(kind == "adam");
  return [o](std::vector<ParamGroup> groups) { return std::make_unique<Adam>(groups, o); };
}

// Concatenates `copies` copies of t, flattened: a parameter big enough for the OpenMP path.
Tensor tiled(const Tensor& t, std::int64_t copies, DType dtype) {
  std::vector<double> v = t.to_vector(), out;
  for (std::int64_t c = 0; c < copies; ++c) out.insert(out.end(), v.begin(), v.end());
  return Tensor::from_vector(out, {static_cast<std::int64_t>(out.size())}, dtype);
}

// Replays the golden file's five steps on `w` (the golden (4, 3) parameter tiled `copies`
// times, in `dtype`) and compares after every step.
void replay_golden(const std::string& file, DType dtype, std::int64_t copies, double atol,
                   double rtol) {
  Golden g = load_golden(file);
  const std::int64_t steps = g.metadata_int("steps");
  REQUIRE(steps == 5);
  Tensor w = tiled(g.get("param.w"), copies, dtype).requires_grad_();
  std::unique_ptr<Optimizer> opt =
      optimizer_for(g)({ParamGroup{{"w"}, {w}, g.metadata_double("weight_decay")}});
  for (std::int64_t t = 1; t <= steps; ++t) {
    const std::string step = "step" + std::to_string(t);
    Tensor grad = tiled(g.get("grad." + step), copies, dtype);
    const std::vector<double> grad_before = grad.to_vector();
    w.set_grad(grad);
    opt->step();
    Tensor expected = tiled(g.get("param_after." + step), copies, DType::Float64);
    check_close(file + " " + dtype_name(dtype) + " x" + std::to_string(copies) + " after " + step,
                w, expected, atol, rtol);
    REQUIRE(grad.to_vector() == grad_before);  // weight decay must not leak into the gradient
  }
  REQUIRE(opt->steps() == steps);
}

}  // namespace

TEST_CASE("SGD, Adam and AdamW follow PyTorch's trajectories", "[optim]") {
  for (const char* file : {"optim_sgd", "optim_sgd_nesterov", "optim_adam", "optim_adamw"}) {
    SECTION(file) {
      replay_golden(file, DType::Float64, 1, 1e-14, 1e-12);
      // 36000 elements: above kParallelThreshold, so the update runs on the OpenMP path.
      REQUIRE(12 * 3000 > kParallelThreshold);
      replay_golden(file, DType::Float64, 3000, 1e-14, 1e-12);
      replay_golden(file, DType::Float32, 1, 1e-6, 1e-6);
    }
  }
}

TEST_CASE("the golden files exercise what they claim to", "[optim]") {
  // Guards against a vacuous comparison: each trajectory really moves, and the files differ in
  // the setting under test.
  Golden sgd = load_golden("optim_sgd"), nesterov = load_golden("optim_sgd_nesterov");
  Golden adam = load_golden("optim_adam"), adamw = load_golden("optim_adamw");
  for (Golden* g : {&sgd, &nesterov, &adam, &adamw})
    REQUIRE_FALSE(all_close(g->get("param_after.step5"), g->get("param.w"), 1e-3, 0));
  REQUIRE(sgd.metadata_double("weight_decay") > 0);
  REQUIRE(nesterov.metadata_int("nesterov") == 1);
  REQUIRE(adam.metadata_double("weight_decay") > 0);
  REQUIRE(adamw.metadata_double("weight_decay") > 0);
}

TEST_CASE("Adam and AdamW apply weight decay differently", "[optim]") {
  // Same gradient, same decay: the L2 term goes through Adam's normalisation, AdamW's does not.
  Tensor a = Tensor::from_vector({1.0, -10.0}, {2}, DType::Float64).requires_grad_();
  Tensor b = Tensor::from_vector({1.0, -10.0}, {2}, DType::Float64).requires_grad_();
  Adam adam({ParamGroup{{"p"}, {a}, 0.1}}, {.lr = 0.01});
  AdamW adamw({ParamGroup{{"p"}, {b}, 0.1}}, {.lr = 0.01});
  REQUIRE_FALSE(adam.decoupled_weight_decay());
  REQUIRE(adamw.decoupled_weight_decay());
  Tensor grad = Tensor::from_vector({0.5, 0.5}, {2}, DType::Float64);
  a.set_grad(grad);
  b.set_grad(grad);
  adam.step();
  adamw.step();
  // On the first step m̂/√v̂ = g'/|g'|, so Adam moves each weight by lr against the sign of
  // g' = g + λp = (0.6, −0.5): the decay flipped the second weight's direction...
  CHECK(a.flat(0) == Approx(0.99).epsilon(1e-9));
  CHECK(a.flat(1) == Approx(-9.99).epsilon(1e-9));
  // ...while AdamW shrinks each weight by (1 − lr·λ), then moves it by lr against the sign of g.
  CHECK(b.flat(0) == Approx(1.0 * (1 - 0.001) - 0.01).epsilon(1e-9));
  CHECK(b.flat(1) == Approx(-10.0 * (1 - 0.001) - 0.01).epsilon(1e-9));
}

TEST_CASE("parameters without a gradient are skipped", "[optim]") {
  Tensor used = Tensor::ones({3}).requires_grad_();
  Tensor unused = Tensor::ones({2}).requires_grad_();
  for (int kind = 0; kind < 2; ++kind) {
    std::vector<ParamGroup> groups = {ParamGroup{{"used", "unused"}, {used, unused}, 0.1}};
    std::unique_ptr<Optimizer> opt;
    if (kind == 0) opt = std::make_unique<Sgd>(groups, SgdOptions{.lr = 0.1, .momentum = 0.9});
    else opt = std::make_unique<AdamW>(groups, AdamOptions{.lr = 0.1});
    used.set_grad(Tensor::ones({3}));
    unused.zero_grad();
    opt->step();
    REQUIRE(used.flat(0) != 1.0f);
    REQUIRE(unused.to_vector() == std::vector<double>{1.0, 1.0});  // not even decayed
    auto state = opt->state();
    REQUIRE(state.count("step"));
    for (const auto& [key, value] : state) REQUIRE(key.rfind("unused.", 0) == std::string::npos);
    opt->zero_grad();
    REQUIRE_FALSE(used.grad().defined());
  }
}

TEST_CASE("parameter groups leave biases, LayerNorm and embeddings undecayed", "[optim]") {
  Generator gen(0);
  nn::TransformerEncoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 16}, gen);
  std::vector<ParamGroup> groups = make_param_groups(block, 0.05);
  REQUIRE(groups.size() == 2);
  REQUIRE(groups[0].weight_decay == 0.05);
  REQUIRE(groups[0].names == std::vector<std::string>{"attn.qkv.weight", "attn.proj.weight",
                                                      "mlp.fc1.weight", "mlp.fc2.weight"});
  REQUIRE(groups[1].weight_decay == 0.0);
  REQUIRE(groups[1].names ==
          std::vector<std::string>{"norm1.weight", "norm1.bias", "attn.qkv.bias", "attn.proj.bias",
                                   "norm2.weight", "norm2.bias", "mlp.fc1.bias", "mlp.fc2.bias"});
  // The groups hold the module's tensors themselves, not copies.
  REQUIRE(groups[0].params[0].shares_storage_with(block.attn->qkv->weight));

  Tensor matrix = Tensor::zeros({4, 8}), vector = Tensor::zeros({8});
  REQUIRE_FALSE(default_no_decay("blocks.0.mlp.fc1.weight", matrix));
  REQUIRE(default_no_decay("blocks.0.mlp.fc1.bias", vector));
  REQUIRE(default_no_decay("token_embedding.weight", matrix));
  REQUIRE(default_no_decay("pos_embed", Tensor::zeros({1, 5, 8})));
  REQUIRE(default_no_decay("cls_token", Tensor::zeros({1, 1, 8})));

  // Everything undecayed: the empty decayed group is dropped.
  auto all = make_param_groups(block, 0.05, [](const std::string&, const Tensor&) { return true; });
  REQUIRE(all.size() == 1);
  REQUIRE(all[0].params.size() == 12);
  Adam adam(all, {});
  REQUIRE(adam.groups().size() == 1);
}

TEST_CASE("an optimizer over a TransformerEncoderBlock lowers its loss", "[optim]") {
  Generator gen(3);
  nn::TransformerEncoderBlock block({.dim = 8, .heads = 2, .mlp_dim = 16}, gen);
  Tensor x = Tensor::randn({2, 4, 8}, gen), target = Tensor::randn({2, 4, 8}, gen);
  AdamW opt(make_param_groups(block, 0.01), {.lr = 1e-2});
  auto loss_now = [&] {
    Tensor d = block.forward(x) - target;
    return mean(d * d);
  };
  const double first = loss_now().item();
  for (int i = 0; i < 30; ++i) {
    opt.zero_grad();
    loss_now().backward();
    opt.step();
  }
  REQUIRE(loss_now().item() < 0.5 * first);
}

namespace {

// Two parameters (one 2-D, decayed; one 1-D, not), float32.
std::vector<ParamGroup> groups_over(const Tensor& w, const Tensor& b) {
  return {ParamGroup{{"layer.weight"}, {w}, 0.1}, ParamGroup{{"layer.bias"}, {b}, 0.0}};
}

void set_random_grads(std::vector<Tensor> params, Generator& gen) {
  for (Tensor& p : params) p.set_grad(Tensor::randn(p.shape(), gen, p.dtype()));
}

// A continues; B is a fresh optimizer over copies of A's parameters, restored from A's state.
// From then on both must take bit-identical steps.
void check_round_trip(const MakeOptimizer& make, const std::vector<std::string>& expected_keys) {
  Generator gen(11);
  Tensor w = Tensor::randn({4, 3}, gen).requires_grad_(),
         b = Tensor::randn({3}, gen).requires_grad_();
  std::unique_ptr<Optimizer> a = make(groups_over(w, b));
  for (int i = 0; i < 3; ++i) {
    set_random_grads({w, b}, gen);
    a->step();
  }
  std::map<std::string, Tensor> state = a->state();
  std::vector<std::string> keys;
  for (const auto& entry : state) keys.push_back(entry.first);
  REQUIRE(keys == expected_keys);
  REQUIRE(state.at("step").item() == 3);

  Tensor w2 = w.detach().clone().requires_grad_(), b2 = b.detach().clone().requires_grad_();
  std::unique_ptr<Optimizer> restored = make(groups_over(w2, b2));
  restored->load_state(state);
  REQUIRE(restored->steps() == 3);
  for (int i = 0; i < 3; ++i) {
    set_random_grads({w, b}, gen);
    w2.set_grad(w.grad().clone());
    b2.set_grad(b.grad().clone());
    a->step();
    restored->step();
    REQUIRE(w2.to_vector() == w.to_vector());
    REQUIRE(b2.to_vector() == b.to_vector());
  }
  // ...and a fresh optimizer without the state does not (the test can tell the difference).
  Tensor w3 = w.detach().clone().requires_grad_(), b3 = b.detach().clone().requires_grad_();
  std::unique_ptr<Optimizer> fresh = make(groups_over(w3, b3));
  w3.set_grad(Tensor::ones_like(w3));
  w.set_grad(Tensor::ones_like(w));
  b.zero_grad();
  fresh->step();
  a->step();
  REQUIRE(w3.to_vector() != w.to_vector());
}

}  // namespace

TEST_CASE("state() and load_state() reproduce the next steps bit for bit", "[optim]") {
  SECTION("SGD with momentum") {
    check_round_trip(
        [](std::vector<ParamGroup> g) {
          return std::make_unique<Sgd>(g, SgdOptions{.lr = 0.1, .momentum = 0.9});
        },
        {"layer.bias.momentum_buffer", "layer.weight.momentum_buffer", "step"});
  }
  SECTION("SGD with Nesterov momentum") {
    check_round_trip(
        [](std::vector<ParamGroup> g) {
          return std::make_unique<Sgd>(g, SgdOptions{.lr = 0.1, .momentum = 0.9, .nesterov = true});
        },
        {"layer.bias.momentum_buffer", "layer.weight.momentum_buffer", "step"});
  }
  const std::vector<std::string> adam_keys = {
      "layer.bias.exp_avg",   "layer.bias.exp_avg_sq",   "layer.bias.step",
      "layer.weight.exp_avg", "layer.weight.exp_avg_sq", "layer.weight.step",
      "step"};
  SECTION("Adam") {
    check_round_trip(
        [](std::vector<ParamGroup> g) {
          return std::make_unique<Adam>(g, AdamOptions{.lr = 1e-2});
        },
        adam_keys);
  }
  SECTION("AdamW") {
    check_round_trip(
        [](std::vector<ParamGroup> g) {
          return std::make_unique<AdamW>(g, AdamOptions{.lr = 1e-2});
        },
        adam_keys);
  }
}

TEST_CASE("state() returns a snapshot, and load_state() copies", "[optim]") {
  Tensor w = Tensor::ones({2}).requires_grad_();
  Adam opt({ParamGroup{{"w"}, {w}, 0.0}}, {.lr = 0.1});
  w.set_grad(Tensor::ones({2}));
  opt.step();
  auto state = opt.state();
  const std::vector<double> m = state.at("w.exp_avg").to_vector();
  opt.step();
  REQUIRE(state.at("w.exp_avg").to_vector() == m);  // the snapshot did not move with the optimizer
  opt.load_state(state);
  state.at("w.exp_avg").fill_(123.0);
  REQUIRE(opt.state().at("w.exp_avg").to_vector() == m);  // nor is the loaded state shared
  // A checkpoint without per-parameter counts falls back on "step".
  state = opt.state();
  state.erase("w.step");
  opt.load_state(state);
  REQUIRE(opt.state().at("w.step").item() == 1);
}

TEST_CASE("load_state rejects state that does not fit", "[optim]") {
  Tensor w = Tensor::ones({2, 2}).requires_grad_();
  Sgd sgd({ParamGroup{{"w"}, {w}, 0.0}}, {.lr = 0.1, .momentum = 0.9});
  Adam adam({ParamGroup{{"w"}, {w}, 0.0}}, {.lr = 0.1});
  w.set_grad(Tensor::ones({2, 2}));
  adam.step();
  REQUIRE_THROWS_WITH(sgd.load_state(adam.state()),
                      Contains("Sgd.load_state: unexpected entries") && Contains("w.exp_avg"));
  REQUIRE_THROWS_WITH(adam.load_state({}), Contains("Adam.load_state: the state has no \"step\""));
  auto bad_shape = adam.state();
  bad_shape["w.exp_avg"] = Tensor::zeros({4});
  REQUIRE_THROWS_WITH(adam.load_state(bad_shape),
                      Contains("\"w.exp_avg\" has shape (4,)") && Contains("(2, 2)"));
  auto half = adam.state();
  half.erase("w.exp_avg_sq");
  REQUIRE_THROWS_WITH(adam.load_state(half), Contains("only one of exp_avg and exp_avg_sq"));
  // A failed load leaves the optimizer as it was.
  REQUIRE(adam.steps() == 1);
  REQUIRE(adam.state().count("w.exp_avg_sq"));
}

TEST_CASE("invalid optimizer options and groups give clear errors", "[optim]") {
  Tensor w = Tensor::ones({2}).requires_grad_();
  auto one = [&] { return std::vector<ParamGroup>{ParamGroup{{"w"}, {w}, 0.0}}; };
  REQUIRE_THROWS_WITH(Sgd(one(), {.lr = -0.1}), Contains("Sgd: lr must be") && Contains("-0.1"));
  REQUIRE_THROWS_WITH(Sgd(one(), {.lr = 0.1, .momentum = 1.5}),
                      Contains("Sgd: momentum must be in [0, 1), got 1.5"));
  REQUIRE_THROWS_WITH(Sgd(one(), {.lr = 0.1, .nesterov = true}),
                      Contains("Sgd: Nesterov momentum needs momentum > 0"));
  REQUIRE_THROWS_WITH(Adam(one(), {.beta1 = 1.0}),
                      Contains("Adam: beta1 must be in [0, 1), got 1"));
  REQUIRE_THROWS_WITH(AdamW(one(), {.beta2 = -0.5}), Contains("AdamW: beta2 must be in [0, 1)"));
  REQUIRE_THROWS_WITH(Adam(one(), {.eps = -1e-8}), Contains("Adam: eps must be"));
  REQUIRE_THROWS_WITH(Adam(one(), {.eps = 0}), Contains("Adam: eps must be a finite number > 0"));

  REQUIRE_THROWS_WITH(Adam({ParamGroup{{}, {w}, 0.0}}, {}), Contains("1 parameters but 0 names"));
  REQUIRE_THROWS_WITH(Adam({ParamGroup{{"w"}, {w}, -0.1}}, {}), Contains("weight_decay -0.1"));
  REQUIRE_THROWS_WITH(Adam({ParamGroup{{"w"}, {w}, 0.0}, ParamGroup{{"w"}, {w}, 0.1}}, {}),
                      Contains("'w' appears twice"));
  // The same tensor under two names would be stepped twice.
  REQUIRE_THROWS_WITH(Sgd({ParamGroup{{"a", "b"}, {w, w}, 0.0}}, {}),
                      Contains("'a' and 'b' are the same tensor"));
  REQUIRE_THROWS_WITH(Sgd({ParamGroup{{"a", "b"}, {w, reshape(w.detach(), {-1})}, 0.0}}, {}),
                      Contains("share its storage"));
  REQUIRE_THROWS_WITH(Adam({ParamGroup{}, ParamGroup{}}, {}),
                      Contains("no parameters to optimize"));
  REQUIRE_THROWS_WITH(Sgd({ParamGroup{{"i"}, {Tensor::from_indices({1}, {1})}, 0.0}}, {}),
                      Contains("'i' has dtype int64"));

  struct Empty : nn::Module {};
  Empty empty;
  REQUIRE_THROWS_WITH(make_param_groups(empty, 0.1), Contains("the model has no parameters"));

  REQUIRE_THROWS_WITH(w.set_grad(Tensor::ones({2}, DType::Float64)),
                      Contains("set_grad: gradient dtype float64 differs from tensor dtype float32"));
  Adam adam(one(), {});
  REQUIRE_THROWS_WITH(adam.set_lr(-1), Contains("optimizer: the learning rate must be"));
  REQUIRE_THROWS_WITH(adam.set_lr(std::nan("")), Contains("got nan"));
}

TEST_CASE("a step that fails changes nothing", "[optim]") {
  // 'b' is converted to float64 after the first step, so its state no longer fits: the second
  // step fails on 'b', and must not have updated 'a' (or counted a step for it) before failing.
  Generator gen(3);
  const nn::LinearOptions no_bias{.in = 2, .out = 2, .bias = false};
  nn::Linear a(no_bias, gen), b(no_bias, gen);
  auto groups = [&] {
    return std::vector<ParamGroup>{ParamGroup{{"a"}, {a.weight}, 0.0},
                                   ParamGroup{{"b"}, {b.weight}, 0.0}};
  };
  auto grads = [&] {
    a.weight.set_grad(Tensor::full({2, 2}, 0.5));
    b.weight.set_grad(Tensor::full({2, 2}, 0.5, b.weight.dtype()));
  };
  for (const bool momentum : {false, true}) {
    std::unique_ptr<Optimizer> opt;
    if (momentum) opt = std::make_unique<Sgd>(groups(), SgdOptions{.lr = 0.1, .momentum = 0.9});
    else opt = std::make_unique<Adam>(groups(), AdamOptions{});
    grads();
    opt->step();
    b.to(DType::Float64);
    grads();
    const std::vector<double> before = a.weight.to_vector();
    REQUIRE_THROWS_WITH(opt->step(), Contains("'b'") && Contains("float32"));
    CHECK(a.weight.to_vector() == before);
    b.to(DType::Float32);
  }
  // Adam's step count for 'a' is still 1: its next step is the second.
  Adam adam(groups(), AdamOptions{});
  grads();
  adam.step();
  b.to(DType::Float64);
  grads();
  REQUIRE_THROWS(adam.step());
  b.to(DType::Float32);
  grads();
  adam.step();
  REQUIRE(adam.state().at("a.step").item() == 2);
}
