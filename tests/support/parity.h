#pragma once
// Parity with PyTorch: run a module on a golden file's inputs and weights, compare the output and
// every gradient with what PyTorch computed (tests/golden/make_golden.py).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include "nn/module.h"
#include "tests/support/golden.h"

namespace uwaga::testing {


// inputs: name -> tensor (requires grad) taken from "input.<name>"; `forward` builds the output.
// Buffers ("buffer.<name>", BatchNorm's running statistics) are loaded with the parameters, and
// those PyTorch had after its forward pass ("buffer_after.<name>") are compared with the module's.
// The module runs in the mode the caller set (train() or eval()).
inline void check_parity(const std::string& golden_name, nn::Module& module,
                         const std::function<Tensor(std::map<std::string, Tensor>&)>& forward,
                         double atol = 1e-10, double rtol = 1e-8) {
  Golden g = load_golden(golden_name);
  module.to(DType::Float64);
  nn::StateDict state;
  for (const std::string& key : g.keys("param.")) state[key.substr(6)] = g.get(key);
  for (const std::string& key : g.keys("buffer.")) state[key.substr(7)] = g.get(key);
  module.load_state_dict(state);
  std::map<std::string, Tensor> inputs;
  for (const std::string& key : g.keys("input.")) {
    Tensor t = g.get(key).clone();
    if (t.is_floating()) t.requires_grad_();
    inputs[key.substr(6)] = t;
  }
  module.zero_grad();
  Tensor y = forward(inputs);
  double largest = 0;
  auto track = [&](const std::string& what, const Tensor& a, const Tensor& e) {
    check_close(golden_name + " " + what, a, e, atol, rtol);
    if (a.defined() && e.defined() && a.shape() == e.shape())
      for (std::int64_t i = 0; i < a.numel(); ++i)
        largest = std::max(largest, std::abs(a.flat(i) - e.flat(i)));
  };
  track("output.y", y, g.get("output.y"));
  const nn::StateDict after = module.state_dict();
  for (const std::string& key : g.keys("buffer_after."))
    track(key, after.at(key.substr(13)), g.get(key));
  y.backward(g.get("upstream.y"));
  for (const std::string& key : g.keys("grad.input."))
    track(key, inputs.at(key.substr(11)).grad(), g.get(key));
  nn::StateDict params = module.state_dict();
  for (const std::string& key : g.keys("grad.param."))
    track(key, params.at(key.substr(11)).grad(), g.get(key));
  // UWAGA_PARITY_REPORT=1 prints the largest difference of each file (for reports).
  if (std::getenv("UWAGA_PARITY_REPORT"))
    std::printf("parity %-18s largest |uwaga - PyTorch| = %.3g\n", golden_name.c_str(), largest);
}

}  // namespace uwaga::testing
