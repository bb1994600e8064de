// Run under `mpirun -np N`: N processes × T threads compute one batch's gradient through
// MpiReduction, and it must equal the gradient of one forward/backward of the whole batch in one
// process (float64, to 1e-12 relative), identical on every process. Exit status 0 when it does.
#include <cmath>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "nn/cross_entropy.h"
#include "nn/loss.h"
#include "nn/vision_transformer.h"
#include "optim/data_parallel.h"
#include "optim/mpi_reduction.h"

using namespace uwaga;

namespace {

std::unique_ptr<nn::VisionTransformer> tiny_vit() {
  nn::VitConfig c;
  c.image_size = 8, c.channels = 1, c.patch = 4, c.dim = 8, c.depth = 2, c.heads = 2;
  c.mlp_dim = 16, c.num_classes = 3;
  Generator gen(1);
  auto model = std::make_unique<nn::VisionTransformer>(c, gen);
  model->to(DType::Float64);
  return model;
}

Batch make_batch(std::int64_t rows) {
  Generator gen(7);
  std::vector<std::int64_t> y(static_cast<std::size_t>(rows));
  Tensor images = Tensor::randn({rows, 1, 8, 8}, gen, DType::Float64);
  for (auto& label : y) label = static_cast<std::int64_t>(gen.below(3));
  return {{images}, Tensor::from_indices(y, {rows})};
}

// Every gradient's bytes, for comparing processes exactly.
std::string gradient_bytes(const nn::Module& model) {
  std::string bytes;
  for (const Tensor& p : model.parameters()) {
    const std::vector<double> g = p.grad().to_vector();
    bytes.append(reinterpret_cast<const char*>(g.data()), g.size() * sizeof(double));
  }
  return bytes;
}

}  // namespace

int main() {
  optim::MpiReduction processes;
  int failures = 0;
  const Batch batch = make_batch(9);
  for (int threads : {1, 2}) {
    const auto reference = tiny_vit();
    const Tensor expected_loss = nn::cross_entropy(reference->forward(batch.inputs[0]), batch.targets);
    expected_loss.backward();

    const auto model = tiny_vit();
    optim::DataParallel parallel(*model, {threads, 2}, &processes);
    const optim::StepResult r = parallel.gradient(batch, nn::CrossEntropyLoss());

    double worst = 0;
    const auto got = model->named_parameters(), want = reference->named_parameters();
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::vector<double> a = got[i].second.grad().to_vector(), b = want[i].second.grad().to_vector();
      double scale = 1;
      for (double v : b) scale = std::max(scale, std::abs(v));
      for (std::size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::abs(a[k] - b[k]) / scale);
    }
    const double loss_error = std::abs(r.loss - expected_loss.item());
    std::string mine = gradient_bytes(*model), process_0 = mine;
    processes.broadcast(process_0);
    const bool same_everywhere = mine == process_0;
    const bool ok = worst <= 1e-12 && loss_error <= 1e-12 && r.items == 9 && same_everywhere;
    std::printf("process %d of %d, %d thread(s): largest gradient difference %.2e (relative), loss "
                "difference %.2e, %lld items, %s process 0's bytes: %s\n",
                processes.rank(), processes.size(), threads, worst, loss_error,
                static_cast<long long>(r.items), same_everywhere ? "same as" : "DIFFERENT from",
                ok ? "OK" : "NOT OK");
    failures += ok ? 0 : 1;
  }
  const int status = processes.any(failures > 0) ? 1 : 0;
  optim::end_processes(0);
  return status;
}
