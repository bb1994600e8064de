// uwaga-vit: train and inspect a tiny Vision Transformer from the command line.
//   uwaga-vit train --preset mnist-tiny --out runs/mnist-tiny
//   uwaga-vit eval --checkpoint runs/mnist-tiny/checkpoint.safetensors
//   uwaga-vit predict --checkpoint FILE (IMAGE.pgm ... | --index N)
//   uwaga-vit attention --checkpoint FILE (IMAGE.pgm | --index N) --out attention.svg [--heads]
//   uwaga-vit explore --checkpoint FILE (IMAGE.pgm | --index N) --out explorer.html
//   uwaga-vit plot --run runs/mnist-tiny [--run runs/other ...] [--out curves.svg]
//   uwaga-vit augment --index N --out grid.svg|png
// Wiring only: the model is nn/vision_transformer, the loop optim/trainer, the data data/.
#include "apps/common/command_line.h"
#include "apps/vit/vit_commands.h"
#include "apps/vit/vit_recipe.h"
#include "apps/vit/vit_run_config.h"

int main(int argc, char** argv) {
  using namespace uwaga::apps;
  const std::string train_summary = "train a ViT (presets: " + vit_preset_list() + ")";
  return run_modes(
      "uwaga-vit",
      {{"train", train_summary.c_str(), vit_train},
       {"eval", "accuracy, per-class accuracy and confusion matrix of a checkpoint", vit_eval},
       {"predict", "top-3 classes of images (PGM/PPM) or of test images by index", vit_predict},
       {"attention", "draw where the class token looks, per layer and as rollout (SVG)", vit_attention},
       {"explore", "every layer and head of the attention on one image, in one HTML page", vit_explore},
       {"plot", "training curves of runs from their log.jsonl (SVG, and PNG when possible)", vit_plot},
       {"augment", "one image through every augmentation op, as a picture (SVG or PNG)", vit_augment}},
      argc, argv, "", {{"depth", "layers"}, {"images", "image"}});
}
