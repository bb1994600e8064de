#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/conv/batch_norm2d.h"
#include "nn/conv/conv2d.h"
#include "nn/inference_scope.h"
#include "nn/init.h"
#include "nn/transformer_encoder_block.h"

using namespace uwaga;
using namespace uwaga::nn;
using Catch::Contains;

namespace {
const TransformerEncoderBlockOptions kBlock{.dim = 8, .heads = 2, .mlp_dim = 16};

// conv → BatchNorm, inside a "decoder": parameters and buffers two levels down.
struct ConvBn : Module {
  explicit ConvBn(Generator& gen) {
    conv1 = register_module("conv1",
                            std::make_shared<Conv2d>(2, 3, 3, Conv2dOptions{.padding = 1}, gen));
    bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(3));
  }
  Tensor forward(const Tensor& x) { return bn1->forward(conv1->forward(x)); }
  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<BatchNorm2d> bn1;
};
struct Net : Module {
  explicit Net(Generator& gen) {
    decoder = register_module("decoder", std::make_shared<ConvBn>(gen));
  }
  std::shared_ptr<ConvBn> decoder;
};
// A module that registers the name `first` as a parameter, then `second` as a buffer.
struct Clash : Module {
  Clash(const std::string& first, const std::string& second) {
    register_parameter(first, Tensor::zeros({1}));
    register_buffer(second, Tensor::zeros({1}));
  }
};
}  // namespace

TEST_CASE("parameters are named hierarchically, as PyTorch names them", "[nn][module]") {
  Generator gen(0);
  TransformerEncoderBlock block(kBlock, gen);
  std::vector<std::string> names;
  for (auto& [name, p] : block.named_parameters()) names.push_back(name);
  std::vector<std::string> expected = {
      "norm1.weight", "norm1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.proj.weight",
      "attn.proj.bias", "norm2.weight", "norm2.bias", "mlp.fc1.weight", "mlp.fc1.bias",
      "mlp.fc2.weight", "mlp.fc2.bias"};
  REQUIRE(names == expected);
  // 2·(8+8) LayerNorms + qkv 24·8+24 + proj 8·8+8 + fc1 16·8+16 + fc2 8·16+8
  REQUIRE(block.num_parameters() == 32 + 216 + 72 + 144 + 136);
  for (auto& p : block.parameters()) REQUIRE(p.requires_grad());
  auto modules = block.named_modules();
  REQUIRE(modules[1].first == "attn");
  REQUIRE(modules[2].first == "attn.qkv");
}

TEST_CASE("each parameter carries its full name, which to_dot draws", "[nn][module]") {
  Generator gen(0);
  TransformerEncoderBlock block(kBlock, gen);
  for (auto& [name, p] : block.named_parameters()) REQUIRE(p.name() == name);
  for (auto& [name, b] : ConvBn(gen).named_buffers()) REQUIRE(b.name() == name);
  const Tensor x = Tensor::randn({1, 3, 8}, gen);
  const std::string dot = to_dot(sum(block.forward(x)));
  REQUIRE_THAT(dot, Contains("attn.qkv.weight (24, 8)"));
  REQUIRE_THAT(dot, Contains("mlp.fc2.bias (8,)"));
}

TEST_CASE("train/eval and zero_grad reach every submodule", "[nn][module]") {
  Generator gen(0);
  TransformerEncoderBlock block(kBlock, gen);
  block.eval();
  REQUIRE_FALSE(block.attn->is_training());
  block.train();
  REQUIRE(block.mlp->fc1->is_training());
  Tensor x = Tensor::randn({2, 3, 8}, gen);
  sum(block.forward(x)).backward();
  REQUIRE(block.mlp->fc1->weight.grad().defined());
  block.zero_grad();
  for (auto& p : block.parameters()) REQUIRE_FALSE(p.grad().defined());
}

TEST_CASE("the same seed builds the same model", "[nn][module]") {
  Generator g1(5), g2(5), g3(6);
  TransformerEncoderBlock a(kBlock, g1), b(kBlock, g2), c(kBlock, g3);
  REQUIRE(a.attn->qkv->weight.to_vector() == b.attn->qkv->weight.to_vector());
  REQUIRE(a.attn->qkv->weight.to_vector() != c.attn->qkv->weight.to_vector());
  // Documented init: LayerNorm γ = 1, β = 0; Linear bias 0; weights trunc-normal(0, 0.02).
  for (double v : a.norm1->weight.to_vector()) REQUIRE(v == 1.0);
  for (double v : a.mlp->fc1->bias.to_vector()) REQUIRE(v == 0.0);
  for (double v : a.mlp->fc1->weight.to_vector()) REQUIRE(std::abs(v) <= 0.04 + 1e-7);
}

TEST_CASE("the initialisers write what the generator draws, in order, as set_flat would",
          "[nn][module][init]") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    Tensor t = Tensor::zeros({3, 5}, dtype);
    Generator gen(7), same(7);
    init::trunc_normal(t, gen, 0.5);
    Tensor expected = Tensor::zeros({3, 5}, dtype);
    for (std::int64_t i = 0; i < expected.numel(); ++i) {  // the readable loop it replaced
      double v;
      do v = same.normal();
      while (std::abs(v) > 2.0);
      expected.set_flat(i, v * 0.5);
    }
    REQUIRE(t.to_vector() == expected.to_vector());
    init::uniform(t, gen, 0.25);
    for (std::int64_t i = 0; i < expected.numel(); ++i)
      expected.set_flat(i, (2 * same.uniform() - 1) * 0.25);
    REQUIRE(t.to_vector() == expected.to_vector());
  }
}

TEST_CASE("a model built for weights to load draws nothing: zeros where a draw would be, and the "
          "same generator state after", "[nn][module][init]") {
  Generator g1(5), g2(5);
  std::unique_ptr<TransformerEncoderBlock> loaded;
  {
    const init::WeightsToLoad skip_draws;
    loaded = std::make_unique<TransformerEncoderBlock>(kBlock, g1);
  }
  for (double v : loaded->attn->qkv->weight.to_vector()) REQUIRE(v == 0.0);
  for (double v : loaded->norm1->weight.to_vector()) REQUIRE(v == 1.0);  // ones still fill
  REQUIRE(g1.next_u64() == g2.next_u64());  // no draws taken
  // The mode ends with its scope: the next model is drawn as usual.
  TransformerEncoderBlock drawn(kBlock, g1), reference(kBlock, g2);
  REQUIRE(drawn.attn->qkv->weight.to_vector() == reference.attn->qkv->weight.to_vector());
  REQUIRE(drawn.attn->qkv->weight.to_vector() != loaded->attn->qkv->weight.to_vector());
  // Loading fills it all: the same model as the drawn one.
  loaded->load_state_dict(drawn.state_dict());
  REQUIRE(loaded->attn->qkv->weight.to_vector() == drawn.attn->qkv->weight.to_vector());
}

TEST_CASE("load_state_dict names what is missing, unexpected or mis-shaped", "[nn][module]") {
  Generator gen(0);
  TransformerEncoderBlock block(kBlock, gen);
  StateDict state = block.state_dict();
  // A round trip through copies restores the values.
  StateDict copies;
  for (auto& [k, v] : state) copies[k] = v.clone().detach();
  block.norm1->weight.fill_(3);
  block.load_state_dict(copies);
  REQUIRE(block.norm1->weight.at({0}) == 1.0);

  StateDict broken = copies;
  broken.erase("attn.qkv.bias");
  broken["attn.extra"] = Tensor::zeros({1});
  broken["mlp.fc1.weight"] = Tensor::zeros({3, 3});
  try {
    block.load_state_dict(broken);
    FAIL("load_state_dict accepted a broken state");
  } catch (const Error& e) {
    std::string m = e.what();
    REQUIRE_THAT(m, Contains("Missing (1): attn.qkv.bias."));
    REQUIRE_THAT(m, Contains("Unexpected (1): attn.extra."));
    REQUIRE_THAT(m, Contains("mlp.fc1.weight: checkpoint (3, 3), model (16, 8)"));
  }
}

TEST_CASE("to(float64) converts parameters in place", "[nn][module]") {
  Generator gen(0);
  TransformerEncoderBlock block(kBlock, gen);
  float before = block.attn->qkv->weight.data<float>()[3];
  block.to(DType::Float64);
  REQUIRE(block.attn->qkv->weight.dtype() == DType::Float64);
  REQUIRE(block.state_dict().at("attn.qkv.weight").dtype() == DType::Float64);
  REQUIRE(block.attn->qkv->weight.data<double>()[3] == static_cast<double>(before));
  // An integer dtype would truncate the weights to 0 and cannot carry gradients.
  REQUIRE_THROWS_WITH(block.to(DType::Int64), Contains("parameters must be float32 or float64"));
  REQUIRE(block.attn->qkv->weight.data<double>()[3] == static_cast<double>(before));
}

TEST_CASE("load_state_dict names an entry that holds an undefined tensor", "[nn][module]") {
  Generator gen(0);
  TransformerEncoderBlock block(kBlock, gen);
  StateDict state;
  for (auto& [k, v] : block.state_dict()) state[k] = v.clone().detach();
  state["mlp.fc2.bias"] = Tensor();
  try {
    block.load_state_dict(state);
    FAIL("load_state_dict accepted an undefined tensor");
  } catch (const Error& e) {
    REQUIRE_THAT(std::string(e.what()), Contains("Undefined tensor (1): mlp.fc2.bias."));
  }
}

TEST_CASE("buffers are named as PyTorch names them, saved in state_dict, never trained",
          "[nn][module]") {
  Generator gen(0);
  Net net(gen);
  std::vector<std::string> buffers, params;
  for (auto& [name, b] : net.named_buffers()) buffers.push_back(name);
  for (auto& [name, p] : net.named_parameters()) params.push_back(name);
  REQUIRE(buffers == std::vector<std::string>{"decoder.bn1.running_mean", "decoder.bn1.running_var",
                                              "decoder.bn1.num_batches_tracked"});
  REQUIRE(params == std::vector<std::string>{"decoder.conv1.weight", "decoder.conv1.bias",
                                             "decoder.bn1.weight", "decoder.bn1.bias"});
  REQUIRE(net.parameters().size() == 4);  // what optimizers get
  REQUIRE(net.num_parameters() == 3 * 2 * 9 + 3 + 3 + 3);
  for (const Tensor& b : net.buffers()) REQUIRE_FALSE(b.requires_grad());
  const StateDict state = net.state_dict();
  REQUIRE(state.size() == 7);
  REQUIRE(state.count("decoder.bn1.running_var") == 1);

  // A round trip through copies restores the buffers; a state without them does not fit.
  StateDict copies;
  for (auto& [k, v] : state) copies[k] = v.clone().detach();
  net.decoder->forward(Tensor::randn({2, 2, 4, 4}, gen));  // training mode: statistics move
  const Tensor& running_var = net.decoder->bn1->running_var;
  REQUIRE(running_var.to_vector() != copies.at("decoder.bn1.running_var").to_vector());
  net.load_state_dict(copies);
  REQUIRE(running_var.to_vector() == copies.at("decoder.bn1.running_var").to_vector());
  REQUIRE(net.decoder->bn1->num_batches_tracked.item() == 0);
  copies.erase("decoder.bn1.running_mean");
  REQUIRE_THROWS_WITH(net.load_state_dict(copies),
                      Contains("Missing (1): decoder.bn1.running_mean."));

  REQUIRE_THROWS_WITH(Clash("x", "x"),
                      Contains("register_buffer: 'x' is already registered as a parameter"));
}

TEST_CASE("alias_buffers shares the source's buffers read-only", "[nn][module]") {
  Generator gen(0);
  Net source(gen), reader(gen);
  reader.alias_parameters(source);
  reader.alias_buffers(source);
  REQUIRE(source.updates_buffers());
  REQUIRE_FALSE(reader.updates_buffers());
  REQUIRE_FALSE(reader.decoder->bn1->updates_buffers());
  const Tensor x = Tensor::randn({2, 2, 4, 4}, gen);
  // The reader, training, normalises with the batch's statistics and writes nothing.
  Tensor y_reader = reader.decoder->forward(x);
  REQUIRE(source.decoder->bn1->num_batches_tracked.item() == 0);
  for (double v : source.decoder->bn1->running_mean.to_vector()) REQUIRE(v == 0.0);
  // The source's update is what the reader sees.
  Tensor y_source = source.decoder->forward(x);
  REQUIRE(y_source.to_vector() == y_reader.to_vector());
  REQUIRE(reader.decoder->bn1->num_batches_tracked.item() == 1);
  REQUIRE(reader.decoder->bn1->running_mean.to_vector() ==
          source.decoder->bn1->running_mean.to_vector());
  source.eval();
  reader.eval();
  REQUIRE(reader.decoder->forward(x).to_vector() == source.decoder->forward(x).to_vector());

  TransformerEncoderBlock no_buffers(kBlock, gen);
  REQUIRE_THROWS_WITH(no_buffers.alias_buffers(source),
                      Contains("alias_buffers: this module has 0 buffers, the source 3"));
}

namespace {
// A module with one unnamed part (a block) and one named part (a head).
class WithUnnamedPart : public Module {
 public:
  explicit WithUnnamedPart(Generator& gen) {
    scale = register_parameter("scale", Tensor::ones({1}));
    block = register_unnamed_module(std::make_shared<TransformerEncoderBlock>(kBlock, gen));
    head = register_module("head", std::make_shared<Linear>(LinearOptions{.in = 8, .out = 2}, gen));
  }
  void register_empty_name(Generator& gen) {
    register_module("", std::make_shared<Linear>(LinearOptions{.in = 8, .out = 2}, gen));
  }
  Tensor scale;
  std::shared_ptr<TransformerEncoderBlock> block;
  std::shared_ptr<Linear> head;
};
}  // namespace

TEST_CASE("an unnamed part's parameters and submodules are listed as the module's own",
          "[nn][module]") {
  Generator gen(0);
  WithUnnamedPart m(gen);
  std::vector<std::string> names;
  for (auto& [name, p] : m.named_parameters()) names.push_back(name);
  REQUIRE(names.size() == 15);
  REQUIRE(names[0] == "scale");
  REQUIRE(names[1] == "norm1.weight");  // not ".norm1.weight"
  REQUIRE(names[13] == "head.weight");
  auto modules = m.named_modules();
  REQUIRE(modules[0].first == "norm1");
  REQUIRE(modules[0].second == m.block->norm1.get());
  REQUIRE(modules.back().first == "head");
  // It trains, saves and loads as part of the module.
  m.eval();
  REQUIRE_FALSE(m.block->attn->is_training());
  StateDict state = m.state_dict();
  REQUIRE(state.count("attn.qkv.weight"));
  m.load_state_dict(state);
  REQUIRE_THROWS_WITH(m.register_empty_name(gen), Contains("a submodule needs a name"));
}

namespace {
// A module whose unnamed part holds buffers.
class WithUnnamedBatchNorm : public Module {
 public:
  WithUnnamedBatchNorm() { bn = register_unnamed_module(std::make_shared<BatchNorm2d>(3)); }
  std::shared_ptr<BatchNorm2d> bn;
};
}  // namespace

TEST_CASE("an unnamed part's buffers are the module's, and aliased with them", "[nn][module]") {
  WithUnnamedBatchNorm source, replica;
  std::vector<std::string> names;
  for (auto& [name, b] : source.named_buffers()) names.push_back(name);
  REQUIRE(names == std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"});
  REQUIRE(source.state_dict().count("running_var"));
  replica.alias_buffers(source);
  REQUIRE_FALSE(replica.bn->updates_buffers());  // the part reads the source's, never writes
  REQUIRE(source.bn->updates_buffers());
  REQUIRE(replica.bn->running_var.shares_storage_with(source.bn->running_var));
}

namespace {
// Counts how often its initialiser runs.
struct Counted : Module {
  explicit Counted(int& runs) {
    weight = register_parameter("weight", {3, 2}, [&](Tensor& w) {
      ++runs;
      init::ones(w);
    });
  }
  Tensor weight;
};
}  // namespace

TEST_CASE("declare-only mode: names and shapes as built, no storage, no initialiser run",
          "[nn][module]") {
  Generator gen(0);
  const Net built(gen);  // a convolution, a BatchNorm with its buffers, one of them int64
  REQUIRE_FALSE(declaring_only());
  StateShapes declared;
  {
    DeclareOnly declare_only;
    REQUIRE(declaring_only());
    const Net net(gen);
    declared = net.state_shapes();
    for (const auto& [name, t] : net.state_dict()) {
      INFO(name);
      CHECK(is_declared_only(t));
      CHECK(t.dtype() == built.state_dict().at(name).dtype());
    }
    CHECK(net.named_parameters()[0].second.requires_grad());
    CHECK(net.named_parameters()[0].second.name() == "decoder.conv1.weight");
  }
  REQUIRE_FALSE(declaring_only());  // the mode ends with its scope
  CHECK(declared == built.state_shapes());
  CHECK(declared.at("decoder.bn1.num_batches_tracked") == Shape{});
  CHECK(declared.size() == 7);
  for (const auto& [name, t] : built.state_dict()) CHECK_FALSE(is_declared_only(t));

  // The initialiser runs when a module is built, never when it is declared.
  int runs = 0;
  Counted real(runs);
  CHECK(runs == 1);
  CHECK(real.weight.at({2, 1}) == 1.0);
  CHECK(declared_shapes<Counted>(runs).at("weight") == Shape{3, 2});
  CHECK(runs == 1);
  // And the generator is not drawn from: what follows a declared model is built as without it.
  Generator a(7), b(7);
  declared_shapes<TransformerEncoderBlock>(kBlock, a);
  CHECK(a.next_u64() == b.next_u64());
}

TEST_CASE("declare-only mode nests and ends on an exception", "[nn][module]") {
  {
    DeclareOnly outer;
    { DeclareOnly inner; }
    CHECK(declaring_only());  // the inner scope restores the outer mode
  }
  CHECK_FALSE(declaring_only());
  // A constructor that throws leaves the mode as it found it.
  Generator gen(0);
  CHECK_THROWS_WITH(declared_shapes<Linear>(LinearOptions{.in = 0, .out = 2}, gen),
                    Contains("in must be positive"));
  CHECK_FALSE(declaring_only());
}

TEST_CASE("InferenceScope: eval mode and no graph for its scope, then the flag as it was",
          "[nn][module]") {
  Generator gen(0);
  TransformerEncoderBlock block(kBlock, gen);
  REQUIRE(block.is_training());
  REQUIRE(grad_enabled());
  {
    const InferenceScope inference(block);
    CHECK_FALSE(block.is_training());
    CHECK_FALSE(block.norm1->is_training());  // every submodule
    CHECK_FALSE(grad_enabled());
  }
  CHECK(block.is_training());
  CHECK(grad_enabled());
  block.eval();  // a model in eval mode stays in it
  { const InferenceScope inference(block); }
  CHECK_FALSE(block.is_training());
  block.train();
  try {  // and an evaluation that throws leaves the model training again
    const InferenceScope inference(block);
    fail("an evaluation that fails");
  } catch (const Error&) {
  }
  CHECK(block.is_training());
  CHECK(grad_enabled());
}
