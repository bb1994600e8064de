// uwaga-pose: ViTPose, a Vision Transformer that finds a person's joints, trained on synthetic
// stick figures (or COCO keypoints) from the command line.
//   uwaga-pose train --preset stick-classic --out runs/pose-classic
//   uwaga-pose eval --checkpoint runs/pose-classic/checkpoint.safetensors
//   uwaga-pose predict --checkpoint FILE (--index N | CROP.pgm) --out predict.svg
//   uwaga-pose attention --checkpoint FILE --index N --joint left_wrist --out attention.svg
//   uwaga-pose explore --checkpoint FILE --index N --out explorer.html
//   uwaga-pose plot --run runs/pose-classic [--run runs/pose-simple ...] [--out curves.svg]
// Wiring only: the model is nn/pose/vit_pose, the targets nn/pose/keypoint_heatmaps, the loop
// optim/trainer, the data data/pose/stick_figures and data/pose/coco_keypoints.
#include "apps/common/command_line.h"
#include "apps/pose/pose_commands.h"

int main(int argc, char** argv) {
  using namespace uwaga::apps;
  return run_modes(
      "uwaga-pose",
      {{"train", "train a ViTPose keypoint model (presets: stick-classic, stick-simple, coco-small, smoke)", pose_train},
       {"eval", "PCK@0.1 and OKS-AP of a checkpoint beside two baselines", pose_eval},
       {"predict", "the joints of one crop, and an SVG of its skeleton and heatmaps", pose_predict},
       {"attention", "draw where the token under a joint looks, per layer and head (SVG)", pose_attention},
       {"explore", "every layer and head of the attention on one crop, in one HTML page", pose_explore},
       {"plot", "training curves of runs from their log.jsonl (SVG, and PNG when possible)", pose_plot}},
      argc, argv, "", {{"data", "dataset"}, {"coco-images", "data-dir"}, {"depth", "layers"}});
}
