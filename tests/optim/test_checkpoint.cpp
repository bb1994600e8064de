// Checkpoints: a round trip restores model, Adam state and metadata exactly; a checkpoint that
// does not fit, or a damaged file, gives an error naming the file and the problem; a failed save
// leaves the previous checkpoint whole.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/reduction.h"
#include "core/safetensors.h"
#include "nn/linear.h"
#include "nn/mlp.h"
#include "optim/adam.h"
#include "optim/checkpoint.h"
#include "tests/support/temp_dir.h"
#include "tests/support/same_parameters.h"

using namespace uwaga;
using uwaga::testing::parameter_values;
using namespace uwaga::optim;
namespace fs = std::filesystem;

namespace {

using uwaga::testing::TempDir;

// A few Adam steps on a made-up loss, so the optimizer has state worth saving.
void train_a_little(nn::MLP& model, Adam& adam, int steps, std::uint64_t seed) {
  Generator gen(seed);
  for (int i = 0; i < steps; ++i) {
    adam.zero_grad();
    Tensor x = Tensor::randn({5, 4}, gen);
    Tensor loss = sum(mul(model.forward(x), model.forward(x)));
    loss.backward();
    adam.step();
  }
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("checkpoint round trip restores model, Adam state and metadata", "[optim][checkpoint]") {
  TempDir dir("ckpt-roundtrip");
  const std::string path = dir.file("checkpoint.safetensors");

  Generator init_a(1);
  nn::MLP a({.dim = 4, .hidden = 8}, init_a);
  Adam adam_a(make_param_groups(a, 0.01), AdamOptions{});
  train_a_little(a, adam_a, 3, 7);

  Generator task_gen(99);
  task_gen.normal();  // leaves a spare normal: the state has has_spare = true
  CheckpointInfo info;
  info.step = 3;
  info.epoch = 1;
  info.batch_in_epoch = 2;
  info.epoch_finished = false;
  info.lr = 0.1 + 0.2;  // not a short decimal: must come back bit for bit
  info.config = R"({"dim": 4, "hidden": 8, "name": "mlp"})";
  info.task_state = generator_state_to_string(task_gen.state());
  save_checkpoint(path, a, &adam_a, info);

  // The file is plain safetensors, with the documented names.
  SafetensorsFile raw = load_safetensors(path);
  CHECK(raw.metadata.at("format") == "uwaga-checkpoint-1");
  CHECK(raw.tensors.count("model.fc1.weight") == 1);
  CHECK(raw.tensors.count("optim.fc1.weight.exp_avg") == 1);
  CHECK(raw.tensors.count("optim.step") == 1);

  Generator init_b(2);
  nn::MLP b({.dim = 4, .hidden = 8}, init_b);
  Adam adam_b(make_param_groups(b, 0.01), AdamOptions{});
  REQUIRE(parameter_values(a) != parameter_values(b));
  CheckpointInfo loaded = load_checkpoint(path, b, &adam_b);

  CHECK(parameter_values(a) == parameter_values(b));
  CHECK(loaded.step == 3);
  CHECK(loaded.epoch == 1);
  CHECK(loaded.batch_in_epoch == 2);
  CHECK_FALSE(loaded.epoch_finished);
  CHECK(loaded.lr == info.lr);
  CHECK(loaded.config == info.config);
  CHECK(loaded.task_state == info.task_state);
  CHECK(adam_b.steps() == 3);
  auto state_a = adam_a.state(), state_b = adam_b.state();
  REQUIRE(state_a.size() == state_b.size());
  for (const auto& [key, t] : state_a) CHECK(t.to_vector() == state_b.at(key).to_vector());

  // Restored exactly: the next steps agree bit for bit.
  train_a_little(a, adam_a, 2, 11);
  train_a_little(b, adam_b, 2, 11);
  CHECK(parameter_values(a) == parameter_values(b));

  // The metadata alone, without the tensors.
  CheckpointInfo header = read_checkpoint_info(path);
  CHECK(header.step == 3);
  CHECK(header.lr == info.lr);
  CHECK(header.config == info.config);

  // A model alone (no optimizer) loads too.
  Generator init_c(3);
  nn::MLP c({.dim = 4, .hidden = 8}, init_c);
  load_checkpoint(path, c, nullptr);
  Generator init_d(1);
  nn::MLP d({.dim = 4, .hidden = 8}, init_d);
  Adam adam_d(make_param_groups(d, 0.01), AdamOptions{});
  train_a_little(d, adam_d, 3, 7);
  CHECK(parameter_values(c) == parameter_values(d));
}

namespace {

// A model that keeps a bfloat16 copy of its weight beside it, as a buffer: a tensor a checkpoint
// must store as it is.
class WithBfloat16Copy : public nn::Module {
 public:
  WithBfloat16Copy(Generator& gen, DType copy_dtype = DType::BFloat16) {
    Tensor& w = register_parameter("weight", Tensor::randn({3, 4}, gen));
    register_buffer("weight_copy", w.detach().to(copy_dtype));
  }
  Tensor copy() const { return named_buffers().at(0).second; }
};

}  // namespace

TEST_CASE("a checkpoint stores a bfloat16 tensor as BF16 and restores it bit for bit",
          "[optim][checkpoint][bf16]") {
  TempDir dir("ckpt-bf16");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen_a(1), gen_b(2);
  WithBfloat16Copy a(gen_a), b(gen_b);
  // Values a float32 would hold differently: a denormal, -0, the largest finite bfloat16.
  const std::vector<bfloat16_bits> edges = {0x0001, 0x8000, 0x7F7F};
  std::memcpy(a.copy().raw_data(), edges.data(), edges.size() * 2);
  save_checkpoint(path, a, nullptr, CheckpointInfo{});

  const SafetensorsHeader header = read_safetensors_header(path);
  CHECK(header.tensors.at("model.weight_copy").storage == SafetensorsEntry::Storage::bfloat16);
  CHECK(header.tensors.at("model.weight").storage == SafetensorsEntry::Storage::native);

  REQUIRE(std::memcmp(a.copy().raw_data(), b.copy().raw_data(), 24) != 0);
  load_checkpoint(path, b, nullptr);
  CHECK(b.copy().dtype() == DType::BFloat16);
  CHECK(std::memcmp(a.copy().raw_data(), b.copy().raw_data(), 24) == 0);
  CHECK(parameter_values(a) == parameter_values(b));

  SECTION("a model whose copy is float32 does not fit, and says so") {
    Generator gen(3);
    WithBfloat16Copy f32(gen, DType::Float32);
    CHECK(error_of([&] { load_checkpoint(path, f32, nullptr); }) ==
          "load_checkpoint: '" + path + "': the checkpoint does not fit the model. Dtype "
          "mismatch (1): weight_copy: checkpoint BF16, model F32.");
  }
  SECTION("a bfloat16 NaN or inf is refused as a float32 one is") {
    const bfloat16_bits inf = 0x7F80;
    std::memcpy(a.copy().raw_data(), &inf, 2);
    save_checkpoint(path, a, nullptr, CheckpointInfo{});
    CHECK(error_of([&] { load_checkpoint(path, b, nullptr); }) ==
          "load_checkpoint: '" + path + "': parameter 'weight_copy' holds NaN or inf (saved "
          "from a run that diverged?)");
  }
}

TEST_CASE("generator states travel as text exactly", "[optim][checkpoint]") {
  Generator g(1234);
  g.normal();
  const std::string text = generator_state_to_string(g.state());
  Generator h(0);
  h.set_state(generator_state_from_string(text));
  for (int i = 0; i < 10; ++i) REQUIRE(g.normal() == h.normal());
  CHECK_THROWS_WITH(generator_state_from_string("xoshiro256** 1 2 3"),
                    Catch::Contains("expected 7 fields, got 4"));
  CHECK_THROWS_WITH(generator_state_from_string("xoshiro256** 1 2 3 4 0 zz"),
                    Catch::Contains("is not a hexadecimal number"));
  CHECK_THROWS_WITH(generator_state_from_string("mt19937 1 2 3 4 0 0"),
                    Catch::Contains("unknown generator"));
  // xoshiro's one state it never leaves: all zeros, every draw 0 (a hand-edited checkpoint).
  CHECK_THROWS_WITH(generator_state_from_string("xoshiro256** 0 0 0 0 0 0"),
                    Catch::Contains("all-zero state"));
  CHECK_NOTHROW(generator_state_from_string("xoshiro256** 0 0 0 1 0 0"));
}

TEST_CASE("loading a checkpoint that does not fit names the file and the mismatch",
          "[optim][checkpoint]") {
  TempDir dir("ckpt-mismatch");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP saved({.dim = 4, .hidden = 8}, gen);
  Adam adam(make_param_groups(saved, 0.0), AdamOptions{});
  train_a_little(saved, adam, 1, 3);
  save_checkpoint(path, saved, &adam, CheckpointInfo{});
  const std::string where = "load_checkpoint: '" + path + "': ";

  SECTION("wrong shapes") {
    nn::MLP wide({.dim = 4, .hidden = 16}, gen);
    const auto before = parameter_values(wide);
    CHECK(error_of([&] { load_checkpoint(path, wide, nullptr); }) ==
          where +
              "load_state_dict: the state does not fit the model. Shape mismatch (3): "
              "fc1.weight: checkpoint (8, 4), model (16, 4), fc1.bias: checkpoint (8,), model "
              "(16,), fc2.weight: checkpoint (4, 8), model (4, 16).");
    CHECK(parameter_values(wide) == before);  // untouched
  }
  SECTION("wrong names") {
    nn::Linear linear({.in = 4, .out = 8}, gen);
    CHECK(error_of([&] { load_checkpoint(path, linear, nullptr); }) ==
          where +
              "load_state_dict: the state does not fit the model. Missing (2): weight, bias. "
              "Unexpected (4): fc1.bias, fc1.weight, fc2.bias, fc2.weight.");
  }
  SECTION("wrong dtypes") {
    nn::MLP f64({.dim = 4, .hidden = 8}, gen);
    f64.to(DType::Float64);
    CHECK(error_of([&] { load_checkpoint(path, f64, nullptr); }) ==
          where +
              "the checkpoint does not fit the model. Dtype mismatch (4): fc1.weight: "
              "checkpoint F32, model F64, fc1.bias: checkpoint F32, model F64, fc2.weight: "
              "checkpoint F32, model F64, fc2.bias: checkpoint F32, model F64.");
  }
  SECTION("no optimizer state: the model is left as it was") {
    const std::string bare = dir.file("bare.safetensors");
    save_checkpoint(bare, saved, nullptr, CheckpointInfo{});
    nn::MLP other({.dim = 4, .hidden = 8}, gen);
    Adam other_adam(make_param_groups(other, 0.0), AdamOptions{});
    const auto before = parameter_values(other);
    CHECK(error_of([&] { load_checkpoint(bare, other, &other_adam); }) ==
          "load_checkpoint: '" + bare +
              "': the checkpoint holds no optimizer state (it was saved without an optimizer)");
    CHECK(parameter_values(other) == before);
  }
}

TEST_CASE("damaged or foreign checkpoint files give clear errors", "[optim][checkpoint]") {
  TempDir dir("ckpt-damaged");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP model({.dim = 4, .hidden = 8}, gen);
  save_checkpoint(path, model, nullptr, CheckpointInfo{});
  const auto size = fs::file_size(path);

  SECTION("truncated in the data") {
    fs::resize_file(path, size - 10);
    CHECK_THROWS_WITH(load_checkpoint(path, model, nullptr),
                      Catch::Contains("load_safetensors: '" + path + "'") &&
                          Catch::Contains("reach past the end of the data"));
  }
  SECTION("truncated in the header") {
    fs::resize_file(path, 20);
    CHECK_THROWS_WITH(load_checkpoint(path, model, nullptr),
                      Catch::Contains(path) && Catch::Contains("truncated"));
    CHECK_THROWS_WITH(read_checkpoint_info(path),
                      Catch::Contains("read_checkpoint_info: '" + path + "'") &&
                          Catch::Contains("truncated"));
  }
  SECTION("corrupted header") {
    {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(8);
      f.write("#garbage#", 9);
    }
    CHECK_THROWS_WITH(load_checkpoint(path, model, nullptr),
                      Catch::Contains(path) && Catch::Contains("not valid JSON"));
  }
  SECTION("missing file") {
    CHECK_THROWS_WITH(load_checkpoint(dir.file("nope.safetensors"), model, nullptr),
                      Catch::Contains("nope.safetensors") && Catch::Contains("cannot open"));
  }
  SECTION("a plain safetensors file") {
    save_safetensors(path, {{"weight", Tensor::zeros({2})}});
    CHECK_THROWS_WITH(load_checkpoint(path, model, nullptr),
                      Catch::Contains(path) && Catch::Contains("not a uwaga checkpoint"));
  }
  SECTION("bad metadata") {
    save_safetensors(path, {{"model.w", Tensor::zeros({2})}},
                     {{"format", "uwaga-checkpoint-1"}, {"step", "three"}});
    CHECK_THROWS_WITH(read_checkpoint_info(path),
                      Catch::Contains("metadata \"step\" must be a non-negative integer, got 'three'"));
  }
  SECTION("a directory") {
    CHECK_THROWS_WITH(read_checkpoint_info(dir.str()),
                      Catch::Contains("is a directory, not a checkpoint file"));
  }
  SECTION("a parameter holding NaN (a diverged run)") {
    nn::MLP diverged({.dim = 4, .hidden = 8}, gen);
    auto params = diverged.named_parameters();
    params[1].second.set_flat(0, std::nan(""));
    save_checkpoint(path, diverged, nullptr, CheckpointInfo{});
    const std::vector<double> before = model.parameters()[1].to_vector();
    CHECK_THROWS_WITH(load_checkpoint(path, model, nullptr),
                      Catch::Contains("parameter '" + params[1].first + "' holds NaN or inf"));
    CHECK(model.parameters()[1].to_vector() == before);
  }
}

TEST_CASE("overwriting a checkpoint is atomic", "[optim][checkpoint]") {
  TempDir dir("ckpt-atomic");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP first({.dim = 4, .hidden = 8}, gen);
  CheckpointInfo info;
  info.step = 1;
  save_checkpoint(path, first, nullptr, info);

  SECTION("a successful overwrite leaves only the new file") {
    nn::MLP second({.dim = 4, .hidden = 8}, gen);
    info.step = 2;
    save_checkpoint(path, second, nullptr, info);
    CHECK(dir.entries() == std::vector<std::string>{"checkpoint.safetensors"});
    nn::MLP loaded({.dim = 4, .hidden = 8}, gen);
    CHECK(load_checkpoint(path, loaded, nullptr).step == 2);
    CHECK(parameter_values(loaded) == parameter_values(second));
  }
  SECTION("a save that fails while writing keeps the previous checkpoint") {
    // A file-size limit makes the write fail midway, as a full disk would.
    nn::MLP big({.dim = 64, .hidden = 512}, gen);
    struct rlimit old_limit;
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
    struct rlimit limit = old_limit;
    limit.rlim_cur = 16384;
    auto old_handler = ::signal(SIGXFSZ, SIG_IGN);  // report EFBIG instead of killing
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
    std::string error = error_of([&] { save_checkpoint(path, big, nullptr, info); });
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    ::signal(SIGXFSZ, old_handler);

    CHECK_THAT(error, Catch::Contains("save_safetensors") && Catch::Contains(path));
    CHECK(dir.entries() == std::vector<std::string>{"checkpoint.safetensors"});
    nn::MLP loaded({.dim = 4, .hidden = 8}, gen);
    CHECK(load_checkpoint(path, loaded, nullptr).step == 1);
    CHECK(parameter_values(loaded) == parameter_values(first));
  }
  SECTION("a save refused up front (bad config) keeps the previous checkpoint") {
    info.config = "{not json";
    CHECK_THROWS_WITH(save_checkpoint(path, first, nullptr, info),
                      Catch::Contains("the config is not valid JSON"));
    CHECK(read_checkpoint_info(path).step == 1);
  }
}

// Before: load_checkpoint checked the parameters only. An inf or NaN in Adam's moments loaded
// silently: the parameter froze (inf) or turned NaN at the first step after the resume.
TEST_CASE("a checkpoint whose optimizer state holds NaN or inf is refused for training",
          "[optim][checkpoint]") {
  TempDir dir("ckpt-nan-state");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP saved({.dim = 4, .hidden = 8}, gen);
  Adam adam(make_param_groups(saved, 0.0), AdamOptions{});
  train_a_little(saved, adam, 2, 3);
  save_checkpoint(path, saved, &adam, CheckpointInfo{});
  // The same file with one element of fc1.weight's second moment made inf.
  SafetensorsFile file = load_safetensors(path);
  file.tensors.at("optim.fc1.weight.exp_avg_sq").set_flat(3, INFINITY);
  save_safetensors(path, file.tensors, file.metadata);

  nn::MLP model({.dim = 4, .hidden = 8}, gen);
  Adam model_adam(make_param_groups(model, 0.0), AdamOptions{});
  const auto before = parameter_values(model);
  CHECK(error_of([&] { load_checkpoint(path, model, &model_adam); }) ==
        "load_checkpoint: '" + path +
            "': optimizer state 'fc1.weight.exp_avg_sq' holds NaN or inf (saved from a run that "
            "diverged?)");
  CHECK(parameter_values(model) == before);
  CHECK(model_adam.state().size() == 1);  // still only "step": nothing loaded
  // The weights alone are fine, for evaluation.
  CHECK_NOTHROW(load_checkpoint(path, model, nullptr));
  CHECK(parameter_values(model) == parameter_values(saved));
}

// Before: a second moment edited to a negative value loaded, and the run reported "the loss
// went NaN" steps later.
TEST_CASE("a checkpoint whose Adam second moment is negative is refused", "[optim][checkpoint]") {
  TempDir dir("ckpt-negative-moment");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP saved({.dim = 4, .hidden = 8}, gen);
  Adam adam(make_param_groups(saved, 0.0), AdamOptions{});
  train_a_little(saved, adam, 2, 3);
  save_checkpoint(path, saved, &adam, CheckpointInfo{});
  SafetensorsFile file = load_safetensors(path);
  file.tensors.at("optim.fc2.bias.exp_avg_sq").set_flat(0, -1e-3);
  save_safetensors(path, file.tensors, file.metadata);
  nn::MLP model({.dim = 4, .hidden = 8}, gen);
  Adam model_adam(make_param_groups(model, 0.0), AdamOptions{});
  CHECK(error_of([&] { load_checkpoint(path, model, &model_adam); }) ==
        "load_checkpoint: '" + path + "': optimizer state 'fc2.bias.exp_avg_sq' holds a negative "
        "value, which a second moment (an average of squares) cannot");
  CHECK_NOTHROW(load_checkpoint(path, model, nullptr));  // the weights alone are fine
}

// Before: "epoch" 10⁶ resumed as a finished run, and a "step" near 2^63 overflowed.
TEST_CASE("a checkpoint's step, epoch and batch must fit together", "[optim][checkpoint]") {
  TempDir dir("ckpt-counts");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP model({.dim = 4, .hidden = 8}, gen);
  CheckpointInfo info;
  info.step = 40, info.epoch = 1, info.batch_in_epoch = 20;
  save_checkpoint(path, model, nullptr, info);
  CHECK(read_checkpoint_info(path).epoch == 1);
  SafetensorsFile file = load_safetensors(path);
  auto with = [&](const char* key, const std::string& value) {
    SafetensorsFile edited = file;
    edited.metadata[key] = value;
    save_safetensors(path, edited.tensors, edited.metadata);
    return error_of([&] { read_checkpoint_info(path); });
  };
  CHECK_THAT(with("epoch", "1000000"),
             Catch::Contains("metadata \"epoch\" 1000000 and \"batch_in_epoch\" 20 do not fit "
                             "\"step\" 40"));
  CHECK_THAT(with("batch_in_epoch", "41"), Catch::Contains("do not fit \"step\" 40"));
  CHECK_THAT(with("step", "9223372036854775807"),
             Catch::Contains("metadata \"step\" is 9223372036854775807, more than the"));
}

// Before: strtod read "nan", "inf" and "-1" as learning rates; resuming then failed in
// Optimizer::set_lr with a message that named no file.
TEST_CASE("a checkpoint's learning rate must be a finite number >= 0", "[optim][checkpoint]") {
  TempDir dir("ckpt-lr");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP model({.dim = 4, .hidden = 8}, gen);
  save_checkpoint(path, model, nullptr, CheckpointInfo{});
  SafetensorsFile file = load_safetensors(path);
  for (const std::string lr : {"nan", "inf", "-inf", "-0.5", "1e999", "0.1x", ""}) {
    INFO("lr " << lr);
    file.metadata["lr"] = lr;
    save_safetensors(path, file.tensors, file.metadata);
    CHECK(error_of([&] { read_checkpoint_info(path); }) ==
          "read_checkpoint_info: '" + path + "': metadata \"lr\" must be a finite number >= 0, "
          "got '" + lr + "'");
    CHECK_THAT(error_of([&] { load_checkpoint(path, model, nullptr); }),
               Catch::StartsWith("load_checkpoint: '" + path + "': metadata \"lr\""));
  }
  file.metadata["lr"] = std::string(1, '0');
  save_safetensors(path, file.tensors, file.metadata);
  CHECK(read_checkpoint_info(path).lr == 0.0);
}

namespace {

// Adam that lists the temporary directory when load_checkpoint hands it its state: what is there
// while a checkpoint is being read.
class ListingAdam : public Adam {
 public:
  using Adam::Adam;
  void load_state(const std::map<std::string, Tensor>& state) override {
    for (const auto& entry : fs::directory_iterator(fs::temp_directory_path()))
      seen.push_back(entry.path().filename().string());
    Adam::load_state(state);
  }
  std::vector<std::string> seen;
};

// TMPDIR set to `dir` while it lives (temp_directory_path reads it).
class TempDirEnv {
 public:
  explicit TempDirEnv(const std::string& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TempDirEnv() {
    if (old_.empty()) ::unsetenv("TMPDIR");
    else ::setenv("TMPDIR", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

}  // namespace

// A process other than 0 loads the checkpoint process 0 sends it as bytes. Before: through a file
// in the temporary directory, left there (a whole checkpoint) when the process was killed while
// reading it.
TEST_CASE("a checkpoint handed over as bytes loads through a file without a name",
          "[optim][checkpoint]") {
  TempDir dir("ckpt-bytes");
  TempDir tmp("ckpt-bytes-tmpdir");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator init_a(1);
  nn::MLP a({.dim = 4, .hidden = 8}, init_a);
  Adam adam_a(make_param_groups(a, 0.01), AdamOptions{});
  train_a_little(a, adam_a, 3, 7);
  CheckpointInfo info;
  info.step = 3;
  save_checkpoint(path, a, &adam_a, info);

  TempDirEnv env(tmp.str());
  Generator init_b(2);
  nn::MLP b({.dim = 4, .hidden = 8}, init_b);
  ListingAdam adam_b(make_param_groups(b, 0.01), AdamOptions{});
  REQUIRE(parameter_values(a) != parameter_values(b));
  CHECK(load_checkpoint_bytes(read_file_bytes(path), path, b, &adam_b).step == 3);
  CHECK(parameter_values(a) == parameter_values(b));
  CHECK(adam_b.seen.empty());  // nothing named in the temporary directory, even while reading
  CHECK(adam_b.state().at("fc1.weight.exp_avg").to_vector() ==
        adam_a.state().at("fc1.weight.exp_avg").to_vector());
  CHECK(tmp.entries().empty());

  // Errors name the checkpoint process 0 read, not the copy.
  std::string damaged = read_file_bytes(path);
  damaged.resize(damaged.size() - 10);
  const std::string error = error_of([&] { load_checkpoint_bytes(damaged, path, b, &adam_b); });
  CHECK_THAT(error, Catch::Contains("'" + path + "'") && !Catch::Contains("/proc/self"));
  CHECK(tmp.entries().empty());
}

// Before: the run configuration was not covered by any checksum, so a digit changed in it (a ViT's
// normalisation mean, a BPE merge) loaded silently and changed what `eval` computed.
TEST_CASE("a checkpoint whose run configuration was edited is refused, naming the metadata",
          "[optim][checkpoint]") {
  TempDir dir("ckpt-config-edit");
  const std::string path = dir.file("checkpoint.safetensors");
  Generator gen(1);
  nn::MLP model({.dim = 4, .hidden = 8}, gen);
  CheckpointInfo info;
  info.config = R"({"dataset":"mnist","mean":[0.1307],"std":[0.3081]})";
  save_checkpoint(path, model, nullptr, info);
  CHECK(read_checkpoint_info(path).config == info.config);

  // One digit of the mean, in place: the same length, the tensors untouched.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t at = bytes.find("0.1307");
  REQUIRE(at != std::string::npos);
  bytes[at + 5] = '8';
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const std::string damaged = "metadata entry \"config\" is damaged or was edited";
  CHECK_THAT(error_of([&] { read_checkpoint_info(path); }),
             Catch::StartsWith("read_checkpoint_info: '" + path + "'") &&
                 Catch::Contains(damaged));
  CHECK_THAT(error_of([&] { load_checkpoint(path, model, nullptr); }),
             Catch::Contains(path) && Catch::Contains(damaged));
}
