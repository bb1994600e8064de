#include "apps/common/attention_explorer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <nlohmann/json.hpp>

#include "apps/common/attention_explorer_page.h"
#include "core/output_file.h"
#include "apps/common/printable_text.h"
#include "core/error.h"
#include "core/shape_ops.h"

namespace uwaga::apps {
namespace {

using nlohmann::json;

// Weights rounded to 5 decimals: the page shows 4, and the file stays small (a GPT's 4 layers ×
// 4 heads over 64 characters are 65,536 weights).
double rounded(double w) { return std::round(w * 1e5) / 1e5; }

// A (h, T, S) or (1, h, T, S) -> h rows of T·S weights, checked against the labels.
json head_weights(const AttentionFamily& f, std::size_t layer, std::int64_t heads) {
  const Tensor& A = f.layers[layer];
  const auto T = static_cast<std::int64_t>(f.queries.size());
  const auto S = static_cast<std::int64_t>(f.keys.size());
  const bool batched = A.defined() && A.dim() == 4 && A.size(0) == 1;
  if (!A.defined() || !(A.dim() == 3 || batched) || A.size(A.dim() - 2) != T ||
      A.size(A.dim() - 1) != S || (heads > 0 && A.size(A.dim() - 3) != heads))
    fail("attention explorer: family '", f.id, "' layer ", layer + 1, ": weights ",
         A.defined() ? shape_str(A.shape()) : std::string("(none)"), " should be (",
         heads > 0 ? std::to_string(heads) : std::string("h"), ", ", T, ", ", S, ") for ", T,
         " queries and ", S, " keys");
  const std::vector<double> v = A.to_vector();
  json rows = json::array();
  for (std::int64_t k = 0; k < A.size(A.dim() - 3); ++k) {
    json row = json::array();
    for (std::int64_t i = 0; i < T * S; ++i) {
      const double w = v[static_cast<std::size_t>(k * T * S + i)];
      if (!std::isfinite(w))
        fail("attention explorer: family '", f.id, "' layer ", layer + 1, " head ", k + 1,
             " holds a weight that is not finite (", w, ")");
      row.push_back(rounded(w));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

json labels(const std::vector<std::string>& words) {
  json out = json::array();
  for (const std::string& w : words) out.push_back(printable(w));
  return out;
}

json family_json(const AttentionFamily& f) {
  if (f.id.empty() || f.id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789-_") != std::string::npos)
    fail("attention explorer: family id '", printable(f.id),
         "' should be letters, digits, '-' and '_'");
  if (f.layers.empty() || f.queries.empty() || f.keys.empty())
    fail("attention explorer: family '", f.id, "' has ", f.layers.size(), " layers, ",
         f.queries.size(), " queries and ", f.keys.size(), " keys; each needs at least one");
  json layers = json::array();
  layers.push_back(head_weights(f, 0, 0));
  const auto heads = static_cast<std::int64_t>(layers[0].size());  // every layer must have h
  for (std::size_t l = 1; l < f.layers.size(); ++l) layers.push_back(head_weights(f, l, heads));
  return {{"id", f.id},
          {"name", printable(f.name)},
          {"about", printable(f.about)},
          {"queries", labels(f.queries)},
          {"keys", labels(f.keys)},
          {"token_view", f.token_view},
          {"weights", std::move(layers)}};
}

json image_json(const ExplorerImage& im, const std::vector<AttentionFamily>& families) {
  const AttentionFamily* f = nullptr;
  for (const auto& candidate : families)
    if (candidate.id == im.family) f = &candidate;
  if (!f) fail("attention explorer: the image names family '", printable(im.family),
               "', which the page does not have");
  const auto T = static_cast<std::int64_t>(f->queries.size());
  const auto S = static_cast<std::int64_t>(f->keys.size());
  if ((im.channels != 1 && im.channels != 3) || im.height < 1 || im.width < 1 ||
      static_cast<std::int64_t>(im.pixels.size()) != im.channels * im.height * im.width)
    fail("attention explorer: the image is ", im.channels, "x", im.height, "x", im.width,
         " (channels x height x width) with ", im.pixels.size(),
         " values; expected 1 or 3 channels and one value per pixel and channel");
  if (im.grid_rows < 1 || im.grid_cols < 1 || im.first_key < 0 ||
      im.first_key + im.grid_rows * im.grid_cols > S)
    fail("attention explorer: a ", im.grid_rows, "x", im.grid_cols, " patch grid from key ",
         im.first_key, " does not fit family '", f->id, "' with ", S, " keys");
  if (im.queries.empty() || im.query_names.size() != im.queries.size())
    fail("attention explorer: the image needs at least one query to draw and a name for each (",
         im.queries.size(), " queries, ", im.query_names.size(), " names)");
  for (std::int64_t q : im.queries)
    if (q < 0 || q >= T)
      fail("attention explorer: image query ", q, " is outside family '", f->id, "''s ", T,
           " queries");
  if (im.self_key >= S) fail("attention explorer: self_key ", im.self_key, " >= ", S, " keys");
  json pixels = json::array();
  for (double p : im.pixels) pixels.push_back(std::lround(255 * std::clamp(p, 0.0, 1.0)));
  json out = {{"channels", im.channels},   {"height", im.height},
              {"width", im.width},         {"pixels", std::move(pixels)},
              {"grid_rows", im.grid_rows}, {"grid_cols", im.grid_cols},
              {"family", im.family},       {"queries", im.queries},
              {"query_names", labels(im.query_names)},
              {"first_key", im.first_key}, {"self_key", im.self_key},
              {"rollout", nullptr}};
  if (const Tensor& R = im.rollout; R.defined()) {
    if (R.dim() < 2 || R.numel() != T * S || R.size(R.dim() - 2) != T || R.size(R.dim() - 1) != S)
      fail("attention explorer: the rollout ", shape_str(R.shape()), " should be (", T, ", ", S,
           "), the shape of family '", f->id, "''s maps");
    AttentionFamily rollout = *f;  // R (T, S) as a layer of one head
    rollout.id += " rollout";
    rollout.layers = {reshape(R, {1, T, S})};
    out["rollout"] = head_weights(rollout, 0, 1)[0];
  }
  return out;
}

// JSON inside <script>: "<" only ever appears inside strings, where \u003c reads the same, and
// without it no "</script>" or "<!--" in a label can end or confuse the element.
std::string script_safe(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

std::string html_escaped(const std::string& text) {
  std::string out;
  for (char c : printable(text)) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

std::string attention_explorer_html(const AttentionExplorer& e) {
  if (e.families.empty()) fail("attention explorer: no attention to show (no family)");
  json families = json::array();
  std::set<std::string> ids;
  for (const auto& f : e.families) {
    if (!ids.insert(f.id).second)
      fail("attention explorer: two families have the id '", printable(f.id), "'");
    families.push_back(family_json(f));
  }
  json notes = json::array();
  for (const std::string& n : e.notes) notes.push_back(printable(n));
  const json data = {{"title", printable(e.title)},
                     {"subtitle", printable(e.subtitle)},
                     {"notes", std::move(notes)},
                     {"families", std::move(families)},
                     {"image", e.image ? image_json(*e.image, e.families) : json(nullptr)}};
  return std::string("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n") +
         "<title>" + html_escaped(e.title) + "</title>\n<style>\n" + attention_explorer_style() +
         "</style>\n</head>\n<body>\n<main id=\"explorer\"></main>\n"
         "<script type=\"application/json\" id=\"explorer-data\">\n" + script_safe(data.dump()) +
         "\n</script>\n<script>\n" + attention_explorer_script() + "</script>\n</body>\n</html>\n";
}

void save_attention_explorer(const AttentionExplorer& explorer, const std::string& path) {
  write_file_atomically(path, attention_explorer_html(explorer));
}

std::vector<std::string> attention_explorer_basics() {
  return {
      "Each panel is one head's attention weights A = softmax(Q Kᵀ / √d_k) (SEEDS §2–3): "
      "row i holds how much query i takes from each key j when it computes its new vector "
      "Σ_j A_ij v_j, so every row sums to 1. A layer has h heads, head_i = Attention(Q W_i^Q, "
      "K W_i^K, V W_i^V) (SEEDS §4), each free to look somewhere else; 'mean of heads' is "
      "their average.",
      "Colours run from dark purple (0) to yellow. With 'one for every panel of a section' (the "
      "default) all panels of a section share one scale, up to the largest weight among them, so "
      "a head that spreads its attention evenly looks dark beside one that picks a single token; "
      "'each panel its own' stretches every panel to its own largest weight, to show the shape of "
      "a weak map; '0 to 1' gives a weight the same colour everywhere. The exact numbers are in "
      "the line under each panel and in the bar at the top."};
}

std::string attention_rollout_note() {
  return "Attention rollout (Abnar & Zuidema, 2020) follows the attention through all the layers, "
         "counting the residual connection as half of each: Â_ℓ = rownorm(½ Ā_ℓ + ½ I), "
         "R = Â_L ⋯ Â_1, with Ā_ℓ the mean of layer ℓ's heads (nn/attention_rollout.h).";
}

std::string visible_character(char c) {
  if (c == ' ') return "\xE2\x90\xA3";   // ␣
  if (c == '\n') return "\xE2\x86\xB5";  // ↵
  if (c == '\t') return "\xE2\x87\xA5";  // ⇥
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7F || u >= 0x80) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", u);
    return hex;
  }
  return std::string(1, c);
}

}  // namespace uwaga::apps
