#pragma once
// How many times `what` occurs in `text`, overlapping occurrences included: the tests' count of
// elements in an SVG or HTML page, or of edges in a graph's DOT text.
#include <cstddef>
#include <string>

namespace uwaga::testing {

inline std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace uwaga::testing
