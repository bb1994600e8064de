#include "data/pose/keypoint_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.h"

namespace uwaga {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();  // np.spacing(1)
constexpr int kThresholds = 10;                                   // .50:.05:.95
constexpr int kRecallPoints = 101;                                // 0:.01:1

// The OKS thresholds exactly as np.linspace(.5, .95, 10) computes them: start + i·step, the last
// one the end point itself (so .90 is 0.8999999999999999, as in cocoeval).
std::array<double, kThresholds> oks_thresholds() {
  std::array<double, kThresholds> t{};
  const double step = (0.95 - 0.5) / (kThresholds - 1);
  for (int i = 0; i < kThresholds; ++i) t[static_cast<std::size_t>(i)] = 0.5 + i * step;
  t[kThresholds - 1] = 0.95;
  return t;
}

struct AreaRange {
  double low, high;  // pixels², inclusive
};
constexpr AreaRange kAll{0.0, 1e10}, kMedium{32.0 * 32.0, 96.0 * 96.0}, kLarge{96.0 * 96.0, 1e10};

bool outside(double area, AreaRange r) { return area < r.low || area > r.high; }

// ---- PCK ---------------------------------------------------------------------------------------

// Correct and counted joints, per joint, after checking the shapes.
struct PckCounts {
  std::vector<std::int64_t> correct, visible;  // (K)
};

PckCounts pck_counts(const char* op, const Tensor& predicted, const Tensor& truth,
                     const Tensor& visible, const std::vector<double>& reference_lengths,
                     double alpha) {
  check_defined(predicted, op);
  check_defined(truth, op);
  check_defined(visible, op);
  if (predicted.dim() != 3 || (predicted.size(2) != 2 && predicted.size(2) != 3) ||
      truth.shape() != predicted.shape() ||
      visible.dim() != 2 || visible.size(0) != predicted.size(0) ||
      visible.size(1) != predicted.size(1) ||
      static_cast<std::int64_t>(reference_lengths.size()) != predicted.size(0))
    fail(op, ": predicted ", shape_str(predicted.shape()), ", truth ", shape_str(truth.shape()),
         ", visible ", shape_str(visible.shape()), " and ", reference_lengths.size(),
         " reference lengths do not fit: expected (N, K, 2 or 3) twice, (N, K) and N lengths");
  if (!(alpha > 0) || !std::isfinite(alpha)) fail(op, ": alpha must be positive, got ", alpha);
  const std::int64_t N = predicted.size(0), K = predicted.size(1), C = predicted.size(2);
  const std::vector<double> p = predicted.to_vector(), g = truth.to_vector();  // (N, K, C)
  const std::vector<double> v = visible.to_vector();                         // (N, K)
  PckCounts counts{std::vector<std::int64_t>(static_cast<std::size_t>(K), 0),
                   std::vector<std::int64_t>(static_cast<std::size_t>(K), 0)};
  for (std::int64_t n = 0; n < N; ++n) {
    const double L = reference_lengths[static_cast<std::size_t>(n)];
    if (!(L > 0) || !std::isfinite(L))
      fail(op, ": reference length ", n, " must be positive, got ", L);
    for (std::int64_t k = 0; k < K; ++k) {
      if (v[static_cast<std::size_t>(n * K + k)] == 0) continue;
      const auto at = static_cast<std::size_t>((n * K + k) * C);
      if (!std::isfinite(g[at]) || !std::isfinite(g[at + 1]))
        fail(op, ": visible joint ", k, " of instance ", n, " is at (", g[at], ", ", g[at + 1],
             ") in the truth; expected finite coordinates");
      const double d = std::hypot(p[at] - g[at], p[at + 1] - g[at + 1]);
      ++counts.visible[static_cast<std::size_t>(k)];
      counts.correct[static_cast<std::size_t>(k)] += d < alpha * L;  // a NaN prediction misses
    }
  }
  return counts;
}

// ---- OKS-AP ------------------------------------------------------------------------------------

// Whether any joint of t is labelled (COCO's num_keypoints > 0).
bool labelled(const PersonTruth& t) {
  return std::any_of(t.visible.begin(), t.visible.end(), [](std::uint8_t v) { return v > 0; });
}

// `who` names the person in messages: "detection 2 of image 0". Where visible is given, only
// labelled joints need finite coordinates.
void check_joints(const char* op, const std::string& who, std::size_t K,
                  const std::vector<float>& x, const std::vector<float>& y,
                  const std::vector<std::uint8_t>* visible) {
  if (x.size() != K || y.size() != K || (visible && visible->size() != K))
    fail(op, ": ", who, " has ", x.size(), " x, ", y.size(), " y",
         visible ? " and " + std::to_string(visible->size()) + " visibility" : std::string(),
         " values; expected one per sigma, ", K);
  for (std::size_t k = 0; k < K; ++k)
    if ((!visible || (*visible)[k]) && (!std::isfinite(x[k]) || !std::isfinite(y[k])))
      fail(op, ": ", who, " has joint ", k, " at (", x[k], ", ", y[k],
           "); expected finite coordinates");
}

void check_truth(const char* op, const PersonTruth& t, std::size_t K, const std::string& who) {
  check_joints(op, who, K, t.x, t.y, &t.visible);
  if (!(t.area >= 0) || !std::isfinite(t.area))
    fail(op, ": ", who, " has area ", t.area, "; expected a finite area ≥ 0");
  const auto finite = [](double b) { return std::isfinite(b); };
  if (!labelled(t) && !std::all_of(t.box.begin(), t.box.end(), finite))
    fail(op, ": ", who, " has no labelled joint and box (", t.box[0], ", ", t.box[1], ", ",
         t.box[2], ", ", t.box[3], "); its OKS needs a finite box");
}

void check_detection(const char* op, const PersonDetection& d, std::size_t K,
                     const std::string& who) {
  check_joints(op, who, K, d.x, d.y, nullptr);
  if (std::isnan(d.score)) fail(op, ": ", who, " has a NaN score");
}

void check_sigmas(const char* op, const std::vector<double>& sigmas) {
  if (sigmas.empty()) fail(op, ": no sigmas given; expected one per joint");
  for (std::size_t k = 0; k < sigmas.size(); ++k)
    if (!(sigmas[k] > 0) || !std::isfinite(sigmas[k]))
      fail(op, ": sigma ", k, " must be positive, got ", sigmas[k]);
}

// computeOks, without the checks (done once per call of oks_ap).
double oks_unchecked(const PersonDetection& d, const PersonTruth& g,
                     const std::vector<double>& sigmas) {
  const bool any_labelled = labelled(g);
  const auto [bx, by, bw, bh] = g.box;
  double sum = 0;
  std::int64_t n = 0;
  for (std::size_t k = 0; k < sigmas.size(); ++k) {
    double dx, dy;
    if (any_labelled) {
      if (g.visible[k] == 0) continue;
      dx = static_cast<double>(d.x[k]) - g.x[k];
      dy = static_cast<double>(d.y[k]) - g.y[k];
    } else {  // distance outside the box grown by its size on every side
      const double xd = d.x[k], yd = d.y[k];
      dx = std::max(0.0, (bx - bw) - xd) + std::max(0.0, xd - (bx + 2 * bw));
      dy = std::max(0.0, (by - bh) - yd) + std::max(0.0, yd - (by + 2 * bh));
    }
    const double var = (2 * sigmas[k]) * (2 * sigmas[k]);
    const double e = (dx * dx + dy * dy) / var / (g.area + kEps) / 2;
    sum += std::exp(-e);
    ++n;
  }
  return sum / static_cast<double>(n);
}

// Indices of a list ordered by descending score, stable (np.argsort(-scores, kind='mergesort')).
std::vector<std::size_t> by_descending_score(const std::vector<double>& scores) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  return order;
}

// One image's detections as cocoeval keeps them (best first, at most max_detections), their
// areas, and their OKS with every ground-truth person.
struct ImageOks {
  std::vector<const PersonDetection*> detections;  // (D) best first
  std::vector<double> detection_area;              // (D) of the keypoints' bounding box
  std::vector<std::vector<double>> oks;            // (D, G)
};

ImageOks image_oks(const ImageKeypoints& image, const std::vector<double>& sigmas,
                   std::int64_t max_detections) {
  std::vector<double> scores;
  for (const PersonDetection& d : image.detections) scores.push_back(d.score);
  ImageOks out;
  for (std::size_t i : by_descending_score(scores)) {
    if (static_cast<std::int64_t>(out.detections.size()) == max_detections) break;
    const PersonDetection& d = image.detections[i];
    out.detections.push_back(&d);
    const auto [x0, x1] = std::minmax_element(d.x.begin(), d.x.end());
    const auto [y0, y1] = std::minmax_element(d.y.begin(), d.y.end());
    out.detection_area.push_back((static_cast<double>(*x1) - *x0) *
                                 (static_cast<double>(*y1) - *y0));
    std::vector<double> row;
    for (const PersonTruth& g : image.truth) row.push_back(oks_unchecked(d, g, sigmas));
    out.oks.push_back(std::move(row));
  }
  return out;
}

// What evaluateImg decides for one detection at each threshold.
struct Decision {
  double score = 0;
  std::array<bool, kThresholds> matched{}, ignored{};
};

// evaluateImg for one image and area range: appends its detections' decisions, and returns how
// many of its persons count (are not ignored).
std::int64_t match_image(const ImageKeypoints& image, const ImageOks& io, AreaRange range,
                         std::vector<Decision>& decisions) {
  const std::size_t G = image.truth.size(), D = io.detections.size();
  std::vector<bool> ignore(G);
  for (std::size_t g = 0; g < G; ++g) {
    const PersonTruth& t = image.truth[g];
    ignore[g] = t.crowd || !labelled(t) || outside(t.area, range);
  }
  // Persons that count first, then the ignored ones, each group in its given order.
  std::vector<std::size_t> gt_order(G);
  std::iota(gt_order.begin(), gt_order.end(), std::size_t{0});
  std::stable_sort(gt_order.begin(), gt_order.end(),
                   [&](std::size_t a, std::size_t b) { return !ignore[a] && ignore[b]; });
  const std::array<double, kThresholds> thresholds = oks_thresholds();

  std::vector<Decision> mine(D);
  for (std::size_t d = 0; d < D; ++d) mine[d].score = io.detections[d]->score;
  for (int t = 0; t < kThresholds; ++t) {
    std::vector<bool> taken(G, false);
    for (std::size_t d = 0; d < D; ++d) {
      double best = std::min(thresholds[static_cast<std::size_t>(t)], 1 - 1e-10);
      std::ptrdiff_t m = -1;  // index into gt_order
      for (std::size_t r = 0; r < G; ++r) {
        const std::size_t g = gt_order[r];
        if (taken[g] && !image.truth[g].crowd) continue;
        // Matched to a person that counts: the ignored ones (all after it) cannot replace it.
        if (m >= 0 && !ignore[gt_order[static_cast<std::size_t>(m)]] && ignore[g]) break;
        if (io.oks[d][g] < best) continue;
        best = io.oks[d][g];  // ties go to the later person, as in cocoeval
        m = static_cast<std::ptrdiff_t>(r);
      }
      if (m < 0) continue;
      const std::size_t g = gt_order[static_cast<std::size_t>(m)];
      mine[d].matched[static_cast<std::size_t>(t)] = true;
      mine[d].ignored[static_cast<std::size_t>(t)] = ignore[g];
      taken[g] = true;
    }
  }
  for (std::size_t d = 0; d < D; ++d)
    for (int t = 0; t < kThresholds; ++t)
      if (!mine[d].matched[static_cast<std::size_t>(t)] && outside(io.detection_area[d], range))
        mine[d].ignored[static_cast<std::size_t>(t)] = true;
  decisions.insert(decisions.end(), mine.begin(), mine.end());
  return static_cast<std::int64_t>(std::count(ignore.begin(), ignore.end(), false));
}

// accumulate + summarize for one area range: AP and AR over thresholds, AP per threshold.
struct RangeSummary {
  double ap = -1, ar = -1;
  std::array<double, kThresholds> ap_at, ar_at;
};

RangeSummary summarize_range(const std::vector<ImageKeypoints>& images,
                             const std::vector<ImageOks>& oks_per_image, AreaRange range) {
  std::vector<Decision> decisions;
  std::int64_t num_truth = 0;
  for (std::size_t i = 0; i < images.size(); ++i)
    num_truth += match_image(images[i], oks_per_image[i], range, decisions);
  RangeSummary s;
  s.ap_at.fill(-1);
  s.ar_at.fill(-1);
  if (num_truth == 0) return s;  // COCO's −1: nothing to find

  std::vector<double> scores;
  for (const Decision& d : decisions) scores.push_back(d.score);
  const std::vector<std::size_t> order = by_descending_score(scores);
  double ap_sum = 0, ar_sum = 0;
  for (int t = 0; t < kThresholds; ++t) {
    const auto ti = static_cast<std::size_t>(t);
    std::vector<bool> true_positive;
    for (std::size_t i : order)
      if (!decisions[i].ignored[ti]) true_positive.push_back(decisions[i].matched[ti]);
    const std::vector<double> q = interpolated_precision(true_positive, num_truth);
    const double q_sum = std::accumulate(q.begin(), q.end(), 0.0);
    const auto found = std::count(true_positive.begin(), true_positive.end(), true);
    s.ap_at[ti] = q_sum / kRecallPoints;
    s.ar_at[ti] = static_cast<double>(found) / static_cast<double>(num_truth);  // final recall
    ap_sum += q_sum;
    ar_sum += s.ar_at[ti];
  }
  s.ap = ap_sum / (kThresholds * kRecallPoints);
  s.ar = ar_sum / kThresholds;
  return s;
}

}  // namespace

double pck(const Tensor& predicted, const Tensor& truth, const Tensor& visible,
           const std::vector<double>& reference_lengths, double alpha) {
  const PckCounts c = pck_counts("pck", predicted, truth, visible, reference_lengths, alpha);
  const std::int64_t correct = std::accumulate(c.correct.begin(), c.correct.end(), std::int64_t{0});
  const std::int64_t total = std::accumulate(c.visible.begin(), c.visible.end(), std::int64_t{0});
  if (total == 0) fail("pck: no joint is visible, so there is nothing to score");
  return static_cast<double>(correct) / static_cast<double>(total);
}

std::vector<double> pck_per_joint(const Tensor& predicted, const Tensor& truth,
                                  const Tensor& visible,
                                  const std::vector<double>& reference_lengths, double alpha) {
  const PckCounts c =
      pck_counts("pck_per_joint", predicted, truth, visible, reference_lengths, alpha);
  std::vector<double> out;
  for (std::size_t k = 0; k < c.visible.size(); ++k)
    out.push_back(c.visible[k] == 0 ? -1.0
                                    : static_cast<double>(c.correct[k]) /
                                          static_cast<double>(c.visible[k]));
  return out;
}

std::vector<double> coco_keypoint_sigmas() {
  std::vector<double> s = {.26, .25, .25, .35, .35, .79, .79, .72, .72,
                           .62, .62, 1.07, 1.07, .87, .87, .89, .89};
  for (double& v : s) v /= 10.0;  // as cocoeval: np.array([...]) / 10.0
  return s;
}

std::vector<double> uniform_sigmas(std::int64_t num_joints, double sigma) {
  check_size_in_range("uniform_sigmas", "num_joints", num_joints, 1000);
  check_sigmas("uniform_sigmas", {sigma});
  return std::vector<double>(static_cast<std::size_t>(num_joints), sigma);
}

double oks(const PersonDetection& detection, const PersonTruth& truth,
           const std::vector<double>& sigmas) {
  check_sigmas("oks", sigmas);
  check_detection("oks", detection, sigmas.size(), "the detection");
  check_truth("oks", truth, sigmas.size(), "the person");
  return oks_unchecked(detection, truth, sigmas);
}

double top_down_score(const std::vector<float>& joint_scores, double threshold) {
  double sum = 0;
  std::int64_t n = 0;
  for (float s : joint_scores)
    if (s > threshold) {
      sum += s;
      ++n;
    }
  return n == 0 ? 0.0 : sum / static_cast<double>(n);
}

std::vector<double> interpolated_precision(const std::vector<bool>& true_positive,
                                           std::int64_t num_truth) {
  if (num_truth < 1)
    fail("interpolated_precision: num_truth must be positive, got ", num_truth);
  const std::size_t D = true_positive.size();
  std::vector<double> recall(D), precision(D);
  double tp = 0, fp = 0;
  for (std::size_t d = 0; d < D; ++d) {
    (true_positive[d] ? tp : fp) += 1;
    recall[d] = tp / static_cast<double>(num_truth);
    precision[d] = tp / (fp + tp + kEps);
  }
  if (tp > static_cast<double>(num_truth))
    fail("interpolated_precision: ", static_cast<std::int64_t>(tp), " true positives for ",
         num_truth, " persons; a person is found at most once");
  // The envelope: precision at recall r becomes the best precision at any recall ≥ r.
  for (std::size_t d = D; d-- > 1;) precision[d - 1] = std::max(precision[d - 1], precision[d]);
  std::vector<double> q(kRecallPoints, 0.0);
  for (int r = 0; r < kRecallPoints; ++r) {
    const double level = r == kRecallPoints - 1 ? 1.0 : r * 0.01;  // np.linspace(0, 1, 101)
    const auto first = std::lower_bound(recall.begin(), recall.end(), level);  // searchsorted
    if (first == recall.end()) break;  // recall never reaches this level: 0 from here on
    q[static_cast<std::size_t>(r)] = precision[static_cast<std::size_t>(first - recall.begin())];
  }
  return q;
}

OksApResult oks_ap(const std::vector<ImageKeypoints>& images, const std::vector<double>& sigmas,
                   std::int64_t max_detections) {
  check_sigmas("oks_ap", sigmas);
  check_size_in_range("oks_ap", "max_detections", max_detections, 1000000);
  for (std::size_t i = 0; i < images.size(); ++i) {
    const std::string of_image = " of image " + std::to_string(i);
    for (std::size_t g = 0; g < images[i].truth.size(); ++g)
      check_truth("oks_ap", images[i].truth[g], sigmas.size(),
                  "person " + std::to_string(g) + of_image);
    for (std::size_t d = 0; d < images[i].detections.size(); ++d)
      check_detection("oks_ap", images[i].detections[d], sigmas.size(),
                      "detection " + std::to_string(d) + of_image);
  }
  std::vector<ImageOks> per_image;
  for (const ImageKeypoints& image : images)
    per_image.push_back(image_oks(image, sigmas, max_detections));

  const RangeSummary all = summarize_range(images, per_image, kAll);
  const RangeSummary medium = summarize_range(images, per_image, kMedium);
  const RangeSummary large = summarize_range(images, per_image, kLarge);
  OksApResult r;
  r.ap = all.ap;
  r.ap50 = all.ap_at[0];
  r.ap75 = all.ap_at[5];
  r.ap_medium = medium.ap;
  r.ap_large = large.ap;
  r.ar = all.ar;
  r.ar50 = all.ar_at[0];
  r.ar75 = all.ar_at[5];
  r.ar_medium = medium.ar;
  r.ar_large = large.ar;
  r.ap_per_threshold.assign(all.ap_at.begin(), all.ap_at.end());
  return r;
}

std::vector<ImageKeypoints> one_person_per_image(const Tensor& predicted, const Tensor& truth,
                                                 const Tensor& boxes) {
  check_defined(predicted, "one_person_per_image");
  check_defined(truth, "one_person_per_image");
  check_defined(boxes, "one_person_per_image");
  if (predicted.dim() != 3 || predicted.size(2) != 3 || truth.shape() != predicted.shape() ||
      boxes.dim() != 2 || boxes.size(0) != predicted.size(0) || boxes.size(1) != 4)
    fail("one_person_per_image: predicted ", shape_str(predicted.shape()), ", truth ",
         shape_str(truth.shape()), " and boxes ", shape_str(boxes.shape()),
         " do not fit: expected (N, K, 3) twice and (N, 4)");
  const std::int64_t N = predicted.size(0), K = predicted.size(1);
  const std::vector<double> p = predicted.to_vector(), g = truth.to_vector();  // (N, K, 3)
  const std::vector<double> b = boxes.to_vector();                            // (N, 4)
  std::vector<ImageKeypoints> images(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) {
    PersonDetection det;
    PersonTruth person;
    std::vector<float> joint_scores;
    for (std::int64_t k = 0; k < K; ++k) {
      const auto at = static_cast<std::size_t>((n * K + k) * 3);
      det.x.push_back(static_cast<float>(p[at]));
      det.y.push_back(static_cast<float>(p[at + 1]));
      joint_scores.push_back(static_cast<float>(p[at + 2]));
      person.x.push_back(static_cast<float>(g[at]));
      person.y.push_back(static_cast<float>(g[at + 1]));
      person.visible.push_back(g[at + 2] != 0 ? 2 : 0);
    }
    det.score = top_down_score(joint_scores);
    const auto at = static_cast<std::size_t>(n * 4);
    person.box = {b[at], b[at + 1], b[at + 2], b[at + 3]};
    person.area = b[at + 2] * b[at + 3];
    images[static_cast<std::size_t>(n)] = {{person}, {det}};
  }
  return images;
}

}  // namespace uwaga
