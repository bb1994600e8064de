#include "nn/model.h"

#include "core/error.h"
#include "nn/dropout.h"

namespace uwaga::nn {

void Model::seed_dropout(std::uint64_t seed) {
  if (!dropouts_found_) {
    for (auto& [name, module] : named_modules())
      if (auto* dropout = dynamic_cast<Dropout*>(module)) dropouts_.push_back(dropout);
    dropouts_found_ = true;
  }
  for (std::size_t n = 0; n < dropouts_.size(); ++n)
    dropouts_[n]->generator().seed_with(seed + 0x9E3779B97F4A7C15ull * n);
}

void Model::expect_inputs(const std::vector<Tensor>& inputs, std::size_t count,
                          const char* model, const char* names) {
  if (inputs.size() != count)
    fail(model, "::forward_batch takes ", count, " input", count == 1 ? "" : "s", " (", names,
         "), got ", inputs.size());
}

std::shared_ptr<Model> Model::in_my_dtype(std::shared_ptr<Model> fresh) const {
  const NamedTensors mine = named_parameters();
  if (!mine.empty() && mine.front().second.dtype() != DType::Float32)
    fresh->to(mine.front().second.dtype());
  return fresh;
}

}  // namespace uwaga::nn
