#pragma once
// The programs' output files (SVG pictures, HTML pages), written atomically.
#include <string>

namespace uwaga::apps {

// Writes `bytes` to `path`, atomically: to "<path>.tmp.<pid>.0" beside it, then renamed over
// `path`, so a kill or a full disk midway leaves the previous file whole (a killed run's
// temporary is removed when a run resumes in that directory: optim::remove_stale_temporaries).
// On failure throws uwaga::Error "cannot write '<path>': <reason>" and leaves no temporary behind.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace uwaga::apps
