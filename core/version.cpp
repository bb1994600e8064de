#include "core/version.h"

// uwaga_version.h defines UWAGA_VERSION_STRING; the build rewrites it whenever the revision changes
// (core/cmake/version.cmake). A build without it (tests/fuzz compiles core/ on its own) says so.
#if __has_include("uwaga_version.h")
#include "uwaga_version.h"
#else
#define UWAGA_VERSION_STRING "unknown (built without core/cmake/version.cmake)"
#endif

namespace uwaga {

const char* version_string() { return UWAGA_VERSION_STRING; }

}  // namespace uwaga
