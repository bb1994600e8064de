#include "nn/vision_transformer.h"

#include "core/json_fields.h"
#include "core/matmul.h"
#include "core/shape_ops.h"
#include "nn/init.h"
#include "nn/softmax.h"

namespace uwaga::nn {

std::int64_t VitConfig::num_patches() const {
  if (patch < 1 || image_size < patch)
    fail("VitConfig: patch ", patch, " must be from 1 to image_size ", image_size);
  return (image_size / patch) * (image_size / patch);
}

std::int64_t VitConfig::forward_flops() const {
  num_patches();  // fails naming VitConfig when the patch size makes no patches
  const std::int64_t pool_flops = class_token() ? 0 : 2 * tokens() * dim;  // the scores a
  return backbone().forward_flops() + pool_flops + 2 * dim * num_classes;
}

Stem VitConfig::backbone_stem() const {
  if (stem == "conv") return Stem::conv;
  if (stem == "cct") return Stem::cct;
  return Stem::patch;
}

VitBackboneOptions VitConfig::backbone() const {
  return {.image_height = image_size, .image_width = image_size, .channels = channels,
          .patch = patch, .dim = dim, .depth = depth, .heads = heads, .mlp_dim = mlp_dim,
          .class_token = class_token(), .attention = attention,
          .drop_path = drop_path, .dropout = dropout, .attention_dropout = attention_dropout,
          .stem = backbone_stem(), .cct_details = cct_details};
}

void VitConfig::validate() const {
  // At least 1, and at most a generous bound, far above any model this code can train. Within
  // the bounds forward_flops() fits in int64.
  auto in_range = [](const char* name, std::int64_t v, std::int64_t limit) {
    check_size_in_range("vit config", name, v, limit);
  };
  in_range("image size", image_size, 65536);
  in_range("channels", channels, 1024);
  in_range("patch", patch, 65536);
  in_range("dim", dim, 65536);
  in_range("depth", depth, 1000);
  in_range("heads", heads, 65536);
  in_range("mlp-dim", mlp_dim, 65536);
  in_range("classes", num_classes, 1000000);
  if (image_size % patch != 0)
    fail("vit config: image size ", image_size, " is not divisible by patch ", patch);
  if (dim % heads != 0) fail("vit config: dim ", dim, " is not divisible by heads ", heads);
  if (!(drop_path >= 0 && drop_path < 1))
    fail("vit config: drop path must be in [0, 1), got ", drop_path);
  if (!(dropout >= 0 && dropout < 1)) fail("vit config: dropout must be in [0, 1), got ", dropout);
  if (!(attention_dropout >= 0 && attention_dropout < 1))
    fail("vit config: attention dropout must be in [0, 1), got ", attention_dropout);
  if (stem != "patch" && stem != "conv" && stem != "cct")
    fail("vit config: stem must be patch, conv or cct, got '", stem, "'");
  if (pool != "cls" && pool != "seq")
    fail("vit config: pool must be cls or seq, got '", pool, "'");
  if (cct_details && (stem != "cct" || pool != "seq"))
    fail("vit config: cct_details needs stem cct and pool seq, got stem ", stem, " and pool ",
         pool);
  if (stem != "patch") backbone().validate("vit config");  // P a power of 2, D to fit
  if (num_patches() > 100000)
    fail("vit config: image size ", image_size, " with patch ", patch, " makes ", num_patches(),
         " patches, above the limit of 100000");
}

std::string VitConfig::to_json() const { return fields_to_json(*this).dump(); }

VitConfig VitConfig::from_json(const std::string& text) {
  VitConfig c;
  nlohmann::json j = parse_json_input(text, "vit config");
  // Configurations from before stochastic depth or dropout have no drop_path or dropout: they
  // had none.
  if (j.is_object() && !j.contains("drop_path")) j["drop_path"] = 0.0;
  if (j.is_object() && !j.contains("dropout")) j["dropout"] = 0.0;
  // Those from before attention dropout had none.
  if (j.is_object() && !j.contains("attention_dropout")) j["attention_dropout"] = 0.0;
  // Those from before the conv stem have no stem: they embedded patches.
  if (j.is_object() && !j.contains("stem")) j["stem"] = "patch";
  // Those from before sequence pooling read the class token.
  if (j.is_object() && !j.contains("pool")) j["pool"] = "cls";
  // Those from before cct_details were uwaga's model.
  if (j.is_object() && !j.contains("cct_details")) j["cct_details"] = false;
  fields_from_json(j, c, "vit config");
  c.validate();
  return c;
}

VisionTransformer::VisionTransformer(const VitConfig& c, Generator& gen) : config(c) {
  config.validate();
  backbone = register_unnamed_module(std::make_shared<VitBackbone>(c.backbone(), gen));
  if (!c.class_token())
    attention_pool = register_module(
        "attention_pool", std::make_shared<Linear>(LinearOptions{.in = c.dim, .out = 1}, gen));
  head = register_module(
      "head", std::make_shared<Linear>(LinearOptions{.in = c.dim, .out = c.num_classes}, gen));
  // CCT's init_weight draws every Linear weight from PyTorch's trunc_normal_(std=0.02), whose cut
  // at ±2 (absolute) is ±100σ: a plain normal. uwaga's Linear cuts at ±2σ (12 % narrower), so a
  // model that is CCT's redraws them; its 2-D parameters are exactly its Linear weights.
  if (c.cct_details)
    for (auto& [name, p] : named_parameters())
      if (p.dim() == 2) init::normal(p, gen, 0.02);
}

Tensor VisionTransformer::forward_batch(const std::vector<Tensor>& inputs) {
  expect_inputs(inputs, 1, "VisionTransformer", "images (B, C, H, W)");
  return forward(inputs[0]);
}

std::shared_ptr<Model> VisionTransformer::replica() const {
  return in_my_dtype(built_to_load<VisionTransformer>(config));  // its values are the model's
}

Tensor VisionTransformer::forward(const Tensor& images) {
  backbone->check_images(images, "VisionTransformer");
  const std::int64_t B = images.size(0);
  Tensor z = backbone->encode(images);  // z_L (B, T, D)
  if (config.class_token()) {
    Tensor y = backbone->norm->forward(reshape(slice(z, 1, 0, 1), {B, config.dim}));  // LN(z_L^0)
    return head->forward(y);            // (B, classes)
  }
  Tensor Y = backbone->norm->forward(z);                   // y_t = LN(z_L^t)      (B, T, D)
  Tensor a = softmax(attention_pool->forward(Y), 1);       // a_t over the tokens  (B, T, 1)
  if (keep_pooling_) pooling_ = reshape(a, {B, a.size(1)}).detach();
  Tensor y = matmul(transpose(a, 1, 2), Y);                // aᵀ Y                 (B, 1, D)
  return head->forward(reshape(y, {B, config.dim}));       // (B, classes)
}

}  // namespace uwaga::nn
