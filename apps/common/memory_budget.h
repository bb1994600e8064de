#pragma once
// What a run may allocate, and what a transformer's training roughly needs, so that a run that
// cannot fit is refused up front with both numbers — not ended by std::bad_alloc after minutes of
// allocating, or by the kernel's out-of-memory killer.
#include <cstdint>
#include <string>

namespace uwaga::apps {

struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string source;  // "available memory (MemAvailable)", "the address-space limit (ulimit -v)"...
};

// The smallest of: memory the kernel reports available, the address-space limit (RLIMIT_AS, less
// what the process maps already) and a cgroup v2 memory.max.
MemoryLimit memory_limit();
// What the process maps already (VmSize), which counts against the address-space limit.
std::uint64_t mapped_now();

// "512 MB", "3.2 GB".
std::string human_bytes(double bytes);

// A transformer's shape, as far as its memory goes. Activations kept for backward per layer:
// about 16 values per token and model dim, 3 per token and MLP hidden unit, and 3 attention
// maps of tokens² per head (scores, weights, their gradient).
struct TransformerFootprint {
  double params = 0;       // number of parameters (declared_parameter_count, loaded_model.h)
  double batch = 1;        // sequences (images) per step
  double tokens = 1;       // per sequence
  double dim = 1, layers = 1, heads = 1, mlp_dim = 1;
};
// Bytes of float32 training: parameters, gradients and two Adam moments, plus the activations.
double training_bytes(const TransformerFootprint& f);
// Bytes of float32 evaluation without a graph: the parameters plus one layer's activations.
double inference_bytes(const TransformerFootprint& f);

// Fails with "<who> needs about <need> (<breakdown>), more than the <limit> of <source>; <advice>"
// when need exceeds what memory_limit() allows (a tenth is kept for everything else).
void check_fits_in_memory(const std::string& who, double need, const std::string& breakdown,
                          const std::string& advice);

// check_fits_in_memory for the training of `f`, before anything is allocated: "train: the run
// needs about 412.3 GB (parameters ... and activations ...), more than ...; make <flags> smaller".
void check_training_fits(const TransformerFootprint& f, const std::string& flags);

// check_fits_in_memory for rebuilding the model of `checkpoint` (eval, predict, sample, explore,
// ...), before anything is allocated: the model's `values` (parameters and buffers, float32)
// plus the checkpoint's tensors, which are read whole (with the optimizer's state). "loading
// 'x.safetensors' needs about 24.6 GB (...), more than ..."
void check_loading_fits(const std::string& checkpoint, double values);

}  // namespace uwaga::apps
