#pragma once
// A ViT built with some dropout (`dropping`) against the same ViT without it (`plain`), on the same
// images: in evaluation it gives plain's output; in training another, fixed by the step's seed
// (seed_dropout) and changed by another seed. The tests of each kind of dropout share it.
#include <catch2/catch.hpp>

#include "core/uwaga.h"
#include "nn/vision_transformer.h"

namespace uwaga::testing {

inline void require_dropout_in_training_only(nn::VisionTransformer& plain,
                                             nn::VisionTransformer& dropping) {
  Generator gx(6);
  Tensor images = Tensor::randn({3, 1, 28, 28}, gx);
  const auto expected = plain.forward(images).to_vector();
  dropping.eval();
  REQUIRE(dropping.forward(images).to_vector() == expected);
  dropping.train();
  dropping.seed_dropout(1);
  const auto first = dropping.forward(images).to_vector();
  REQUIRE(first != expected);
  dropping.seed_dropout(1);  // the masks depend only on the step's seed
  REQUIRE(dropping.forward(images).to_vector() == first);
  dropping.seed_dropout(2);  // another step's seed: other masks
  REQUIRE(dropping.forward(images).to_vector() != first);
}

}  // namespace uwaga::testing
