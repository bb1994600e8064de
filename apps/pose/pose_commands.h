#pragma once
// The modes of uwaga-pose; each parses its own flags (argv[0] is the mode) and returns the exit
// status. Errors are thrown as uwaga::Error and reported by main() with status 2.
namespace uwaga::apps {

int pose_train(int argc, char** argv);
int pose_eval(int argc, char** argv);
int pose_predict(int argc, char** argv);    // apps/pose/pose_inspect.cpp
int pose_attention(int argc, char** argv);  // apps/pose/pose_inspect.cpp
int pose_explore(int argc, char** argv);    // apps/pose/pose_inspect.cpp
int pose_plot(int argc, char** argv);       // apps/common/training_plot

}  // namespace uwaga::apps
