#pragma once
// Everything in core/, for programs that want one include. The ops with hand-derived backward
// passes (softmax, gelu, cross_entropy, dropout) are in nn/, beside their modules.
#include "core/autograd.h"
#include "core/elementwise.h"
#include "core/gradcheck.h"
#include "core/graph.h"
#include "core/graph_dot.h"
#include "core/indexing.h"
#include "core/matmul.h"
#include "core/op_timer.h"
#include "core/random.h"
#include "core/reduction.h"
#include "core/shape_ops.h"
#include "core/tensor.h"
#include "core/threads.h"
