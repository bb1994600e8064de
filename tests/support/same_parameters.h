#pragma once
// Two modules built alike hold the same parameters: the same names in the same order, with the
// same values, element for element. The tests of an option that adds no parameters (dropout,
// drop path) start from two models that differ only in it. parameter_values gives a module's
// parameters as plain numbers, to compare before and after a step, a save or a load.
#include <catch2/catch.hpp>

#include <vector>

#include "nn/module.h"

namespace uwaga::testing {

inline std::vector<std::vector<double>> parameter_values(const nn::Module& model) {
  std::vector<std::vector<double>> out;
  for (const Tensor& p : model.parameters()) out.push_back(p.to_vector());
  return out;
}

inline void require_same_parameters(const nn::Module& a, const nn::Module& b) {
  const auto mine = a.named_parameters(), theirs = b.named_parameters();
  REQUIRE(mine.size() == theirs.size());
  for (std::size_t i = 0; i < mine.size(); ++i) {
    INFO(mine[i].first);
    REQUIRE(mine[i].first == theirs[i].first);
    REQUIRE(mine[i].second.to_vector() == theirs[i].second.to_vector());
  }
}

}  // namespace uwaga::testing
