// version_string(): the version of CMakeLists.txt and the git revision, and every checkpoint keeps
// it in its metadata ("uwaga_version"), where `uwaga-* --version` prints the same string
// (tests/apps/install_example.sh compares the two for an installed program).
#include <catch2/catch.hpp>
#include <regex>
#include <string>

#include "core/safetensors.h"
#include "core/version.h"
#include "nn/linear.h"
#include "optim/checkpoint.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;

TEST_CASE("version: the version and the git revision it was built from", "[core][version]") {
  const std::string version = version_string();
  INFO("version_string() = '" << version << "'");
  CHECK(std::regex_match(version,
                         std::regex(R"(\d+\.\d+\.\d+ \(git ([0-9a-f]{12}(-dirty)?|unknown)\))")));
}

TEST_CASE("version: every checkpoint holds the version that wrote it", "[core][version]") {
  testing::TempDir dir("version-checkpoint");
  Generator gen(0);
  nn::Linear model(nn::LinearOptions{.in = 2, .out = 3}, gen);
  const std::string path = dir.file("checkpoint.safetensors");
  optim::save_checkpoint(path, model, nullptr, optim::CheckpointInfo{});
  CHECK(load_safetensors(path).metadata.at("uwaga_version") == version_string());
  // A checkpoint without it (written before it existed) still loads.
  save_safetensors(path, {{"model.weight", model.weight}, {"model.bias", model.bias}},
                   {{"format", optim::kCheckpointFormat}, {"step", "0"}, {"epoch", "0"},
                    {"batch_in_epoch", "0"}, {"epoch_finished", "0"}, {"lr", "0"}});
  CHECK_NOTHROW(optim::load_checkpoint(path, model, nullptr));
}
