// My own model on uwaga: a two-block transformer learns to reverse a sequence of digits.
#include <cstdio>
#include <uwaga/core/uwaga.h>
#include <uwaga/nn/embedding.h>
#include <uwaga/nn/linear.h>
#include <uwaga/nn/transformer_encoder_block.h>
#include <uwaga/optim/adam.h>
#include <uwaga/optim/checkpoint.h>
#include <uwaga/optim/trainer.h>
using namespace uwaga; using namespace uwaga::nn; using namespace uwaga::optim;
constexpr std::int64_t kDigits = 10, B = 32, T = 12, D = 32;  // batch, sequence length, width
// The data: batch i is B sequences of T random digits (seeded by i), and the same reversed.
struct Reversing : BatchSource {
  std::int64_t batches_per_epoch() const override { return 100; }
  void begin_epoch(std::int64_t) override {}  // every epoch the same batches, in the same order
  Batch batch(std::int64_t i) override {
    Generator gen(i);
    std::vector<std::int64_t> digits(B * T), reversed(B * T);
    for (auto& d : digits) d = static_cast<std::int64_t>(gen.below(kDigits));
    for (std::int64_t p = 0; p < B * T; ++p) reversed[p] = digits[p - p % T + T - 1 - p % T];
    return {{Tensor::from_indices(digits, {B, T})}, Tensor::from_indices(reversed, {B, T})};
  }  // inputs {digits (B, T)}, targets (B, T)
};

// The model: digit and place embeddings, two pre-LN transformer blocks, a digit classifier.
struct Reverser : Model {
  std::shared_ptr<Embedding> embed, place;
  std::shared_ptr<TransformerEncoderBlock> block1, block2;
  std::shared_ptr<Linear> head;
  explicit Reverser(Generator gen = Generator(0)) {  // gen draws the initial weights
    TransformerEncoderBlockOptions block{.dim = D, .heads = 4, .mlp_dim = 4 * D};
    embed = register_module("embed", std::make_shared<Embedding>(kDigits, D, gen));
    place = register_module("place", std::make_shared<Embedding>(T, D, gen));
    block1 = register_module("blocks.0", std::make_shared<TransformerEncoderBlock>(block, gen));
    block2 = register_module("blocks.1", std::make_shared<TransformerEncoderBlock>(block, gen));
    head = register_module("head", std::make_shared<Linear>(LinearOptions{D, kDigits}, gen));
  }
  Tensor forward_batch(const std::vector<Tensor>& x) override {  // {digits (B, T)} -> (B, T, 10)
    Tensor z = embed->forward(x.at(0)) + place->forward(Tensor::arange(0, T, 1, DType::Int64));
    return head->forward(block2->forward(block1->forward(z)));  // z: (B, T, D) + (T, D)
  }
  // The Trainer trains a replica on each thread, its weights pointed at this model's.
  std::shared_ptr<Model> replica() const override { return std::make_shared<Reverser>(); }
};

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "runs/my_model";  // a new directory
  Reverser model(Generator(1));
  Reversing data;
  CrossEntropyLoss loss;
  Adam adam(make_param_groups(model, 0.0), {.lr = 3e-3});
  Trainer(model, data, loss, adam, ConstantLr(3e-3), {.epochs = 3, .out_dir = out}).fit();
  Reverser reloaded(Generator(2));  // other weights, then the checkpoint's
  load_checkpoint(out + "/checkpoint.safetensors", reloaded, nullptr);
  Batch test = data.batch(1000);  // sequences it never trained on
  const double a = loss(model.forward_batch(test.inputs), test.targets).item();
  const double b = loss(reloaded.forward_batch(test.inputs), test.targets).item();
  std::printf("loss on new sequences: trained %.3g, reloaded %.3g\n", a, b);
  return a == b ? 0 : 1;
}
