// uwaga-pose's run configuration, as it travels in a checkpoint, and the checkpoint reader's
// shapes: a round trip changes nothing, errors name the flag or field, the shapes a config
// implies are the model's (parameters and BatchNorm buffers), and a checkpoint of another program
// is named as such.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "apps/common/loaded_model.h"
#include "apps/pose/pose_checkpoint.h"
#include "apps/pose/pose_run_config.h"
#include "core/error.h"
#include "nn/vision_transformer.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using namespace uwaga::apps;
using Catch::Contains;
using uwaga::testing::TempDir;

TEST_CASE("pose run configuration: presets, JSON round trip, the program that wrote it",
          "[apps][pose]") {
  for (const std::string& name : pose_preset_names()) {
    INFO(name);
    PoseRunConfig run = pose_preset(name);
    if (run.data == "coco") run.coco_annotations = "a.json", run.coco_images = "photos";
    REQUIRE_NOTHROW(run.validate());
    REQUIRE(PoseRunConfig::from_json(run.to_json()).to_json() == run.to_json());
    REQUIRE(run_config_program(run.to_json()) == "uwaga-pose");
    // Mirroring is on for photos only: a stick figure's grey levels tell its left from its right.
    REQUIRE(run.flip == (run.data == "coco"));
  }
  PoseRunConfig switched = pose_preset("coco-small");
  set_pose_data(switched, "synthetic");
  REQUIRE(!switched.flip);
  REQUIRE(pose_preset("stick-classic").model.decoder == "classic");
  REQUIRE(pose_preset("stick-simple").model.decoder == "simple");
  REQUIRE_THROWS_WITH(pose_preset("nope"), Contains("unknown preset 'nope'") &&
                                               Contains("stick-classic, stick-simple"));
  // The other programs' configurations are told apart by their "format".
  REQUIRE(run_config_program(R"({"format": "uwaga-gpt-1"})") == "uwaga-gpt");
  REQUIRE(run_config_program(R"({"format": "uwaga-translate-1", "model": {}})") ==
          "uwaga-translate");
  REQUIRE(run_config_program(R"({"dataset": "mnist", "model": {}})") == "uwaga-vit");
  REQUIRE(run_config_program(R"({"format": "uwaga"})") == "");
  REQUIRE_THROWS_WITH(PoseRunConfig::from_json(R"({"format": "uwaga-gpt-1"})"),
                      Contains("no \"format\": \"uwaga-pose-1\""));
}

TEST_CASE("pose run configuration: errors name the flag", "[apps][pose]") {
  auto fails = [](PoseRunConfig run, const char* what) {
    INFO(what);
    REQUIRE_THROWS_WITH(run.validate(), Contains(what));
  };
  PoseRunConfig run = pose_preset("smoke");
  PoseRunConfig bad = run;
  bad.label_smoothing = 0.1;
  fails(bad, "--label-smoothing");
  bad = run;
  bad.sigma = 0;
  fails(bad, "--sigma must be in (0, 100]");
  bad = run;
  bad.valid_size = 0;
  fails(bad, "--valid-size must be at least 1");
  bad = run;
  bad.train_size = 8;
  fails(bad, "--train-size 8 must hold at least one batch of 16");
  bad = run;
  bad.model.channels = 3;
  fails(bad, "--dataset synthetic: stick figures are grey images with 15 joints");
  bad = run;
  set_pose_data(bad, "coco");
  fails(bad, "--dataset coco needs --coco-annotations FILE.json and --data-dir DIR");
  REQUIRE_THROWS_WITH(set_pose_data(bad, "mpii"), Contains("--dataset: unknown data 'mpii'"));
  bad = run;
  bad.model.decoder = "deep";
  fails(bad, "unknown decoder 'deep'");
  bad = run;
  bad.epochs = 0;
  fails(bad, "--epochs must be from 1");
  nlohmann::json j = nlohmann::json::parse(run.to_json());
  j["model"].erase("decoder");
  REQUIRE_THROWS_WITH(PoseRunConfig::from_json(j.dump()),
                      Contains("the field \"model.decoder\" is missing"));
}

TEST_CASE("pose checkpoints: another program's checkpoint is named as such", "[apps][pose]") {
  TempDir dir("pose-checkpoint");
  const std::string path = dir.file("vit.safetensors");
  nn::VitConfig vit;
  vit.depth = 1;
  Generator gen(0);
  nn::VisionTransformer model(vit, gen);
  optim::CheckpointInfo info;
  info.config = R"({"dataset": "mnist", "model": {}})";
  optim::save_checkpoint(path, model, nullptr, info);
  REQUIRE_THROWS_WITH(read_pose_run_config(path),
                      Contains("is a uwaga-vit checkpoint, not a uwaga-pose one"));
  REQUIRE_THROWS_WITH(load_pose(dir.file("missing.safetensors")), Contains("does not exist"));
}
