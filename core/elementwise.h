#pragma once
// Elementwise ops. Binary ops follow NumPy broadcasting: shapes are aligned at their last dim and
// a dim of size 1 (or a missing leading dim) is stretched. Their backward rules return gradients
// of the broadcast shape; the autograd engine sums them back (reduce_to), in one place.
#include "core/tensor.h"

namespace uwaga {

Tensor add(const Tensor& a, const Tensor& b);  // a + b      d/da = 1,    d/db = 1
Tensor sub(const Tensor& a, const Tensor& b);  // a - b      d/da = 1,    d/db = -1
Tensor mul(const Tensor& a, const Tensor& b);  // a * b      d/da = b,    d/db = a
Tensor div(const Tensor& a, const Tensor& b);  // a / b      d/da = 1/b,  d/db = -a/b²
Tensor maximum(const Tensor& a, const Tensor& b);  // to the larger; halved on ties; NaN wins

Tensor add(const Tensor& a, double s);
Tensor sub(const Tensor& a, double s);
Tensor sub(double s, const Tensor& a);
Tensor mul(const Tensor& a, double s);
Tensor div(const Tensor& a, double s);
Tensor div(double s, const Tensor& a);

Tensor neg(const Tensor& x);                 // -x
Tensor exp(const Tensor& x);                 // d = exp(x)
Tensor log(const Tensor& x);                 // d = 1/x
Tensor sqrt(const Tensor& x);                // d = 1/(2 sqrt(x))
Tensor pow(const Tensor& x, double p);       // d = p x^(p-1)
Tensor tanh(const Tensor& x);                // d = 1 - tanh²
Tensor sigmoid(const Tensor& x);             // d = σ(1-σ)
Tensor erf(const Tensor& x);                 // d = 2/√π exp(-x²)
Tensor relu(const Tensor& x);                // d = [x > 0]
Tensor abs(const Tensor& x);                 // d = sign(x)

// where(cond, a, b): a where cond is nonzero, else b; cond broadcasts and is not differentiated.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// masked_fill(x, mask, v): v where mask is nonzero, else x. mask broadcasts to x's shape.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// Comparisons give 0/1 tensors of a's dtype; not differentiable.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, double s);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& x);
Tensor operator+(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(const Tensor& a, double s);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(const Tensor& a, double s);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(const Tensor& a, double s);
Tensor operator/(double s, const Tensor& a);

// In-place accumulate outside autograd: dst += src (same shape and dtype). Used by the engine
// and by optimizers.
void add_inplace(Tensor& dst, const Tensor& src);

}  // namespace uwaga

namespace uwaga {
// The broadcast kernel without autograd: a copy of x stretched to `shape` (used by expand and by
// reduction backward rules).
Tensor broadcast_copy(const Tensor& x, const Shape& shape);
}  // namespace uwaga
