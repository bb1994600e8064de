// uwaga-vit: train and inspect a tiny Vision Transformer from the command line.
//   uwaga-vit train --preset mnist-tiny --out runs/mnist-tiny
//   uwaga-vit eval --checkpoint runs/mnist-tiny/checkpoint.safetensors
//   uwaga-vit predict --checkpoint FILE (IMAGE.pgm ... | --index N)
//   uwaga-vit attention --checkpoint FILE (IMAGE.pgm | --index N) --out attention.svg
// Wiring only: the model is nn/vision_transformer, the loop optim/trainer, the data data/.
#include <cxxopts.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "apps/common/thread_policy.h"
#include "apps/vit/vit_commands.h"
#include "core/error.h"

namespace {

const char* kUsage =
    "usage: uwaga-vit MODE [options]\n"
    "modes:\n"
    "  train       train a ViT (presets: mnist-tiny, mnist-best, fashion-mnist, cifar10-small)\n"
    "  eval        accuracy, per-class accuracy and confusion matrix of a checkpoint\n"
    "  predict     top-3 classes of images (PGM/PPM) or of test images by index\n"
    "  attention   draw where the class token looks, per layer and as rollout (SVG)\n"
    "Run 'uwaga-vit MODE --help' for the options of a mode.\n";

}  // namespace

int main(int argc, char** argv) {
  uwaga::apps::prefer_passive_openmp_wait(argv);
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string mode = argv[1];
  try {
    if (mode == "train") return uwaga::apps::vit_train(argc - 1, argv + 1);
    if (mode == "eval") return uwaga::apps::vit_eval(argc - 1, argv + 1);
    if (mode == "predict") return uwaga::apps::vit_predict(argc - 1, argv + 1);
    if (mode == "attention") return uwaga::apps::vit_attention(argc - 1, argv + 1);
    std::cerr << "uwaga-vit: unknown mode '" << mode << "'\n" << kUsage;
    return 2;
  } catch (const uwaga::Error& e) {
    std::cerr << "uwaga-vit: " << e.what() << "\n";
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "uwaga-vit " << mode << ": " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "uwaga-vit: unexpected error: " << e.what() << "\n";
    return 1;
  }
}
