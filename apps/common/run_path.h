#pragma once
// A path the user typed for a run's input (--text, --coco-annotations, --data-dir) as the run
// records it in run.json and the checkpoint's metadata.
#include <string>

namespace uwaga::apps {

// `typed` made absolute and canonical (symlinks resolved) as far as it exists, so that a resume
// from another directory finds the file and the same file named another way is the same setting.
// Fails naming `flag` when it is empty or not UTF-8 (run.json holds UTF-8 only), before or after
// its links are resolved.
std::string path_for_run(const char* flag, const std::string& typed);

}  // namespace uwaga::apps
