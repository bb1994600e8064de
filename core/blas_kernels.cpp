#include "core/blas_kernels.h"

#include <cblas.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/error.h"

// Exported by OpenBLAS's DYNAMIC_ARCH builds only (Debian's is one); weak, so that uwaga still
// links against a BLAS without them, and then keeps its kernels.
extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace uwaga {
namespace {

std::string g_core_at_load;

// The kernels uwaga wants on this CPU, "" when it has no preference.
std::string preferred_core() {
  if (const char* forced = std::getenv("UWAGA_OPENBLAS_CORE"); forced && *forced)
    return std::strcmp(forced, "keep") == 0 ? "" : forced;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
  return "";
}

// Cores whose float kernels are those of `wanted` (Cooperlake adds only bfloat16 products to
// SkylakeX's; SapphireRapids, from 0.3.22 on, is newer still).
bool already(const std::string& core, const std::string& wanted) {
  if (core == wanted) return true;
  return wanted == "SkylakeX" && (core == "Cooperlake" || core == "SapphireRapids");
}

}  // namespace

void choose_blas_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_core_at_load = openblas_get_corename();
    const std::string wanted = preferred_core();
    if (wanted.empty() || already(g_core_at_load, wanted) || !gotoblas_dynamic_init ||
        !gotoblas_dynamic_quit)
      return;
    // OpenBLAS reads OPENBLAS_CORETYPE when it initialises its kernel table; the variable goes
    // back to what it was afterwards (programs started from here inherit the user's).
    const char* before = std::getenv("OPENBLAS_CORETYPE");
    const std::string saved = before ? before : "";
    setenv("OPENBLAS_CORETYPE", wanted.c_str(), 1);
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    if (before) setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
    else unsetenv("OPENBLAS_CORETYPE");
  });
}

std::string blas_core() { return openblas_get_corename(); }

std::string blas_core_at_load() {
  choose_blas_kernels();
  return g_core_at_load;
}

bool blas_has_small_kernels() {
  choose_blas_kernels();
  return already(blas_core(), "SkylakeX");
}

std::string blas_config() { return openblas_get_config(); }

}  // namespace uwaga
