#pragma once
// Printing for uwaga-walkthrough: a matrix with its name, shape and formula, rows and columns
// labelled; a check of a matrix against what nn/ or autograd computes, OK or NOT OK.
#include <sstream>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace uwaga::walkthrough {

using Labels = std::vector<std::string>;

// The lecture notes' sentence: the rows of X.
inline const Labels kWords = {"we", "are", "eating", "bread"};

// Text from parts. (Not "literal" + std::string: GCC 12 warns falsely on it, -Wrestrict.)
template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

void heading(const std::string& text);

// A 1-D or 2-D tensor with its name, shape and meaning; rows (and columns, when given) labelled.
// -inf prints as "-inf" (a masked score).
void show(const std::string& name, const Tensor& t, const std::string& meaning,
          const Labels& rows = {}, const Labels& cols = {});

double max_difference(const Tensor& a, const Tensor& b);

// Prints "check: WHAT, largest difference D  OK" and fails (uwaga::Error) unless D < tolerance.
void check(const std::string& what, const Tensor& mine, const Tensor& reference,
           double tolerance = 1e-12);

}  // namespace uwaga::walkthrough
