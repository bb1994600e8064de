// uwaga-bench: the measurements behind apps/bench/run.sh, one JSON object per line on stdout.
// apps/bench/vit_torch.py has the same modes with the same flags for PyTorch, so run.sh can run
// the two alternately and compare line by line.
//   uwaga-bench --mode train   --threads 2 --batch 128   training steps of mnist-tiny, images/s
//   uwaga-bench --mode eval    --threads 2 --batch 128   forward passes without autograd
//   uwaga-bench --mode sgemm   --threads 2               OpenBLAS sgemm GFLOP/s: 1024³ and the
//                                                         model's GEMM shapes (the ceiling)
//   uwaga-bench --mode bf16gemm --threads 1              uwaga's bfloat16 product against the
//                                                         float32 one at the models' shapes
//   uwaga-bench --mode micro   --threads 2 --op mha,gelu ops forward+backward (mha, layernorm,
//                                                         gelu, gelu-tanh, maxpool, xent; attention:
//                                                         forward), µs per call
//   uwaga-bench --mode mha-scaling --threads 2           one attention layer for n = 16 … 1024
//   uwaga-bench --mode translate --threads 2             the translator's training steps
//                                                         (apps/bench/translator_throughput.h)
//   uwaga-bench --mode gpt --threads 2 --model shakespeare-small   uwaga-gpt's training steps,
//                                                         tokens/s (apps/bench/gpt_throughput.h)
// --precision bf16 runs the models' matrix products in bfloat16 (core/matmul_precision.h); train
// then reports itself as "uwaga-bf16" (a column of apps/bench/vit_speed.sh with BF16=1).
// Every timing is a median over --repeats repeats after --warmup calls. The data are random:
// throughput does not depend on the values.
#include <cblas.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>
#include <cxxopts.hpp>

#include "apps/bench/bench_timing.h"
#include "apps/bench/gpt_throughput.h"
#include "apps/bench/translator_throughput.h"
#include "apps/common/thread_policy.h"
#include "apps/gpt/gpt_training.h"
#include "apps/translate/translate_training.h"
#include "core/bf16_gemm.h"
#include "core/bfloat16.h"
#include "core/matmul_precision.h"
#include "core/small_gemm.h"
#include "core/uwaga.h"
#include "nn/attention_kernels.h"
#include "nn/cross_entropy.h"
#include "nn/gelu.h"
#include "nn/layer_norm.h"
#include "nn/conv/max_pool2d.h"
#include "nn/multi_head_attention.h"
#include "nn/vision_transformer.h"
#include "optim/adam.h"
#include "optim/data_parallel.h"

namespace uwaga::apps {
namespace {

using nlohmann::json;

// A few random batches of (B, 1, 28, 28) images with labels, cycled through.
// The ViTs the benchmark trains (as apps/bench/vit_torch2.py's --model, cifar10-cct aside): the
// models of uwaga-vit's mnist-tiny and cifar10-small presets; cifar10-vit, s-chh's plain ViT (the
// cifar10-vit preset's model until CCT's tokenizer) and cifar10-cct, the preset's model now; and
// a dim-192, depth-12, 3-head ViT on 32 × 32 × 3 images.
nn::VitConfig bench_model(const std::string& name) {
  nn::VitConfig c;  // mnist-tiny: 28 × 28 × 1, patch 7 (17 tokens), dim 64, depth 6, heads 4, MLP 128
  if (name == "mnist-tiny") return c;
  c.image_size = 32, c.channels = 3, c.patch = 4;  // 65 tokens
  if (name == "cifar10-small") {
    c.dim = 96, c.depth = 6, c.heads = 4, c.mlp_dim = 192;
    return c;
  }
  // s-chh's plain ViT, uwaga-vit's cifar10-vit preset until the CCT tokenizer (git 75ca291), kept
  // as the speed tables' workload; cifar10-cct is the preset's model now. Both without the recipe.
  if (name == "cifar10-vit") {
    c.dim = 128, c.depth = 6, c.heads = 4, c.mlp_dim = 256;
    return c;
  }
  if (name == "cifar10-cct") {
    c.dim = 128, c.depth = 4, c.heads = 2, c.mlp_dim = 128, c.stem = "cct", c.pool = "seq";
    return c;
  }
  if (name == "vit-d192") {
    c.dim = 192, c.depth = 12, c.heads = 3, c.mlp_dim = 768;
    return c;
  }
  fail("--model: expected mnist-tiny, cifar10-small, cifar10-vit, cifar10-cct or vit-d192, got '",
       name, "'");
}

struct RandomBatches {
  RandomBatches(const nn::VitConfig& c, std::int64_t batch, Generator& gen, int count = 4) {
    for (int i = 0; i < count; ++i) {
      images.push_back(Tensor::randn({batch, c.channels, c.image_size, c.image_size}, gen));
      std::vector<std::int64_t> y(batch);
      for (auto& label : y) label = static_cast<std::int64_t>(gen.below(c.num_classes));
      labels.push_back(Tensor::from_indices(y, {batch}));
    }
  }
  std::vector<Tensor> images, labels;  // (B, C, H, W), (B,)
};

// Training throughput of a ViT (mnist-tiny unless --model says otherwise) with AdamW, as
// uwaga-vit trains it: zero the gradients, forward, cross-entropy and backward on one model
// replica per thread, each taking its share of the batch in micro-batches
// (optim::DataParallel::gradient), then the update. Phases:
// "gradient" (the replicas' forward and backward passes and the sum of their gradients) and
// "optimizer".
json bench_train(const BenchOptions& o) {
  const long rss_before_model = peak_rss_kb();
  const nn::VitConfig config = bench_model(o.model);
  Generator gen(o.seed);
  nn::VisionTransformer model(config, gen);
  optim::AdamW opt(optim::make_param_groups(model, 0.05), {1e-3});
  RandomBatches data(config, o.batch, gen);
  const nn::CrossEntropyLoss loss;
  optim::DataParallel parallel(model, {num_threads(), o.micro_batch});

  std::vector<double> gradient_s, update_s;
  int step = 0;
  auto train_step = [&] {
    const std::size_t i = step++ % data.images.size();
    model.zero_grad();
    auto t0 = Clock::now();
    parallel.gradient({{data.images[i]}, data.labels[i]}, loss);
    auto t1 = Clock::now();
    opt.step();
    auto t2 = Clock::now();
    gradient_s.push_back(std::chrono::duration<double>(t1 - t0).count());
    update_s.push_back(std::chrono::duration<double>(t2 - t1).count());
  };
  int calls = 0;
  std::vector<double> cpu_per_step;
  const std::vector<double> per_step = time_calls(train_step, o, &calls, &cpu_per_step);
  // Phases of the timed steps only (the warm-up steps come first).
  auto timed = [&](std::vector<double>& v) {
    v.erase(v.begin(), v.begin() + std::min<std::size_t>(o.warmup, v.size()));
    return median(v) * 1e3;
  };

  std::vector<double> images_per_s, images_per_cpu_s;
  for (double s : per_step) images_per_s.push_back(o.batch / s);
  for (double s : cpu_per_step) images_per_cpu_s.push_back(o.batch / s);
  const double flops_per_image = 3.0 * config.forward_flops();  // forward + backward ≈ 3 forwards
  json j = header("train");
  j["model"] = o.model;
  j["batch"] = o.batch;
  j["micro_batch"] = o.micro_batch;
  j["gemm_piece_work"] = gemm_piece_work();
  j["gemm_kernel"] = gemm_kernel() == GemmKernel::uwaga ? "uwaga" : "openblas";
  j["warmup_steps"] = o.warmup;
  j["steps_per_repeat"] = calls;
  j["images_per_s"] = images_per_s;
  j["median_images_per_s"] = median(images_per_s);
  j["images_per_cpu_s"] = images_per_cpu_s;
  j["flops_per_image"] = flops_per_image;
  j["effective_gflops"] = median(images_per_s) * flops_per_image / 1e9;
  j["phase_ms"] = {{"gradient", timed(gradient_s)}, {"optimizer", timed(update_s)}};
  if (o.op_times) j["op_times"] = time_ops(train_step, o.op_steps);
  j["parameters"] = model.num_parameters();
  j["rss_before_model_kb"] = rss_before_model;
  j["peak_rss_kb"] = peak_rss_kb();
  return j;
}

// Evaluation throughput: forward passes in eval mode, no graph recorded, as uwaga-vit evaluates
// (optim::DataParallel::forward: a replica per thread, --micro-batch images at a time).
json bench_eval(const BenchOptions& o) {
  const nn::VitConfig config = bench_model(o.model);
  Generator gen(o.seed);
  nn::VisionTransformer model(config, gen);
  model.eval();
  RandomBatches data(config, o.batch, gen);
  optim::DataParallel parallel(model, {num_threads(), o.micro_batch});
  int step = 0;
  double sink = 0;  // keeps the result alive
  auto eval_step = [&] {
    Tensor logits = parallel.forward({data.images[step++ % data.images.size()]});
    sink += logits.data<float>()[0];
  };
  std::vector<double> images_per_s, images_per_cpu_s, cpu_per_step;
  for (double s : time_calls(eval_step, o, nullptr, &cpu_per_step)) images_per_s.push_back(o.batch / s);
  for (double s : cpu_per_step) images_per_cpu_s.push_back(o.batch / s);
  json j = header("eval");
  j["model"] = o.model;
  j["batch"] = o.batch;
  j["images_per_s"] = images_per_s;
  j["images_per_cpu_s"] = images_per_cpu_s;
  j["median_images_per_s"] = median(images_per_s);
  j["effective_gflops"] = median(images_per_s) * config.forward_flops() / 1e9;
  j["peak_rss_kb"] = peak_rss_kb();
  j["checksum"] = sink;
  return j;
}

// OpenBLAS sgemm, C (M×N) = A (M×K) B (K×N), through the same gemm<float> the ops use (which
// splits the rows across threads itself) or, with `direct`, as one cblas_sgemm call that OpenBLAS
// threads its own way — reported as impl "openblas". The ceiling is the better of the two.
json bench_sgemm_shape(std::int64_t M, std::int64_t K, std::int64_t N, const BenchOptions& o,
                       bool direct) {
  Generator gen(o.seed);
  Tensor A = Tensor::randn({M, K}, gen), B = Tensor::randn({K, N}, gen), C = Tensor::zeros({M, N});
  auto product = [&] {
    if (direct)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M),
                  static_cast<int>(N), static_cast<int>(K), 1.0f, A.data<float>(),
                  static_cast<int>(K), B.data<float>(), static_cast<int>(N), 0.0f,
                  C.data<float>(), static_cast<int>(N));
    else
      gemm<float>(false, false, M, N, K, 1.0f, A.data<float>(), K, B.data<float>(), N, 0.0f,
                  C.data<float>(), N);
  };
  std::vector<double> gflops;
  for (double s : time_calls(product, o)) gflops.push_back(2.0 * M * N * K / s / 1e9);
  json j = header("sgemm");
  if (direct) j["impl"] = "openblas";
  j["shape"] = std::to_string(M) + "x" + std::to_string(K) + "·" + std::to_string(K) + "x" +
               std::to_string(N);
  j["m"] = M;
  j["n"] = N;
  j["k"] = K;
  j["gflops"] = gflops;
  j["median_gflops"] = median(gflops);
  return j;
}

// The small products of a training step, hot, on uwaga's kernel (core/small_gemm.h) and on
// OpenBLAS's (cblas_sgemm on the core uwaga chose), alternated repeat by repeat. `spec` is MxKxN
// for C (M×N) = A (M×K) · B (K×N), or tMxKxN for C = Aᵀ B with A stored K×M (a weight gradient's
// layout).
// Two products of the same `flops` timed alternately, one call each per repeat (so a busy
// moment of the machine falls on both): the GFLOP/s of `a`'s and of `b`'s calls.
template <class A, class B>
std::pair<std::vector<double>, std::vector<double>> alternated_gflops(A a, B b, double flops,
                                                                      const BenchOptions& o) {
  BenchOptions one = o;
  one.repeats = 1;
  std::pair<std::vector<double>, std::vector<double>> gflops;
  for (int r = 0; r < o.repeats; ++r) {
    gflops.first.push_back(flops / time_calls(a, one)[0] / 1e9);
    gflops.second.push_back(flops / time_calls(b, one)[0] / 1e9);
  }
  return gflops;
}

json bench_small_gemm(const std::string& spec, const BenchOptions& o) {
  long long M = 0, K = 0, N = 0;
  const bool ta = !spec.empty() && spec[0] == 't';
  if (std::sscanf(spec.c_str() + (ta ? 1 : 0), "%lldx%lldx%lld", &M, &K, &N) != 3 || M < 1 ||
      N < 1 || K < 1)
    fail("--shapes entry '", spec, "' should be MxKxN or tMxKxN, e.g. 36x96x288");
  Generator gen(o.seed);
  Tensor A = Tensor::randn({M * K}, gen), B = Tensor::randn({K * N}, gen),
         C = Tensor::zeros({M * N});
  const std::int64_t lda = ta ? M : K;
  auto own = [&] {
    small_sgemm(ta, M, N, K, 1.0f, A.data<float>(), lda, B.data<float>(), N, 0.0f,
                C.data<float>(), N);
  };
  auto blas = [&] {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, static_cast<int>(M),
                static_cast<int>(N), static_cast<int>(K), 1.0f, A.data<float>(),
                static_cast<int>(lda), B.data<float>(), static_cast<int>(N), 0.0f,
                C.data<float>(), static_cast<int>(N));
  };
  const auto [own_gflops, blas_gflops] = alternated_gflops(own, blas, 2.0 * M * N * K, o);
  json j = header("small-gemm");
  j["shape"] = spec;
  j["uwaga_gflops"] = own_gflops;
  j["openblas_gflops"] = blas_gflops;
  j["median_uwaga_gflops"] = median(own_gflops);
  j["median_openblas_gflops"] = median(blas_gflops);
  j["uwaga_speedup"] = median(own_gflops) / median(blas_gflops);
  return j;
}

// uwaga's bfloat16 product (core/bf16_gemm.h) against the float32 one (gemm<float>, OpenBLAS's
// kernels), alternated repeat by repeat. `spec` is [NN|NT|TN:]MxKxN for C (M×N) = op(A) (M×K) ·
// op(B) (K×N): NT (the default) is a linear layer's forward x·Wᵀ, NN its input gradient dy·W, TN
// its weight gradient dyᵀ·x.
json bench_bf16_gemm(const std::string& spec, const BenchOptions& o) {
  std::string layout = "NT", dims = spec;
  if (const auto colon = spec.find(':'); colon != std::string::npos) {
    layout = spec.substr(0, colon);
    dims = spec.substr(colon + 1);
  }
  long long M = 0, K = 0, N = 0;
  if ((layout != "NN" && layout != "NT" && layout != "TN") ||
      std::sscanf(dims.c_str(), "%lldx%lldx%lld", &M, &K, &N) != 3 || M < 1 || N < 1 || K < 1)
    fail("--shapes entry '", spec, "' should be [NN|NT|TN:]MxKxN, e.g. NT:1024x768x3072");
  const bool ta = layout[0] == 'T', tb = layout[1] == 'T';
  Generator gen(o.seed);
  Tensor A = Tensor::randn({M * K}, gen), B = Tensor::randn({K * N}, gen),
         C = Tensor::zeros({M * N});
  const std::int64_t lda = ta ? M : K, ldb = tb ? K : N;
  auto bf16 = [&] {
    bf16_gemm(ta, tb, M, N, K, 1.0f, A.data<float>(), lda, B.data<float>(), ldb, 0.0f,
              C.data<float>(), N);
  };
  auto fp32 = [&] {
    gemm<float>(ta, tb, M, N, K, 1.0f, A.data<float>(), lda, B.data<float>(), ldb, 0.0f,
                C.data<float>(), N);
  };
  const auto [bf16_gflops, fp32_gflops] = alternated_gflops(bf16, fp32, 2.0 * M * N * K, o);
  json j = header("bf16gemm");
  j["shape"] = layout + ":" + dims;
  j["bf16_path"] = bf16_gemm_path();
  j["bf16_gflops"] = bf16_gflops;
  j["fp32_gflops"] = fp32_gflops;
  j["median_bf16_gflops"] = median(bf16_gflops);
  j["median_fp32_gflops"] = median(fp32_gflops);
  j["bf16_speedup"] = median(bf16_gflops) / median(fp32_gflops);
  return j;
}

// GPT-2 124M's products (dim 768, MLP 3072, vocabulary 50257) for 1024 tokens (B 4, T 256) and
// the LM head for 256; vit-d192's (dim 192, MLP 768) for a batch of 128 images of 65 tokens
// (8320 rows): the forward (NT), and for the MLP's first layer both gradients (NN, TN).
const char* const kBf16GemmShapes =
    "NT:1024x768x2304,NT:1024x768x768,NT:1024x768x3072,NT:1024x3072x768,NN:1024x3072x768,"
    "TN:3072x1024x768,NT:256x768x50257,NT:8320x192x576,NT:8320x192x192,NT:8320x192x768,"
    "NT:8320x768x192,NN:8320x768x192,TN:768x8320x192";

#if defined(__x86_64__)
// The peak of one core's multiply-adds in registers: vdpbf16ps (two bfloat16 products per float
// lane) against vfmadd231ps (one), on 12 independent sums each — the ceiling of the ratio above
// on this CPU. Null where the CPU has no AVX512-BF16.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"), noinline)) double
register_peak_gflops(bool bf16, long steps) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512 x = _mm512_set1_ps(1.0f), y = _mm512_set1_ps(0.5f);
  const auto start = Clock::now();
  for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i)
      acc[i] = bf16 ? _mm512_dpbf16_ps(acc[i], reinterpret_cast<__m512bh>(x),
                                       reinterpret_cast<__m512bh>(y))
                    : _mm512_fmadd_ps(acc[i], x, y);
    __asm__ volatile("" : "+v"(x));  // keeps the loop from being folded
  }
  const double seconds = seconds_since(start);
  float sink = 0;
  for (int i = 0; i < 12; ++i) sink += _mm512_cvtss_f32(acc[i]);
  __asm__ volatile("" : : "x"(sink));
  return 12.0 * steps * (bf16 ? 64 : 32) / seconds / 1e9;
}

#endif  // __x86_64__

json bench_register_peak() {
  json j = header("bf16gemm-peak");
#if !defined(__x86_64__)
  if (true) {
#else
  if (!cpu_has_avx512_bf16()) {
#endif
    j["bf16_gflops"] = nullptr;
    return j;
  }
#if defined(__x86_64__)
  std::vector<double> bf16, fp32;
  for (int r = 0; r < 5; ++r) {
    bf16.push_back(register_peak_gflops(true, 20000000));
    fp32.push_back(register_peak_gflops(false, 20000000));
  }
  j["bf16_gflops"] = median(bf16);
  j["fp32_gflops"] = median(fp32);
  j["bf16_speedup"] = median(bf16) / median(fp32);
#endif
  return j;
}

// cifar10-small's pieces (a micro-batch of 16 images: 1040 rows; dim 96, MLP 192) and attention's
// products per head (65 tokens, heads of 24), then mnist-tiny's (272 rows, dim 64, MLP 128; 17
// tokens, heads of 16): the forward's NN pieces, the input gradients', the weight gradients' TN
// pieces, as core/matmul.cpp cuts them.
const char* const kSmallGemmShapes =
    "36x96x288,108x96x96,54x96x192,54x192x96,36x288x96,t288x36x96,t96x108x96,t192x54x96,"
    "t96x54x192,65x24x65,65x65x24,t65x65x24,68x64x192,136x64x64,91x64x128,t192x68x64,"
    "t128x91x64,17x16x17,17x17x16,t17x17x16";

// Multiply-adds ×2 of one self-attention layer's forward pass: the qkv and output projections
// (4 D² per token) and Q Kᵀ, A V (2 n² D per sequence over all heads).
double mha_forward_flops(std::int64_t batch, std::int64_t n, std::int64_t D) {
  return 2.0 * batch * n * D * 4 * D + 2.0 * 2 * batch * n * n * D;
}

// One op forward + backward with a random upstream gradient (attention: forward only); µs per call.
json bench_micro(const std::string& op, const BenchOptions& o) {
  Generator gen(o.seed);
  const std::int64_t B = 128, T = 17, D = 64, heads = 4, hidden = 128, classes = 10;
  std::function<void()> call;
  double flops = 0;       // of the matrix products, forward + backward
  double bytes = 0;       // the least memory traffic of forward + backward
  std::string shape;
  std::shared_ptr<nn::MultiHeadAttention> mha;
  Tensor x, w, b, g, targets;
  if (op == "mha") {
    mha = std::make_shared<nn::MultiHeadAttention>(
        nn::MultiHeadAttentionOptions{.dim = D, .heads = heads}, gen);
    x = Tensor::randn({B, T, D}, gen).requires_grad_();
    g = Tensor::randn({B, T, D}, gen);
    call = [&] {
      mha->zero_grad();
      x.zero_grad();
      mha->forward(x).backward(g);
    };
    flops = 3 * mha_forward_flops(B, T, D);
    shape = "x (128, 17, 64), 4 heads";
  } else if (op == "layernorm") {
    x = Tensor::randn({B * T, D}, gen).requires_grad_();
    w = Tensor::ones({D}).requires_grad_();
    b = Tensor::zeros({D}).requires_grad_();
    g = Tensor::randn({B * T, D}, gen);
    call = [&] {
      x.zero_grad();
      w.zero_grad();
      b.zero_grad();
      nn::layer_norm(x, w, b).backward(g);
    };
    bytes = 4.0 * B * T * D * 5;  // forward reads x, writes y; backward reads dy, x, writes dx
    shape = "(2176, 64)";
  } else if (op == "gelu") {
    x = Tensor::randn({B * T, hidden}, gen).requires_grad_();
    g = Tensor::randn({B * T, hidden}, gen);
    call = [&] {
      x.zero_grad();
      nn::gelu(x).backward(g);
    };
    bytes = 4.0 * B * T * hidden * 5;
    shape = "(2176, 128)";
  } else if (op == "gelu-tanh") {  // GPT-2's GELU, on its MLP's hidden layer at B 4, T 64
    x = Tensor::randn({256, 3072}, gen).requires_grad_();
    g = Tensor::randn({256, 3072}, gen);
    call = [&] {
      x.zero_grad();
      nn::gelu_tanh(x).backward(g);
    };
    bytes = 4.0 * 256 * 3072 * 5;
    shape = "(256, 3072)";
  } else if (op == "attention" || op == "attention-backward") {
    // cifar10-small's shapes (a micro-batch of 16 images, 65 tokens, 4 heads of 24): Q Kᵀ, the
    // softmax and A V of every head as training records them; with "-backward" also dQ, dK, dV
    // of every head from a random dY.
    const std::int64_t b = 16, n = 65, dim = 96;
    const bool backward = op == "attention-backward";
    x = Tensor::randn({b, n, 3 * dim}, gen).requires_grad_();
    g = Tensor::randn({b, n, dim}, gen);
    call = [&, backward] {
      if (!backward) {
        nn::attention_heads(x, heads);
        return;
      }
      x.zero_grad();
      nn::attention_heads(x, heads).backward(g);
    };
    flops = (backward ? 3 : 1) * 2.0 * 2 * b * n * n * dim;
    shape = std::string("qkv (16, 65, 288), 4 heads, forward") + (backward ? " and backward" : "");
  } else if (op == "maxpool" || op == "maxpool-reference") {
    // cifar10-vit's CCT tokenizer on a micro-batch of 16 images: max_pool2d(3, 2, 1) of the first
    // convolution's map, forward and backward (the second pooling's map is half as big).
    const bool reference = op == "maxpool-reference";
    x = Tensor::randn({16, 64, 32, 32}, gen).requires_grad_();
    g = Tensor::randn({16, 64, 16, 16}, gen);
    call = [&, reference] {
      x.zero_grad();
      (reference ? nn::max_pool2d_reference(x, 3, 2, 1) : nn::max_pool2d(x, 3, 2, 1)).backward(g);
    };
    bytes = 4.0 * 16 * 64 * (32 * 32 * 3 + 16 * 16 * 4);  // x; y, its indices, dy; dx twice
    shape = "x (16, 64, 32, 32), 3×3 windows at stride 2, padding 1";
  } else if (op == "xent") {
    x = Tensor::randn({B, classes}, gen).requires_grad_();
    std::vector<std::int64_t> y(B);
    for (auto& label : y) label = static_cast<std::int64_t>(gen.below(classes));
    targets = Tensor::from_indices(y, {B});
    call = [&] {
      x.zero_grad();
      nn::cross_entropy(x, targets).backward();
    };
    bytes = 4.0 * B * classes * 2;
    shape = "logits (128, 10)";
  } else {
    fail("unknown --op '", op, "'; expected mha, attention, attention-backward, layernorm, gelu, gelu-tanh, ",
         "maxpool, maxpool-reference or xent");
  }
  int calls = 0;
  std::vector<double> us;
  for (double s : time_calls(call, o, &calls)) us.push_back(s * 1e6);
  json j = header("micro");
  j["op"] = op;
  j["shape"] = shape;
  j["calls_per_repeat"] = calls;
  j["us"] = us;
  j["median_us"] = median(us);
  if (flops > 0) j["gflops"] = flops / (median(us) * 1e-6) / 1e9;
  if (bytes > 0) j["gb_per_s"] = bytes / (median(us) * 1e-6) / 1e9;
  return j;
}

// One self-attention layer (dim 64, 4 heads) forward + backward for growing n, with batch
// tokens / n so the projections cost the same at every n and only Q Kᵀ, softmax and A V grow.
json bench_mha_scaling(std::int64_t n, std::int64_t tokens, const BenchOptions& o) {
  Generator gen(o.seed);
  const std::int64_t D = 64, heads = 4, batch = std::max<std::int64_t>(1, tokens / n);
  nn::MultiHeadAttention mha({.dim = D, .heads = heads}, gen);
  Tensor x = Tensor::randn({batch, n, D}, gen).requires_grad_();
  Tensor g = Tensor::randn({batch, n, D}, gen);
  auto call = [&] {
    mha.zero_grad();
    x.zero_grad();
    mha.forward(x).backward(g);
  };
  std::vector<double> ms;
  for (double s : time_calls(call, o)) ms.push_back(s * 1e3);
  json j = header("mha-scaling");
  j["n"] = n;
  j["batch"] = batch;
  j["ms"] = ms;
  j["median_ms"] = median(ms);
  j["us_per_sequence"] = median(ms) * 1e3 / batch;
  j["gflops"] = 3 * mha_forward_flops(batch, n, D) / (median(ms) * 1e-3) / 1e9;
  j["peak_rss_kb"] = peak_rss_kb();
  return j;
}

int run(int argc, char** argv) {
  cxxopts::Options cli("uwaga-bench", "uwaga's side of apps/bench/run.sh; prints JSON lines");
  cli.add_options()
      ("mode", "train | eval | sgemm | small-gemm | bf16gemm | micro | mha-scaling | translate-batches | translate | "
       "translate-eval | gpt-config | gpt", cxxopts::value<std::string>())
      ("threads", "OpenMP and OpenBLAS threads", cxxopts::value<int>()->default_value("1"))
      ("batch", "images per step (train, eval)", cxxopts::value<std::int64_t>()->default_value("128"))
      ("warmup", "untimed calls first", cxxopts::value<int>()->default_value("3"))
      ("repeats", "timed repeats (the median is reported)", cxxopts::value<int>()->default_value("5"))
      ("steps", "calls per repeat (0: enough for --min-seconds)", cxxopts::value<int>()->default_value("0"))
      ("min-seconds", "length of a repeat when --steps is 0", cxxopts::value<double>()->default_value("0.25"))
      ("op-times", "train, gpt: then --op-steps steps timing each op's forward and backward (ms per "
       "step by op, summed over threads)")
      ("op-steps", "steps timed by --op-times", cxxopts::value<int>()->default_value("20"))
      ("micro-batch", "train, eval: images per forward (and backward) pass, per thread (0: a "
       "thread's whole share of the batch)", cxxopts::value<std::int64_t>()->default_value("16"))
      ("op", "micro: any of mha, attention, attention-backward, layernorm, gelu, gelu-tanh, maxpool, maxpool-reference, xent", cxxopts::value<std::vector<std::string>>()->default_value(
          "mha,layernorm,gelu,xent"))
      ("shapes", "sgemm: MxKxN for (M×K)·(K×N); small-gemm: the same, tMxKxN for Aᵀ·B "
       "(default: cifar10-small's and mnist-tiny's pieces); bf16gemm: NT:MxKxN, NN:…, TN:… "
       "(default: GPT-2 124M's and vit-d192's products)", cxxopts::value<std::vector<std::string>>()->default_value(
          "1024x1024x1024,2176x64x192,2176x64x64,2176x64x128,2176x128x64"))
      ("lengths", "mha-scaling: sequence lengths n", cxxopts::value<std::vector<std::int64_t>>()->default_value(
          "16,32,64,128,256,512,1024"))
      ("tokens", "mha-scaling: batch · n", cxxopts::value<std::int64_t>()->default_value("4096"))
      ("count", "translate*: how many batches of the first epoch (cycled)",
       cxxopts::value<std::int64_t>()->default_value("20"))
      ("batches", "translate*: ignored (the file is for PyTorch's side)", cxxopts::value<std::string>())
      ("seed", "random seed", cxxopts::value<std::uint64_t>()->default_value("0"))
      ("gemm-piece-work", "multiply-adds per piece of a thin product (0: whole products to "
       "OpenBLAS; default: the library's, see core/matmul.h)", cxxopts::value<std::int64_t>())
      ("gemm-kernel", "kernels for the small products and the pieces: openblas or uwaga "
       "(default: the library's, see core/matmul.h)", cxxopts::value<std::string>())
      ("precision", "train, eval, gpt: fp32, or bf16 (the matrix products in bfloat16 with float32 "
       "sums, core/matmul_precision.h; float32 on a CPU without AVX512-BF16)",
       cxxopts::value<std::string>()->default_value("fp32"))
      ("model", "train, eval: mnist-tiny, cifar10-small, cifar10-vit, cifar10-cct or vit-d192; gpt, "
       "gpt-config: shakespeare-tiny, shakespeare-small or smoke (default: mnist-tiny, shakespeare-tiny)",
       cxxopts::value<std::string>())
      ("h,help", "this help");
  auto args = cli.parse(argc, argv);
  if (args.count("help") || !args.count("mode")) {
    std::cout << cli.help() << "\n";
    return args.count("help") ? 0 : 2;
  }
  BenchOptions o;
  o.threads = args["threads"].as<int>();
  o.batch = args["batch"].as<std::int64_t>();
  o.warmup = args["warmup"].as<int>();
  o.repeats = args["repeats"].as<int>();
  o.steps = args["steps"].as<int>();
  o.min_seconds = args["min-seconds"].as<double>();
  o.op_times = args.count("op-times") > 0;
  o.op_steps = args["op-steps"].as<int>();
  if (o.op_steps < 1) fail("--op-steps must be >= 1, got ", o.op_steps);
  o.micro_batch = args["micro-batch"].as<std::int64_t>();
  if (o.micro_batch < 0) fail("--micro-batch must be >= 0, got ", o.micro_batch);
  o.seed = args["seed"].as<std::uint64_t>();
  if (args.count("gemm-piece-work")) {
    const std::int64_t work = args["gemm-piece-work"].as<std::int64_t>();
    if (work < 0) fail("--gemm-piece-work must be >= 0, got ", work);
    set_gemm_piece_work(work);
  }
  if (args.count("gemm-kernel")) {
    const std::string kernel = args["gemm-kernel"].as<std::string>();
    if (kernel != "openblas" && kernel != "uwaga")
      fail("--gemm-kernel must be openblas or uwaga, got '", kernel, "'");
    set_gemm_kernel(kernel == "uwaga" ? GemmKernel::uwaga : GemmKernel::openblas);
  }
  const std::string precision = args["precision"].as<std::string>();
  if (precision != "fp32" && precision != "bf16")
    fail("--precision must be fp32 or bf16, got '", precision, "'");
  // The whole process is the scope: every product the bench times.
  if (precision == "bf16") set_matmul_precision(MatmulPrecision::bfloat16);
  const std::string mode = args["mode"].as<std::string>();
  const bool gpt = mode == "gpt" || mode == "gpt-config";
  o.model = args.count("model") ? args["model"].as<std::string>()
                                : (gpt ? "shakespeare-tiny" : "mnist-tiny");
  if (o.batch < 1 || o.repeats < 1 || o.warmup < 0 || o.steps < 0)
    fail("--batch and --repeats must be positive, --warmup and --steps not negative");
  init_threads();  // reads UWAGA_NUM_THREADS once; the flag below wins over it
  set_num_threads(o.threads);

  if (mode == "train") {
    json j = bench_train(o);
    if (precision == "bf16") {  // a column of its own in vit_speed.sh (BF16=1)
      j["impl"] = "uwaga-bf16";
      j["bf16_path"] = bf16_gemm_path();
    }
    std::cout << j.dump() << std::endl;
  } else if (mode == "eval") {
    std::cout << bench_eval(o).dump() << std::endl;
  } else if (mode == "sgemm") {
    for (const std::string& s : args["shapes"].as<std::vector<std::string>>()) {
      long long M = 0, K = 0, N = 0;
      if (std::sscanf(s.c_str(), "%lldx%lldx%lld", &M, &K, &N) != 3 || M < 1 || N < 1 || K < 1)
        fail("--shapes entry '", s, "' should be MxKxN, e.g. 2176x64x192");
      std::cout << bench_sgemm_shape(M, K, N, o, false).dump() << std::endl;
      std::cout << bench_sgemm_shape(M, K, N, o, true).dump() << std::endl;
    }
  } else if (mode == "small-gemm") {
    const std::vector<std::string> shapes =
        args.count("shapes") ? args["shapes"].as<std::vector<std::string>>()
                             : std::vector<std::string>{};
    std::vector<std::string> list = shapes;
    if (list.empty()) {
      std::stringstream all(kSmallGemmShapes);
      for (std::string s; std::getline(all, s, ',');) list.push_back(s);
    }
    for (const std::string& s : list) std::cout << bench_small_gemm(s, o).dump() << std::endl;
  } else if (mode == "bf16gemm") {
    std::vector<std::string> list =
        args.count("shapes") ? args["shapes"].as<std::vector<std::string>>()
                             : std::vector<std::string>{};
    if (list.empty()) {
      std::stringstream all(kBf16GemmShapes);
      for (std::string s; std::getline(all, s, ',');) list.push_back(s);
    }
    std::cout << bench_register_peak().dump() << std::endl;
    for (const std::string& s : list) std::cout << bench_bf16_gemm(s, o).dump() << std::endl;
  } else if (mode == "micro") {
    for (const std::string& op : args["op"].as<std::vector<std::string>>())
      std::cout << bench_micro(op, o).dump() << std::endl;
  } else if (mode == "mha-scaling") {
    for (std::int64_t n : args["lengths"].as<std::vector<std::int64_t>>())
      std::cout << bench_mha_scaling(n, args["tokens"].as<std::int64_t>(), o).dump() << std::endl;
  } else if ((mode == "translate-batches" || mode == "translate" || mode == "translate-eval") &&
             args["count"].as<std::int64_t>() < 1) {
    fail("--count must be at least 1, got ", args["count"].as<std::int64_t>());
  } else if (mode == "translate-batches") {
    std::cout << translator_batches(args["count"].as<std::int64_t>()).dump() << std::endl;
  } else if (mode == "translate" || mode == "translate-eval") {
    std::cout << bench_translator(args["count"].as<std::int64_t>(),
                                  args.count("micro-batch") ? o.micro_batch : kTranslateMicroBatch, o,
                                  mode == "translate").dump()
              << std::endl;
  } else if (mode == "gpt-config") {
    std::cout << gpt_bench_config(o.model).dump() << std::endl;
  } else if (mode == "gpt") {
    std::cout << bench_gpt(o.model, args.count("micro-batch") ? o.micro_batch : kGptMicroBatch, o)
                     .dump()
              << std::endl;
  } else {
    fail("unknown --mode '", mode, "'; expected train, eval, sgemm, small-gemm, bf16gemm, micro, "
         "mha-scaling, translate-batches, translate, translate-eval, gpt-config or gpt");
  }
  return 0;
}

}  // namespace
}  // namespace uwaga::apps

int main(int argc, char** argv) {
  uwaga::apps::choose_openmp_wait_policy(argv);
  try {
    return uwaga::apps::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "uwaga-bench: " << e.what() << "\n";
    return 1;
  }
}
