#pragma once
// How good predicted keypoints are: PCK, and COCO's OKS-based average precision.
//
// Coordinates are input pixels, as in nn/pose/keypoint_heatmaps.h.
//
// PCK@α (percentage of correct keypoints): a visible joint is correct when its prediction lies
// within α·L of the truth, L a length that scales with the figure (its torso, or its box size
// max(w, h); mmpose normalises each axis by the box side instead):
//   PCK = #{visible (n, k) : ‖p_nk − g_nk‖ < α L_n} / #{visible (n, k)}
// ("<" as mmpose's keypoint_pck_accuracy). pck pools every joint; pck_per_joint gives the fraction
// per joint (mmpose's summary averages those instead).
//
// OKS (object keypoint similarity), as cocoeval.py's computeOks: for a detection d and a
// ground-truth person g of area s², over the joints k labelled in g (v_k > 0),
//   e_k = ((x_dk − x_gk)² + (y_dk − y_gk)²) / (2σ_k)² / (s² + ε) / 2      ε = 2⁻⁵², np.spacing(1)
//   OKS = mean over labelled k of exp(−e_k)
// with σ_k per joint (coco_keypoint_sigmas(), or a uniform σ for a synthetic set). A person with
// no labelled joint is measured against its box (x0, y0, w, h) grown to [x0 − w, x0 + 2w] ×
// [y0 − h, y0 + 2h]: dx_k is how far x_dk lies outside that span (0 inside), likewise dy_k, and the
// mean runs over all K joints.
//
// OKS-AP, as cocoeval.py's evaluate / accumulate / summarize for iouType 'keypoints':
//  * per image, detections in descending score order (stable), the first max_detections (20) kept;
//  * ground truth is ignored when it has no labelled joint, is a crowd, or its area lies outside
//    the range. At each threshold t of .50:.05:.95, each detection in turn takes the ground truth
//    not yet taken (a crowd may be taken again) with the highest OKS ≥ t, preferring any
//    non-ignored person to an ignored one — greedy, highest score first. A detection matched to
//    ignored ground truth is ignored; so is an unmatched one whose area (that of its keypoints'
//    bounding box) lies outside the range;
//  * over all images, the detections in descending score order (stable, images in order) trace a
//    precision/recall curve, recall = TP / #persons not ignored; precision is made non-increasing
//    (each point takes the best precision at any higher recall) and read at recall 0, .01, …, 1
//    (101 points; 0 past the highest recall reached);
//  * AP = the mean over the 10 thresholds and 101 points; AP50 and AP75 at one threshold; AR = the
//    mean over thresholds of the final recall. Area ranges (pixels², on the ground truth's area):
//    all [0, 1e10], medium [32², 96²], large [96², 1e10]. A range holding no person that counts
//    gets −1, as COCO prints.
// Left out: the OKS-NMS mmpose runs on its detections before evaluating.
//
// Top-down evaluation (ViTPose with ground-truth boxes): one detection per person, its score the
// mean of its decoded joint maxima above 0.2 (top_down_score; mmpose's rescoring with box score 1).
//
// The synthetic set: one figure per image, its area that of its box, w·h (there is no
// segmentation), a uniform σ (uniform_sigmas); report the 'all' range only — COCO's cuts at 32² and
// 96² pixels are made for photographs, and a small synthetic image may hold no figure above 32²
// (then ap_medium = ap_large = −1).
#include <array>
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace uwaga {

// predicted and truth (N, K, 2) — or (N, K, 3), the third column unread; visible (N, K), nonzero
// where the joint counts; reference_lengths (N), each > 0.
double pck(const Tensor& predicted, const Tensor& truth, const Tensor& visible,
           const std::vector<double>& reference_lengths, double alpha = 0.1);
// (K): the fraction for each joint, −1 for a joint visible in no instance.
std::vector<double> pck_per_joint(const Tensor& predicted, const Tensor& truth,
                                  const Tensor& visible,
                                  const std::vector<double>& reference_lengths,
                                  double alpha = 0.1);

struct PersonTruth {
  std::vector<float> x, y;            // (K) input pixels
  std::vector<std::uint8_t> visible;  // (K) COCO's v: 0 unlabelled, 1 labelled but hidden, 2 seen
  double area = 0;                    // s²: COCO's annotated area; the synthetic set's box w·h
  std::array<double, 4> box{};        // x, y, w, h: read only when no joint is labelled
  bool crowd = false;                 // COCO's iscrowd
};

struct PersonDetection {
  std::vector<float> x, y;  // (K) input pixels
  double score = 0;         // ranks the detections
};

struct ImageKeypoints {
  std::vector<PersonTruth> truth;
  std::vector<PersonDetection> detections;
};

// COCO's 17 per-joint σ (nose, eyes, ears, shoulders, elbows, wrists, hips, knees, ankles).
std::vector<double> coco_keypoint_sigmas();
// K copies of sigma.
std::vector<double> uniform_sigmas(std::int64_t num_joints, double sigma);

double oks(const PersonDetection& detection, const PersonTruth& truth,
           const std::vector<double>& sigmas);

// The mean of the joint scores above threshold (0 when none is): a top-down detection's score.
double top_down_score(const std::vector<float>& joint_scores, double threshold = 0.2);

struct OksApResult {
  double ap = -1, ap50 = -1, ap75 = -1, ap_medium = -1, ap_large = -1;
  double ar = -1, ar50 = -1, ar75 = -1, ar_medium = -1, ar_large = -1;
  std::vector<double> ap_per_threshold;  // (10) area 'all', at .50, .55, …, .95 (−1 as above)
};

OksApResult oks_ap(const std::vector<ImageKeypoints>& images, const std::vector<double>& sigmas,
                   std::int64_t max_detections = 20);

// The 101-point precision of one curve: true_positive in descending score order (ignored
// detections left out; they change no point that is read), num_truth the persons to find (> 0).
std::vector<double> interpolated_precision(const std::vector<bool>& true_positive,
                                           std::int64_t num_truth);

// One figure per image (the synthetic set, or top-down crops): predicted (N, K, 3) holding x, y,
// score (decode_heatmaps_batch's output), truth (N, K, 3) holding x, y, visible, boxes (N, 4)
// holding x, y, w, h. Each detection scores top_down_score of its joints; each person's area is
// w·h.
std::vector<ImageKeypoints> one_person_per_image(const Tensor& predicted, const Tensor& truth,
                                                 const Tensor& boxes);

}  // namespace uwaga
