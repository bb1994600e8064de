#pragma once
// The modes of uwaga-pose; each parses its own flags (argv[0] is the mode) and returns the exit
// status. Errors are thrown as uwaga::Error and reported by main() with status 2.
#include <cxxopts.hpp>

#include "apps/pose/pose_run_config.h"

namespace uwaga::apps {

// Where a COCO run's files are: --coco-annotations FILE.json and --data-dir DIR (its photos), the
// same two flags in every mode that reads samples (train, eval, predict, attention, explore);
// `default_place` says where they are when not given ("the preset's").
void add_pose_data_flags(cxxopts::Options& o, const std::string& default_place);
// The flags onto the run's fields, each path absolute and canonical (path_for_run,
// apps/common/run_path.h); fails when they are given for a run of stick figures.
void apply_pose_data_flags(const cxxopts::ParseResult& r, PoseRunConfig& run);

int pose_train(int argc, char** argv);
int pose_eval(int argc, char** argv);
int pose_predict(int argc, char** argv);    // apps/pose/pose_inspect.cpp
int pose_attention(int argc, char** argv);  // apps/pose/pose_inspect.cpp
int pose_explore(int argc, char** argv);    // apps/pose/pose_inspect.cpp
int pose_plot(int argc, char** argv);       // apps/common/training_plot

}  // namespace uwaga::apps
