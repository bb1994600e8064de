// uwaga-walkthrough: attention on the lecture notes' sentence "we are eating bread", every
// intermediate matrix printed with its shape and the formula of the notes (SEEDS.md) it computes:
//   part 1  one self-attention layer (SEEDS §2–3)            attention_steps.cpp
//   part 2  multi-head attention, head by head (SEEDS §4)     attention_steps.cpp
//   part 3  one pre-LN transformer block (SEEDS §5)           block_steps.cpp
//   part 4  the backward pass of one attention layer          attention_backward.cpp
//   part 5  training a small ViT, the step written out        plain_training_step.cpp
// Made to be stepped through in a debugger: each step is a function of its own (README:
// "Stepping through attention: uwaga-walkthrough"; the debugger's helpers: core/gdb/uwaga_gdb.py).
//   uwaga-walkthrough [--dim 8] [--d-k 4] [--heads 2] [--seed 0] [--causal] [--part N]
//
// The steps call the same core ops the layers are made of (matmul, transpose, softmax), and each
// part ends by checking its result against the nn/ module that computes it in one call (part 4:
// against autograd), so the walkthrough cannot drift from the real thing.
#include <cxxopts.hpp>

#include <cstdio>
#include <iostream>

#include "apps/common/command_line.h"
#include "apps/walkthrough/attention_steps.h"
#include "apps/walkthrough/walkthrough_print.h"
#include "core/error.h"

int main(int argc, char** argv) {
  using namespace uwaga::walkthrough;
  cxxopts::Options o("uwaga-walkthrough",
                     "Attention on \"we are eating bread\", every intermediate printed, in five "
                     "parts (--part N; all of them by default):\n"
                     "  1  one self-attention layer\n"
                     "  2  multi-head attention, head by head\n"
                     "  3  one pre-LN transformer block\n"
                     "  4  the backward pass of one attention layer\n"
                     "  5  a training step of a small ViT, written out");
  o.add_options()
      ("dim", "width D of the word vectors", cxxopts::value<std::int64_t>()->default_value("8"))
      ("d-k", "d_k = d_v of the single attention layer", cxxopts::value<std::int64_t>()->default_value("4"))
      ("heads", "heads h of the multi-head layer (must divide --dim)", cxxopts::value<std::int64_t>()->default_value("2"))
      ("seed", "seed of the word vectors and the weights", cxxopts::value<std::uint64_t>()->default_value("0"))
      ("causal", "mask the scores so no word looks at the words after it (a decoder, GPT)")
      ("part", "run only this part, 1 to 5 (0: all)", cxxopts::value<int>()->default_value("0"))
      ("version", "print the version and git revision")
      ("h,help", "show this help");
  try {
    auto r = o.parse(argc, argv);
    if (r.count("help")) {
      std::cout << o.help() << "\n";
      return 0;
    }
    if (r.count("version")) {
      uwaga::apps::print_version("uwaga-walkthrough");
      return 0;
    }
    uwaga::apps::reject_unexpected_arguments(r, "");
    const std::int64_t D = r["dim"].as<std::int64_t>();
    const std::int64_t d_k = r["d-k"].as<std::int64_t>();
    const std::int64_t heads = r["heads"].as<std::int64_t>();
    const bool causal = r.count("causal") > 0;
    const int part = r["part"].as<int>();
    if (D < 1 || d_k < 1 || heads < 1) uwaga::fail("--dim, --d-k and --heads must be positive");
    if (D > 16 || d_k > 16) uwaga::fail("--dim and --d-k are at most 16 (the matrices are printed)");
    if (D % heads != 0) uwaga::fail("--heads ", heads, " must divide --dim ", D);
    if (part < 0 || part > 5) uwaga::fail("--part must be 0 (all) or 1 to 5, got ", part);
    uwaga::Generator gen(r["seed"].as<std::uint64_t>());

    std::printf("uwaga-walkthrough: attention on \"we are eating bread\" (float64)\n"
                "The word vectors X and every weight below are random numbers (seed %llu), not\n"
                "learned: no model has read these words, so the numbers mean nothing about them.\n"
                "What the walkthrough shows is how each matrix is computed from the one before.\n",
                static_cast<unsigned long long>(r["seed"].as<std::uint64_t>()));
    // Made-up word vectors: a trained model would learn them (an embedding table).
    const uwaga::Tensor X = uwaga::Tensor::randn({4, D}, gen, uwaga::DType::Float64);
    show("X", X, "the input vectors, one row per word (N x D_X), random", kWords);

    // Each part draws its weights from the same generator in the same order, whichever parts run.
    if (part == 0 || part == 1) one_attention_layer(X, d_k, causal, gen);
    if (part == 0 || part == 2) one_multi_head_layer(X, heads, causal, gen);
    if (part == 0 || part == 3) one_block(X, heads, causal, gen);
    if (part == 0 || part == 4) attention_backward(X, d_k, causal, gen);
    if (part == 0 || part == 5) plain_training_step(gen);
    std::printf("\nDone: every matrix above is what nn/ computes for this input.\n");
    return 0;
  } catch (const uwaga::Error& e) {
    std::cerr << "uwaga-walkthrough: " << e.what() << "\n";
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "uwaga-walkthrough: " << uwaga::apps::parse_error_message(e, argc, argv)
              << " (see --help)\n";
    return 2;
  }
}
