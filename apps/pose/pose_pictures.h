#pragma once
// The pictures of uwaga-pose predict and attention, as SVG (apps/common/svg_canvas.h): a crop
// with its predicted skeleton and each joint's heatmap; and, for one joint, where the token under
// it looks in every layer and head.
#include <optional>
#include <string>
#include <vector>

#include "apps/common/svg_canvas.h"
#include "data/pose/keypoints.h"
#include "nn/pose/keypoint_heatmaps.h"

namespace uwaga::apps {

// One crop to look at: its image (C, H, W) in [0, 1], a name for titles and messages, and its
// true joints when it comes from a labelled set.
struct PoseImage {
  std::string name;
  Tensor image;
  std::optional<PoseSample> truth;
};

// The crop with the predicted skeleton drawn over it (joints as dots, bones as lines, left limbs
// in one colour and right ones in another; the true joints, when known, as small crosses), then
// one panel per joint: its heatmap (K, h, w) over the crop, titled with the joint's name and score.
SvgCanvas prediction_svg(const PoseImage& image, const nn::DecodedKeypoints& joints,
                         const Tensor& heatmaps, const SkeletonSpec& skeleton);

// Where the token under a joint looks. `maps`: one attention tensor A (1, h, N, N) per layer;
// `query` the token (row r, column c of the grid_height × grid_width patches: r·grid_width + c);
// (x, y) the predicted joint in input pixels. One row per layer: the crop with the query patch
// outlined, then A[0, head, query, :] over the patch grid for each head, and their mean.
SvgCanvas attention_svg(const PoseImage& image, const std::vector<Tensor>& maps,
                        std::int64_t query, std::int64_t grid_height, std::int64_t grid_width,
                        const std::string& joint, float x, float y);

}  // namespace uwaga::apps
