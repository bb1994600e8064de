#pragma once
// The library's version and the git revision it was built from.
namespace uwaga {

// "0.1.0 (git 1a2b3c4d5e6f)": the project's version (CMakeLists.txt) and the revision of the tree
// it was built from, "-dirty" after it when that tree had uncommitted changes, "unknown" outside
// a git checkout. `uwaga-* --version` prints it and every checkpoint's metadata holds it
// ("uwaga_version"), so a result can be traced to the code that made it.
const char* version_string();

}  // namespace uwaga
