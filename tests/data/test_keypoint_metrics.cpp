// PCK, OKS and COCO's OKS-AP on fixtures worked by hand (pycocotools is not packaged for Debian,
// so the expected numbers are derived step by step in the comments, following cocoeval.py).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/uwaga.h"
#include "data/pose/keypoint_metrics.h"

using namespace uwaga;
using Catch::Contains;

namespace {

PersonTruth person(std::vector<float> x, std::vector<float> y, std::vector<std::uint8_t> v,
                   double area, std::array<double, 4> box = {}) {
  PersonTruth p;
  p.x = std::move(x);
  p.y = std::move(y);
  p.visible = std::move(v);
  p.area = area;
  p.box = box;
  return p;
}

PersonDetection detection(std::vector<float> x, std::vector<float> y, double score) {
  return {std::move(x), std::move(y), score};
}

// A detection exactly on a person's joints.
PersonDetection on(const PersonTruth& p, double score) { return detection(p.x, p.y, score); }

// A detection far from everything in these fixtures.
PersonDetection far_away(double score) {
  return detection({5000, 5010, 5020}, {5000, 5030, 5030}, score);
}

// The fixture's 3-joint persons (head, left foot, right foot): a large one, area 100², and a
// medium one, area 50², both with every joint labelled.
PersonTruth large_person() {
  return person({150, 120, 180}, {110, 190, 190}, {2, 2, 2}, 10000, {100, 100, 100, 100});
}
PersonTruth medium_person() {
  return person({425, 410, 440}, {405, 445, 445}, {2, 2, 2}, 2500, {400, 400, 50, 50});
}

// σ = 0.05 for each of the 3 joints, so var = (2σ)² = 0.01 and e = d² / 0.01 / area / 2:
// e = d² / 200 for area 10000, e = d² / 50 for area 2500.
const std::vector<double> kSigmas = {0.05, 0.05, 0.05};

}  // namespace

TEST_CASE("PCK counts visible joints within alpha times the reference length", "[data][pck]") {
  // Two instances, four joints; reference lengths 100 and 50, so at α = 0.1 a joint is correct
  // when its error is below 10 (instance 0) or 5 (instance 1). Errors (dx, dy) → distance:
  //   instance 0: (3, 4) → 5 ✓,  (6, 8) → 10 ✗ (not below 10),  (0, 0) invisible,  3 invisible
  //   instance 1: (3, 4) → 5 ✗ (not below 5),  (1, 1) → 1.41 ✓,  (30, 40) → 50 ✗,  3 invisible
  // 2 correct of 5 visible: PCK = 0.4. Per joint: 1/2, 1/2, 0/1, and −1 (never visible).
  // At α = 0.2 (limits 20 and 10) only the error of 50 fails: 4/5.
  Tensor truth = Tensor::from_vector({10, 10, 20, 20, 30, 30, 40, 40,
                                      50, 50, 60, 60, 70, 70, 80, 80}, {2, 4, 2});
  Tensor predicted = Tensor::from_vector({13, 14, 26, 28, 30, 30, 99, 99,
                                          53, 54, 61, 61, 100, 110, 0, 0}, {2, 4, 2});
  Tensor visible = Tensor::from_vector({1, 1, 0, 0, 2, 1, 1, 0}, {2, 4});
  const std::vector<double> lengths = {100, 50};
  REQUIRE(pck(predicted, truth, visible, lengths) == Approx(0.4));
  const std::vector<double> per_joint = pck_per_joint(predicted, truth, visible, lengths);
  REQUIRE(per_joint == std::vector<double>{0.5, 0.5, 0.0, -1.0});
  REQUIRE(pck(predicted, truth, visible, lengths, 0.2) == Approx(0.8));
  // (N, K, 3) inputs (decoded x, y, score and truth x, y, visible) read only x and y.
  Tensor with_scores = cat({predicted, Tensor::full({2, 4, 1}, 0.7)}, 2);
  REQUIRE(pck(with_scores, cat({truth, Tensor::ones({2, 4, 1})}, 2), visible, lengths) ==
          Approx(0.4));
  // Perfect predictions: 1.
  REQUIRE(pck(truth, truth, visible, lengths) == 1.0);

  REQUIRE_THROWS_WITH(pck(predicted, truth, Tensor::zeros({2, 4}), lengths),
                      Contains("pck: no joint is visible, so there is nothing to score"));
  REQUIRE_THROWS_WITH(pck(predicted, truth, visible, {100, 0}),
                      Contains("pck: reference length 1 must be positive, got 0"));
  REQUIRE_THROWS_WITH(pck(predicted, truth, visible, {100}),
                      Contains("pck: predicted (2, 4, 2), truth (2, 4, 2), visible (2, 4) and 1 "
                               "reference lengths do not fit"));
  REQUIRE_THROWS_WITH(pck_per_joint(predicted, truth, visible, lengths, 0),
                      Contains("pck_per_joint: alpha must be positive, got 0"));
  Tensor bad_truth = truth.clone();
  bad_truth.set({1, 2, 0}, NAN);
  REQUIRE_THROWS_WITH(pck(predicted, bad_truth, visible, lengths),
                      Contains("pck: visible joint 2 of instance 1 is at (nan, 70) in the truth"));
  bad_truth.set({0, 2, 0}, NAN);  // invisible there: unread
  visible.set({1, 2}, 0);
  REQUIRE(pck(predicted, bad_truth, visible, lengths) == Approx(0.5));
}

TEST_CASE("OKS as cocoeval's computeOks, worked by hand", "[data][oks]") {
  const PersonTruth large = large_person(), medium = medium_person();
  // Joint 2 of the large person 5 px off: e = (0, 0, 25/200 = 0.125),
  // OKS = (1 + 1 + e^−0.125) / 3 = (2 + 0.8824969) / 3 = 0.9608323.
  PersonDetection d = detection({150, 120, 185}, {110, 190, 190}, 1);
  REQUIRE(oks(d, large, kSigmas) == Approx(0.9608323008615317).epsilon(1e-12));
  // The same 5 px on joints 1 and 2 of the medium person: e = (0, 25/50, 25/50) = (0, .5, .5),
  // OKS = (1 + 2 e^−0.5) / 3 = (1 + 2 · 0.6065307) / 3 = 0.7376871.
  d = detection({425, 415, 445}, {405, 445, 445}, 1);
  REQUIRE(oks(d, medium, kSigmas) == Approx(0.737687106475089).epsilon(1e-12));
  // Unlabelled joints do not count: joint 2 unlabelled and predicted 100 px away, joint 1 off by
  // 2.5 px: e = (0, 6.25/50 = 0.125), OKS = (1 + e^−0.125) / 2 = 0.9412485.
  PersonTruth partial = medium;
  partial.visible[2] = 0;
  d = detection({425, 412.5f, 540}, {405, 445, 445}, 1);
  REQUIRE(oks(d, partial, kSigmas) == Approx(0.9412484512922977).epsilon(1e-12));
  // A person with no labelled joint: distances to its box (300, 300, 20, 40) grown to
  // [300 − 20, 300 + 40] × [300 − 40, 300 + 80] = [280, 340] × [260, 380], over all joints.
  // Joints 0 and 1 inside: e = 0. Joint 2 at (346, 252): dx = 346 − 340 = 6, dy = 260 − 252 = 8,
  // d² = 100, area 800: e = 100 / 0.01 / 800 / 2 = 6.25, OKS = (1 + 1 + e^−6.25) / 3 = 0.6673102.
  const PersonTruth unlabelled = person({0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 800, {300, 300, 20, 40});
  d = detection({310, 281, 346}, {300, 379, 252}, 1);
  REQUIRE(oks(d, unlabelled, kSigmas) == Approx(0.6673101513787425).epsilon(1e-12));
  REQUIRE(oks(on(large, 1), large, kSigmas) == 1.0);
  // With COCO's σ, a joint 2σ√area away on each of the 17 joints (e = 1/2) gives e^−½.
  const std::vector<double> coco = coco_keypoint_sigmas();
  REQUIRE(coco.size() == 17);
  REQUIRE(coco[0] == Approx(0.026).epsilon(1e-15));
  REQUIRE(coco[11] == Approx(0.107).epsilon(1e-15));  // hips
  PersonTruth p17 = person(std::vector<float>(17, 0), std::vector<float>(17, 0),
                           std::vector<std::uint8_t>(17, 2), 400);  // s = 20
  PersonDetection d17 = on(p17, 1);
  for (std::size_t k = 0; k < 17; ++k) d17.x[k] = static_cast<float>(2 * coco[k] * 20);
  REQUIRE(oks(d17, p17, coco) == Approx(std::exp(-0.5)).epsilon(1e-6));

  REQUIRE_THROWS_WITH(oks(detection({1, 2}, {1, 2}, 1), large, kSigmas),
                      Contains("oks: the detection has 2 x, 2 y values; expected one per sigma, "
                               "3"));
  REQUIRE_THROWS_WITH(oks(on(large, 1), large, {0.05, 0.0, 0.05}),
                      Contains("oks: sigma 1 must be positive, got 0"));
  PersonTruth bad = large;
  bad.area = -1;
  REQUIRE_THROWS_WITH(oks(on(large, 1), bad, kSigmas),
                      Contains("oks: the person has area -1; expected a finite area ≥ 0"));
  PersonTruth no_box = unlabelled;
  no_box.box[2] = NAN;
  REQUIRE_THROWS_WITH(oks(on(large, 1), no_box, kSigmas),
                      Contains("oks: the person has no labelled joint and box (300, 300, nan, "
                               "40); its OKS needs a finite box"));
}

// The fixture (σ = 0.05; OKS values from the test above):
//   image A: P1 large, P2 medium.
//     D1 score .90: P1 with joint 2 off by 5 px → OKS(D1, P1) = 0.9608; keypoint box 65×80 = 5200
//     D2 score .80: P2 with joints 1, 2 off by 5 → OKS(D2, P2) = 0.7377; keypoint box 30×40 = 1200
//   image B: P3 large; P4 with no labelled joint, box (300, 300, 20, 40), area 800 (ignored).
//     D3 score .70: P3 with each joint off by 10 → e = 100/200 = .5, OKS = e^−.5 = 0.6065; box 4800
//     D4 score .95: inside P4's grown box → OKS(D4, P4) = 1; keypoint box 10 × 20 = 200
//     D5 score .75: far from everything → OKS 0 with both; keypoint box 20 × 20 = 400
//   image C: P5 medium with joint 2 unlabelled.
//     D6 score .60: joint 1 off by 2.5, joint 2 far → OKS = 0.9412; keypoint box 87.5 × 95 = 8312.5
// Every other pair is hundreds of pixels apart: OKS = 0 (e > 700).
// The thresholds t0 … t9 = .50 .55 .60 .65 .70 .75 .80 .85 .90 .95; each OKS clears these many:
//   0.9608 all 10,  0.9412 t0–t8,  0.7377 t0–t4,  0.6065 t0–t2,  1 all.
std::vector<ImageKeypoints> hand_fixture() {
  const PersonTruth P1 = large_person(), P2 = medium_person(), P3 = large_person();
  const PersonTruth P4 = person({0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 800, {300, 300, 20, 40});
  PersonTruth P5 = medium_person();
  P5.visible[2] = 0;
  ImageKeypoints A{{P1, P2},
                   {detection({150, 120, 185}, {110, 190, 190}, 0.90),
                    detection({425, 415, 445}, {405, 445, 445}, 0.80)}};
  ImageKeypoints B{{P3, P4},
                   {detection({160, 130, 190}, {110, 190, 190}, 0.70),
                    detection({310, 305, 315}, {310, 330, 330}, 0.95),
                    detection({700, 690, 710}, {700, 720, 720}, 0.75)}};
  ImageKeypoints C{{P5}, {detection({425, 412.5f, 500}, {405, 445, 500}, 0.60)}};
  return {A, B, C};
}

TEST_CASE("OKS-AP on a fixture worked by hand", "[data][oks_ap]") {
  const OksApResult r = oks_ap(hand_fixture(), kSigmas);
  // Area 'all': P4 is ignored (no labelled joint), so 4 persons count. In score order:
  //   D4 (.95) matches P4 — an ignored person — and is ignored at every threshold.
  //   D1 (.90) TP everywhere.  D2 (.80) TP at t0–t4, else FP.  D5 (.75) FP: P3 is too far and
  //   P4 already taken.  D3 (.70) TP at t0–t2, else FP.  D6 (.60) TP at t0–t8, FP at t9.
  // Precision/recall (recall = TP/4; precision made non-increasing from the right, "env"):
  //   t0–t2  T T F T T  recall .25 .5 .5 .75 1   precision 1 1 .67 .75 .8   env 1 1 .8 .8 .8
  //          101-point: recall ≤ .5 → 1 (51 points), > .5 → .8 (50): (51 + 40)/101 = 91/101
  //   t3–t4  T T F F T  recall .25 .5 .5 .5 .75  precision 1 1 .67 .5 .6    env 1 1 .67 .6 .6
  //          ≤ .5 → 1 (51), (.5, .75] → .6 (25), > .75 → 0: (51 + 15)/101 = 66/101
  //   t5–t8  T F F F T  recall .25 .25 .25 .25 .5  precision 1 .5 .33 .25 .4  env 1 .5 .4 .4 .4
  //          ≤ .25 → 1 (26), (.25, .5] → .4 (25): (26 + 10)/101 = 36/101
  //   t9     T F F F F  recall .25 …           ≤ .25 → 1 (26): 26/101
  // AP = (3·91 + 2·66 + 4·36 + 26) / (10·101) = 575/1010 = 0.569307
  // AR = mean final recall = (3·1 + 2·.75 + 4·.5 + .25) / 10 = 0.675
  const std::vector<double> per_t = {91, 91, 91, 66, 66, 36, 36, 36, 36, 26};
  REQUIRE(r.ap_per_threshold.size() == 10);
  for (std::size_t t = 0; t < 10; ++t)
    REQUIRE(r.ap_per_threshold[t] == Approx(per_t[t] / 101).epsilon(1e-12));
  REQUIRE(r.ap == Approx(575.0 / 1010).epsilon(1e-12));
  REQUIRE(r.ap50 == Approx(91.0 / 101).epsilon(1e-12));
  REQUIRE(r.ap75 == Approx(36.0 / 101).epsilon(1e-12));
  REQUIRE(r.ar == Approx(0.675).epsilon(1e-12));
  REQUIRE(r.ar50 == Approx(1.0).epsilon(1e-12));
  REQUIRE(r.ar75 == Approx(0.5).epsilon(1e-12));

  // Area 'medium' [32², 96²]: P2 and P5 count; P1 and P3 (area 10000) are ignored, and so is P4.
  //   A: D1 finds no medium person (OKS 0 with P2) and takes P1 → ignored. D2 takes P2 at t0–t4
  //      (TP); above, P1 is taken: unmatched, box 1200 inside the range → FP.
  //   B: D4 takes P4 → ignored. D5 unmatched, box 400 outside the range → ignored. D3 takes P3
  //      (ignored) at t0–t2 → ignored; above, unmatched with box 4800 → FP.
  //   C: D6 TP at t0–t8; at t9 unmatched with box 8312.5 → FP.
  // Score order without the ignored: D2, [D3,] D6; recall = TP/2.
  //   t0–t2  T T      recall .5 1  precision 1 1           → 101/101
  //   t3–t4  T F T    recall .5 .5 1  precision 1 .5 .67   env 1 .67 .67
  //          ≤ .5 → 1 (51), > .5 → 2/3 (50): (51 + 100/3)/101
  //   t5–t8  F F T    recall 0 0 .5  precision 0 0 .33     env .33 .33 .33 — the envelope lifts
  //          recall 0 from precision 0 to 1/3: ≤ .5 → 1/3 (51): 17/101
  //   t9     F F F    → 0
  // AP = (3·101 + 2·(51 + 100/3) + 4·17 + 0) / 1010 = (1619/3) / 1010 = 0.534323
  // AR = (3·1 + 2·1 + 4·.5 + 0) / 10 = 0.7
  REQUIRE(r.ap_medium == Approx(1619.0 / 3 / 1010).epsilon(1e-12));
  REQUIRE(r.ar_medium == Approx(0.7).epsilon(1e-12));

  // Area 'large' [96², 1e10]: P1 and P3 count.
  //   A: D1 TP everywhere. D2 takes P2 (ignored) at t0–t4 → ignored; above, unmatched with
  //      box 1200 outside the range → ignored.
  //   B: D4 → P4, ignored. D5 ignored (box 400). D3 TP at t0–t2; above, unmatched with box 4800
  //      outside → ignored.  C: D6 takes P5 (ignored) at t0–t8; at t9 box 8312.5 outside → ignored.
  //   t0–t2  T T  → 101/101;    t3–t9  T  recall .5 → ≤ .5 → 1 (51): 51/101
  // AP = (3·101 + 7·51) / 1010 = 660/1010 = 0.653465,  AR = (3·1 + 7·.5) / 10 = 0.65
  REQUIRE(r.ap_large == Approx(660.0 / 1010).epsilon(1e-12));
  REQUIRE(r.ar_large == Approx(0.65).epsilon(1e-12));
}

TEST_CASE("OKS-AP edge cases: perfect, far, nothing, ties, max_detections, crowds",
          "[data][oks_ap]") {
  // Perfect predictions on several images and persons, any scores: AP = AR = 1 (to the ε in
  // cocoeval's precision tp / (tp + fp + ε)).
  std::vector<ImageKeypoints> perfect = {
      {{large_person(), medium_person()}, {on(medium_person(), 0.3), on(large_person(), 0.9)}},
      {{medium_person()}, {on(medium_person(), 0.5)}}};
  OksApResult r = oks_ap(perfect, kSigmas);
  REQUIRE(r.ap == Approx(1.0).epsilon(1e-12));
  REQUIRE(r.ar == Approx(1.0).epsilon(1e-12));
  REQUIRE(r.ap_medium == Approx(1.0).epsilon(1e-12));
  REQUIRE(r.ap_large == Approx(1.0).epsilon(1e-12));

  // Every detection far off: AP = AR = 0. No detections at all: 0 too.
  std::vector<ImageKeypoints> far = {{{large_person()}, {far_away(0.9)}},
                                     {{medium_person()}, {far_away(0.8), far_away(0.1)}}};
  r = oks_ap(far, kSigmas);
  REQUIRE(r.ap == 0.0);
  REQUIRE(r.ar == 0.0);
  r = oks_ap({{{large_person()}, {}}}, kSigmas);
  REQUIRE(r.ap == 0.0);
  // No person to find: −1, as COCO prints. Only large persons: the medium range is −1.
  r = oks_ap({{{}, {far_away(0.5)}}}, kSigmas);
  REQUIRE(r.ap == -1.0);
  REQUIRE(r.ar == -1.0);
  REQUIRE(oks_ap({{{large_person()}, {on(large_person(), 1)}}}, kSigmas).ap_medium == -1.0);

  // Equal scores keep image order (cocoeval's stable mergesort). One person per image, a miss
  // in one image and a hit in the other, 2 persons:
  //   miss first: F T  recall 0 .5  precision 0 .5  env .5 .5  → ≤ .5 → .5 (51): 25.5/101
  //   hit first:  T F  recall .5 .5  precision 1 .5  env 1 .5 → ≤ .5 → 1 (51): 51/101
  const ImageKeypoints miss{{large_person()}, {far_away(0.5)}};
  const ImageKeypoints hit{{large_person()}, {on(large_person(), 0.5)}};
  REQUIRE(oks_ap({miss, hit}, kSigmas).ap == Approx(25.5 / 101).epsilon(1e-12));
  REQUIRE(oks_ap({hit, miss}, kSigmas).ap == Approx(51.0 / 101).epsilon(1e-12));

  // max_detections keeps each image's best-scored: two misses outscore the hit. With 3 kept:
  //   F F T  recall 0 0 1  precision 0 0 1/3  env 1/3 everywhere → AP 1/3; with 2 kept: 0.
  const ImageKeypoints crowded{
      {large_person()}, {far_away(0.9), on(large_person(), 0.1), far_away(0.8)}};
  REQUIRE(oks_ap({crowded}, kSigmas, 3).ap == Approx(1.0 / 3).epsilon(1e-12));
  REQUIRE(oks_ap({crowded}, kSigmas, 2).ap == 0.0);

  // A crowd region absorbs any number of detections (all ignored); a plain unlabelled person
  // only one, so a second detection inside it is a false positive:
  //   crowd: hit, then two ignored → T → AP 1.
  //   not:   D .9 ignored, D .8 FP, hit .7 TP: F T  recall 0 1  precision 0 .5 → env .5: AP .5
  PersonTruth region = person({0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 800, {300, 300, 20, 40});
  const PersonDetection inside_a = detection({310, 305, 315}, {310, 330, 330}, 0.9);
  const PersonDetection inside_b = detection({312, 306, 318}, {312, 331, 335}, 0.8);
  region.crowd = true;
  r = oks_ap({{{large_person(), region}, {inside_a, inside_b, on(large_person(), 0.7)}}},
             kSigmas);
  REQUIRE(r.ap == Approx(1.0).epsilon(1e-12));
  region.crowd = false;
  r = oks_ap({{{large_person(), region}, {inside_a, inside_b, on(large_person(), 0.7)}}},
             kSigmas);
  REQUIRE(r.ap == Approx(0.5).epsilon(1e-12));

  // A person that counts is preferred to an ignored one, whatever their order and OKS: D1 of the
  // hand fixture has OKS 0.9608 with the large person and 1 with an unlabelled region listed
  // first (its grown box [0, 300]² holds every joint). It takes the person: TP, AP 1.
  const PersonTruth around = person({0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 10000, {100, 100, 100, 100});
  const PersonDetection d1 = detection({150, 120, 185}, {110, 190, 190}, 0.9);
  REQUIRE(oks(d1, around, kSigmas) == 1.0);
  r = oks_ap({{{around, large_person()}, {d1}}}, kSigmas);
  REQUIRE(r.ap == Approx(1.0).epsilon(1e-12));

  // Equal OKS: the later person wins, as cocoeval's "ious < iou: continue". Pa and Pb stand on
  // the same spot; Pa has all 3 joints labelled, Pb only joint 0. E1 (.9) is exact: OKS 1 with
  // both, so it takes Pb. E2 (.8) has joint 0 200 px off (e = 200²/200 = 200, e^−200 ≈ 0) and
  // joints 1, 2 exact: OKS (0 + 1 + 1)/3 = 0.667 with Pa (≥ t0–t3), ≈ 0 with Pb. 2 persons:
  //   t0–t3  T T → 101/101;   t4–t9  T F → recall .5 → 51/101
  //   AP = (4·101 + 6·51) / 1010 = 710/1010 (had E1 taken Pa, E2 would miss: 51/101 throughout)
  PersonTruth Pb = large_person();
  Pb.visible = {2, 0, 0};
  const PersonDetection E1 = on(large_person(), 0.9);
  const PersonDetection E2 = detection({350, 120, 180}, {110, 190, 190}, 0.8);
  r = oks_ap({{{large_person(), Pb}, {E1, E2}}}, kSigmas);
  REQUIRE(r.ap == Approx(710.0 / 1010).epsilon(1e-12));
}

TEST_CASE("interpolated_precision: 101 points of the non-increasing envelope",
          "[data][oks_ap]") {
  // F T T for 2 persons: recall 0, .5, 1; precision 0, .5, 2/3. The envelope is 2/3 at every
  // point, so all 101 values are 2/3 — read raw, recall 0 would give 0 and .5 would give .5.
  std::vector<double> q = interpolated_precision({false, true, true}, 2);
  REQUIRE(q.size() == 101);
  for (double v : q) REQUIRE(v == Approx(2.0 / 3).epsilon(1e-12));
  // T F for 4 persons: recall stops at .25, so points above it are 0.
  q = interpolated_precision({true, false}, 4);
  REQUIRE(q[0] == Approx(1.0).epsilon(1e-12));
  REQUIRE(q[25] == Approx(1.0).epsilon(1e-12));
  REQUIRE(q[26] == 0.0);
  REQUIRE(q[100] == 0.0);
  // No detection: all zero.
  REQUIRE(interpolated_precision({}, 3) == std::vector<double>(101, 0.0));
  REQUIRE_THROWS_WITH(interpolated_precision({true, true}, 1),
                      Contains("interpolated_precision: 2 true positives for 1 persons"));
  REQUIRE_THROWS_WITH(interpolated_precision({true}, 0),
                      Contains("interpolated_precision: num_truth must be positive, got 0"));
}

TEST_CASE("top-down scoring and one_person_per_image", "[data][oks_ap]") {
  // The mean of the joint maxima above 0.2 (mmpose's vis_thr): (0.9 + 0.5) / 2.
  REQUIRE(top_down_score({0.9f, 0.1f, 0.5f}) == Approx(0.7));
  REQUIRE(top_down_score({0.1f, 0.15f}) == 0.0);
  // Two images of one figure each: predicted (x, y, score), truth (x, y, visible), boxes.
  Tensor predicted = Tensor::from_vector({150, 110, 0.9, 120, 190, 0.8, 185, 190, 0.1,
                                          0, 0, 0.5, 0, 0, 0.5, 0, 0, 0.5}, {2, 3, 3});
  Tensor truth = Tensor::from_vector({150, 110, 1, 120, 190, 1, 180, 190, 1,
                                      150, 110, 1, 120, 190, 0, 180, 190, 1}, {2, 3, 3});
  Tensor boxes = Tensor::from_vector({100, 100, 100, 100, 100, 100, 100, 100}, {2, 4});
  const std::vector<ImageKeypoints> images = one_person_per_image(predicted, truth, boxes);
  REQUIRE(images.size() == 2);
  REQUIRE(images[0].truth.size() == 1);
  REQUIRE(images[0].detections.size() == 1);
  REQUIRE(images[0].detections[0].score == Approx(0.85));
  REQUIRE(images[0].truth[0].area == 10000);
  REQUIRE(images[1].truth[0].visible == std::vector<std::uint8_t>{2, 0, 2});
  // Image 0's detection is D1 of the hand fixture (OKS 0.9608): it clears every threshold;
  // image 1's is far off. Score order D1, miss, 2 persons: T F → 51/101 at every threshold.
  REQUIRE(oks(images[0].detections[0], images[0].truth[0], kSigmas) ==
          Approx(0.9608323008615317).epsilon(1e-6));
  REQUIRE(oks_ap(images, kSigmas).ap == Approx(51.0 / 101).epsilon(1e-12));

  REQUIRE_THROWS_WITH(one_person_per_image(predicted, truth, Tensor::zeros({2, 3})),
                      Contains("one_person_per_image: predicted (2, 3, 3), truth (2, 3, 3) and "
                               "boxes (2, 3) do not fit"));
  std::vector<ImageKeypoints> bad = {{{large_person()}, {far_away(NAN)}}};
  REQUIRE_THROWS_WITH(oks_ap(bad, kSigmas),
                      Contains("oks_ap: detection 0 of image 0 has a NaN score"));
  bad = {{{large_person()}, {detection({1, 2, NAN}, {1, 2, 3}, 0.5)}}};
  REQUIRE_THROWS_WITH(oks_ap(bad, kSigmas),
                      Contains("oks_ap: detection 0 of image 0 has joint 2 at (nan, 3)"));
}
