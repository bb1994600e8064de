#include "apps/vit/vit_checkpoint.h"

#include "apps/common/block_shapes.h"
#include "core/graph.h"
#include "core/safetensors.h"

namespace uwaga::apps {

VitRunConfig read_vit_run_config(const std::string& checkpoint) {
  return read_run_config<VitRunConfig>(checkpoint, "uwaga-vit", vit_parameter_shapes);
}

LoadedVit load_vit(const std::string& checkpoint) {
  LoadedVit vit = load_model<VitRunConfig, nn::VisionTransformer>(checkpoint, "uwaga-vit",
                                                                  vit_parameter_shapes);
  if (vit.run.ema > 0) {
    const SafetensorsFile file = load_safetensors(checkpoint);
    NoGradGuard no_grad;
    for (auto& [name, param] : vit.model->named_parameters()) {
      auto it = file.tensors.find("optim." + name + ".ema");
      if (it == file.tensors.end() || it->second.shape() != param.shape())
        fail(checkpoint, ": the run averaged its weights (--ema ", vit.run.ema,
             ") but the checkpoint holds no average of '", name, "' of shape ",
             shape_str(param.shape()));
      Tensor p = param;
      p.copy_from(it->second);
    }
  }
  return vit;
}

// As VisionTransformer's constructor registers them (tests/apps check the two agree).
optim::ParameterShapes vit_parameter_shapes(const nn::VitConfig& c) {
  c.validate();
  const std::int64_t D = c.dim;
  optim::ParameterShapes shapes;
  add_linear(shapes, "patch_embed", c.patch_dim(), D);
  shapes["cls_token"] = {1, 1, D};
  shapes["pos_embed"] = {1, c.tokens(), D};
  for (std::int64_t i = 0; i < c.depth; ++i)
    add_encoder_block(shapes, "blocks." + std::to_string(i), D, c.mlp_dim);
  add_layer_norm(shapes, "norm", D);
  add_linear(shapes, "head", D, c.num_classes);
  return shapes;
}

}  // namespace uwaga::apps
