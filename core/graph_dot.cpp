#include "core/graph_dot.h"

#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "core/autograd.h"

namespace uwaga {
namespace {

// DOT strings are double-quoted; a name may contain quotes or backslashes.
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string format_values(const Tensor& t) {
  std::string out = "[";
  const std::vector<double> v = t.to_vector();
  for (std::size_t i = 0; i < v.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.4g", i ? ", " : "", v[i]);
    out += buf;
  }
  return out + "]";
}

// A leaf: its name, shape and dtype; values and gradient when small enough to read.
std::string leaf_label(const Tensor& t, int max_values) {
  std::ostringstream label;  // "\\n" is DOT's line break inside a label
  label << (t.name().empty() ? "tensor" : escape(t.name())) << " " << shape_str(t.shape());
  if (t.dtype() != DType::Float32) label << " " << dtype_name(t.dtype());
  if (t.numel() <= max_values) {
    label << "\\ndata " << format_values(t);
    Tensor g = t.grad();
    if (g.defined()) label << "\\ngrad " << format_values(g);
  }
  return label.str();
}

}  // namespace

// Nodes are drawn left to right in topological order: leaves, then the ops that use them, ending
// at the root. A leaf that requires a gradient (a parameter or a checked input) is filled; a
// constant (targets, masks) is dashed.
std::string to_dot(const Tensor& root, int max_values) {
  check_defined(root, "to_dot");
  std::ostringstream dot;
  dot << "digraph uwaga {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n";

  // An op node stores its inputs but not its output, so read each output's shape off the tensor
  // that a later node (or the caller, for the root) holds.
  const std::vector<Node*> order = topological_order(root);
  std::unordered_map<const Node*, Shape> out_shape;
  if (root.grad_fn()) out_shape[root.grad_fn().get()] = root.shape();
  for (const Node* node : order)
    for (const Tensor& in : node->inputs)
      if (in.defined() && in.grad_fn()) out_shape[in.grad_fn().get()] = in.shape();

  std::unordered_map<const TensorImpl*, std::string> leaf_ids;
  auto leaf_id = [&](const Tensor& t) {
    auto [it, fresh] = leaf_ids.try_emplace(&t.impl(), "leaf" + std::to_string(leaf_ids.size()));
    if (fresh) {
      dot << "  " << it->second << " [shape=ellipse, label=\"" << leaf_label(t, max_values)
          << "\"" << (t.requires_grad() ? ", style=filled, fillcolor=lightblue" : ", style=dashed")
          << "];\n";
    }
    return it->second;
  };
  auto op_id = [](const Node* node) { return "op" + std::to_string(node->id); };

  if (!root.grad_fn()) leaf_id(root);  // the "graph" of a leaf is the leaf itself
  for (const Node* node : order) {
    dot << "  " << op_id(node) << " [shape=box, label=\"" << node->op << "\\n"
        << shape_str(out_shape[node]) << (node->freed ? "\\n(freed by backward)" : "") << "\""
        << (node == root.grad_fn().get() ? ", peripheries=2" : "") << "];\n";
    for (const Tensor& in : node->inputs) {
      if (!in.defined()) continue;
      const std::string from = in.grad_fn() ? op_id(in.grad_fn().get()) : leaf_id(in);
      dot << "  " << from << " -> " << op_id(node) << ";\n";
    }
  }
  dot << "}\n";
  return dot.str();
}

}  // namespace uwaga
