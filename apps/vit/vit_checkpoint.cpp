#include "apps/vit/vit_checkpoint.h"

#include "core/graph.h"
#include "core/safetensors.h"

namespace uwaga::apps {

VitRunConfig read_vit_run_config(const std::string& checkpoint) {
  return read_run_config<VitRunConfig, nn::VisionTransformer>(checkpoint, "uwaga-vit");
}

LoadedVit load_vit(const std::string& checkpoint) {
  LoadedVit vit = load_model<VitRunConfig, nn::VisionTransformer>(checkpoint, "uwaga-vit");
  if (vit.run.ema > 0) {
    const SafetensorsFile file = load_safetensors(checkpoint);
    NoGradGuard no_grad;
    for (auto& [name, param] : vit.model->named_parameters()) {
      auto it = file.tensors.find("optim." + name + ".ema");
      if (it == file.tensors.end() || it->second.shape() != param.shape())
        fail(checkpoint, ": the run averaged its weights (--ema ", vit.run.ema,
             ") but the checkpoint holds no average of '", name, "' of shape ",
             shape_str(param.shape()));
      // load_checkpoint refuses NaN or inf in the optimizer's state on --resume only; evaluated,
      // the average is the model.
      if (!optim::all_finite(it->second))
        fail(checkpoint, ": the moving average of '", name, "' (optimizer state '", it->first,
             "') holds NaN or inf (saved from a run that diverged?)");
      Tensor p = param;
      p.copy_from(it->second);
    }
  }
  return vit;
}

}  // namespace uwaga::apps
