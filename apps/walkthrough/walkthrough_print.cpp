#include "apps/walkthrough/walkthrough_print.h"

#include <cmath>
#include <cstdio>

#include "core/elementwise.h"
#include "core/error.h"
#include "core/reduction.h"
#include "core/shape_ops.h"

namespace uwaga::walkthrough {

void heading(const std::string& text) { std::printf("\n== %s\n", text.c_str()); }

namespace {
void print_value(double v) {
  if (std::isinf(v)) std::printf("%9s", v < 0 ? "-inf" : "inf");
  else std::printf("%9.4f", v);
}
}  // namespace

void show(const std::string& name, const Tensor& t, const std::string& meaning,
          const Labels& rows, const Labels& cols) {
  std::printf("\n%s %s  %s\n", name.c_str(), shape_str(t.shape()).c_str(), meaning.c_str());
  const Tensor m = t.dim() == 1 ? unsqueeze(t, 0) : t;  // a vector prints as one row
  const std::int64_t R = m.size(0), C = m.size(1);
  std::printf("%10s", "");
  for (std::int64_t j = 0; j < C; ++j)
    std::printf("%9s", cols.empty() ? str("[", j, "]").c_str() : cols[j].c_str());
  std::printf("\n");
  for (std::int64_t i = 0; i < R; ++i) {
    std::printf("%10s", rows.empty() || t.dim() == 1 ? str("[", i, "]").c_str()
                                                      : rows[i].c_str());
    for (std::int64_t j = 0; j < C; ++j) print_value(m.at({i, j}));
    std::printf("\n");
  }
}

double max_difference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape())
    fail("the walkthrough compares tensors of shapes ", shape_str(a.shape()), " and ",
         shape_str(b.shape()));
  return max(abs(a - b)).item();
}

void check(const std::string& what, const Tensor& mine, const Tensor& reference,
           double tolerance) {
  const double d = max_difference(mine, reference);
  std::printf("\ncheck: %s, largest difference %.3g  %s\n", what.c_str(), d,
              d < tolerance ? "OK" : "NOT OK");
  if (!(d < tolerance)) fail("the walkthrough and the library disagree on ", what);
}

}  // namespace uwaga::walkthrough
