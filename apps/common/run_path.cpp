#include "apps/common/run_path.h"

#include <filesystem>

#include "apps/common/printable_text.h"
#include "core/error.h"

namespace uwaga::apps {

std::string path_for_run(const char* flag, const std::string& typed) {
  if (typed.empty()) fail(flag, " is empty: it must name a file or directory");
  require_utf8_path(flag, typed);
  namespace fs = std::filesystem;
  const std::string path = fs::weakly_canonical(fs::absolute(typed)).string();
  require_utf8_path(flag, path);  // a link may lead elsewhere
  return path;
}

}  // namespace uwaga::apps
