#pragma once
// uwaga::Error: every misuse of the library throws one, with a sentence that names the op, the
// shapes and what was expected, e.g.
//   "matmul: (32, 64) @ (32, 64): inner dimensions 64 and 32 differ".
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace uwaga {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Builds a message from pieces: fail("matmul: ", shape_str(a), " @ ", ...).
template <class... Parts>
[[noreturn]] void fail(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  throw Error(out.str());
}

// Fails unless 1 ≤ value ≤ limit: "vit config: depth 1000000000000 is above the limit of 1000".
// Configurations bound every size generously, so a mistyped flag or a corrupt checkpoint fails
// at once instead of looping over 10¹² blocks or overflowing a size.
inline void check_size_in_range(const char* who, const char* field, std::int64_t value,
                                std::int64_t limit) {
  if (value < 1) fail(who, ": ", field, " must be positive, got ", value);
  if (value > limit) fail(who, ": ", field, " ", value, " is above the limit of ", limit);
}

}  // namespace uwaga
