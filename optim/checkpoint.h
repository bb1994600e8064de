#pragma once
// Checkpoints: one safetensors file holding everything needed to continue a run exactly.
//
//   "model.<parameter name>"   each parameter            ("model.blocks.0.attn.qkv.weight")
//                              and buffer                ("model.decoder.bn1.running_mean")
//   "optim.<state key>"        the optimizer's state      ("optim.blocks.0.attn.qkv.weight.exp_avg",
//                                                          "optim.step")
//   __metadata__               strings ("uwaga_version" too: core/version.h, for people):
//     "format"          "uwaga-checkpoint-1"
//     "step"            optimizer steps taken so far
//     "epoch"           the epoch in progress (0-based)
//     "batch_in_epoch"  batches of that epoch already trained (the next one to train)
//     "epoch_finished"  "1" once the epoch's end (evaluation, summary) is done as well
//     "lr"              the learning rate of the last step
//     "config"          a JSON string describing the model and run, to rebuild the model
//     "task_state"      an opaque string from the task (e.g. its random generators' states)
//
// The file is written atomically (see save_safetensors): a crash while saving leaves the previous
// checkpoint whole. Checksums of the tensors and of the metadata (core/safetensors.h) refuse a
// checkpoint damaged or edited since: a changed digit in "config" as much as a flipped bit in a
// weight. Because the format is plain safetensors, numpy or the `safetensors` Python
// package can read the weights back ("model." prefix stripped, they are a PyTorch state dict).
// Each tensor keeps its dtype: a bfloat16 buffer is written as BF16 and read back as bfloat16,
// bit for bit (files without one read as they always did).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/random.h"
#include "nn/module.h"
#include "optim/optimizer.h"

namespace uwaga::optim {

inline constexpr const char* kCheckpointFormat = "uwaga-checkpoint-1";

struct CheckpointInfo {
  std::int64_t step = 0;            // optimizer steps taken
  std::int64_t epoch = 0;           // the epoch in progress, 0-based
  std::int64_t batch_in_epoch = 0;  // batches of `epoch` already trained
  bool epoch_finished = false;      // all of `epoch` done, including its evaluation
  double lr = 0.0;                  // learning rate of the last step
  std::string config;               // JSON (may be empty)
  std::string task_state;           // opaque to the checkpoint
  std::string trainer_state;        // the trainer's sums over the epoch so far (JSON; may be empty)
};

// Writes the model's parameters and buffers (its state_dict()), the optimizer's state (when `opt`
// is not null) and `info` to `path`, atomically. Throws uwaga::Error naming the path.
void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer* opt,
                     const CheckpointInfo& info);

// Reads `path` and copies its values into `model` (and `opt`, when not null). Every parameter and
// buffer name, shape and dtype must match; the error names the file and lists what does not. A
// parameter or buffer (or, with `opt`, an optimizer state tensor) holding NaN or inf is refused, as
// is a metadata "lr" that is not a finite number >= 0. When loading fails, the model is left as it
// was. Returns the metadata.
CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, Optimizer* opt);

// True when no element of the float (or bfloat16) tensor `t` is NaN or ±inf. Checkpoints hold
// finite values only: the Trainer stops rather than save a diverged model or optimizer state, and
// load_checkpoint refuses one.
bool all_finite(const Tensor& t);

// The name of the first float tensor in `named` (name–tensor pairs: a state dict, named
// parameters, an optimizer's state) that holds NaN or ±inf; nullopt when all are finite.
template <class Named>
std::optional<std::string> first_non_finite(const Named& named) {
  for (const auto& [name, t] : named)
    if (t.dtype() != DType::Int64 && !all_finite(t)) return name;
  return std::nullopt;
}

// The parameter shapes a model's configuration implies, by name ("blocks.0.attn.qkv.weight"), and
// its buffers' ("decoder.bn1.running_mean") when it has any.
using ParameterShapes = std::map<std::string, Shape>;

// The dtype a checkpoint holds the model tensor `name` in: float32, except BatchNorm's batch count
// ("….num_batches_tracked"), an int64 as in PyTorch's state dicts.
DType checkpoint_dtype(const std::string& name);

// Reading only the header, checks that the checkpoint's "model." tensors are exactly `expected`
// (names, shapes, checkpoint_dtype), and so that building the model `expected` describes allocates no more
// than the file holds. Call it before building a model from a checkpoint's own config: a crafted
// config (dim 65536, depth 1000) otherwise allocates gigabytes before load_checkpoint notices.
// Errors name the file and the first tensors that differ.
void check_checkpoint_shapes(const std::string& path, const ParameterShapes& expected);

// Only the metadata (reads the header, not the tensors): e.g. the config, to build the right
// model before load_checkpoint.
CheckpointInfo read_checkpoint_info(const std::string& path);

// Removes the temporary files an interrupted save left in `dir` (save_safetensors writes
// "<name>.safetensors.tmp.<pid>.<n>" and renames it; kill -9 midway leaves it behind, megabytes
// each, never read; the apps' SVG pictures likewise go through "<name>.svg.tmp.<pid>.<n>"). Only for a directory whose lock this process holds (optim/directory_lock.h):
// then no other process can be writing them. Returns the names removed.
std::vector<std::string> remove_stale_temporaries(const std::string& dir);

// The bytes of the file at `path` (a checkpoint process 0 hands to the other processes).
std::string read_file_bytes(const std::string& path);
// load_checkpoint of a checkpoint handed over as bytes — process 0 read it from `path`, which this
// process may not see (another host): through a file of its own that has no name (nothing is
// left behind if the process is killed meanwhile); errors name `path`.
CheckpointInfo load_checkpoint_bytes(const std::string& bytes, const std::string& path,
                                     nn::Module& model, Optimizer* opt);

// A generator's exact state as one line of text and back, for a checkpoint's trainer_state:
//   "xoshiro256** <s0> <s1> <s2> <s3> <has_spare> <spare bits>"   (numbers in hexadecimal)
std::string generator_state_to_string(const Generator::State& state);
Generator::State generator_state_from_string(const std::string& text);

}  // namespace uwaga::optim
