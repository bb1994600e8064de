#pragma once
// uwaga::Error: every misuse of the library throws one, with a sentence that names the op, the
// shapes and what was expected, e.g.
//   "matmul: (32, 64) @ (32, 64): inner dimensions 64 and 32 differ".
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

}  // namespace uwaga
