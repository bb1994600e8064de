#pragma once
// The attention explorer: one self-contained HTML page (no network; its script, style and data
// inline) showing every layer × head of a model's attention for one input. Every section has one
// colour scale for all its panels, with a legend (the page can switch to one scale per panel);
// hovering a cell, a token or a patch shows the exact weights, in every panel at once.
//
// A program fills an AttentionExplorer — for each kind of attention ("family") its weights per
// layer, A (h, T, S), and the labels of its T queries and S keys; for an image model the image
// and its patch grid — and saves it. What the page draws:
//   every family      a grid of heatmaps, one row per layer, one column per head and one for the
//                     mean of the heads; hovering a cell shows A[query, key] in every panel
//   token_view        the tokens in two columns, queries (attending) left and keys (attended to)
//                     right, joined by lines weighted by A, for a chosen layer and head (as
//                     bertviz draws them); hovering a token shows its row (or column) of A
//   image             one query's row of A over the image's patches (the class token's, for a
//                     ViT), per layer and head, their mean, and the rollout when given
// Used by uwaga-vit, uwaga-translate and uwaga-gpt explore; tests/apps/explorer_browser.sh
// loads the pages in Chromium.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace uwaga::apps {

// One kind of attention in the model, e.g. a ViT's self-attention or a translator's
// cross-attention.
struct AttentionFamily {
  std::string id;     // letters, digits, '-' and '_', unique in the page: "self", "cross"
  std::string name;   // its heading: "cross-attention"
  std::string about;  // a sentence on what its rows and columns are
  std::vector<std::string> queries;  // T labels: the positions that attend (rows of A)
  std::vector<std::string> keys;     // S labels: the positions attended to (columns of A)
  std::vector<Tensor> layers;        // per layer, A (h, T, S), or (1, h, T, S) for one input
  bool token_view = false;           // also draw the bertviz-style two columns of tokens
};

// The input of an image model, drawn under one query's attention over its patches.
struct ExplorerImage {
  std::int64_t channels = 1, height = 0, width = 0;  // 1 (gray) or 3 (colour)
  std::vector<double> pixels;                        // (C, H, W), values in [0, 1]
  std::int64_t grid_rows = 0, grid_cols = 0;         // the patch grid over the image
  std::string family;            // the id of the family whose weights are drawn
  std::vector<std::int64_t> queries = {0};  // the rows that can be drawn (the first at start)
  std::vector<std::string> query_names;     // their names in the page ("class token")
  std::int64_t first_key = 1;  // key first_key + r·grid_cols + c is patch (r, c)
  // The weight a drawn query puts on the key at this index is stated under each panel ("on
  // itself" when it is the query's own: a ViT's class token on itself), or -1 for none.
  std::int64_t self_key = 0;
  // Attention rollout R (T, S), the family's shape, or undefined: its rows are drawn too.
  Tensor rollout;
};

struct AttentionExplorer {
  std::string title;                // the page's heading and <title>
  std::string subtitle;             // one line under it (the input and the prediction)
  std::vector<std::string> notes;   // paragraphs on what the reader is looking at
  std::vector<AttentionFamily> families;
  std::optional<ExplorerImage> image;
};

// The paragraphs each page opens with: what a panel is (SEEDS §2–4) and how it is coloured.
// Programs add what is particular to their model after them.
std::vector<std::string> attention_explorer_basics();
// The paragraph on attention rollout, for pages of image models whose section shows it.
std::string attention_rollout_note();

// The page as one string. Fails (uwaga::Error) naming the family and the shapes when the
// weights do not fit the labels, the layers differ in heads, or the image does not fit.
std::string attention_explorer_html(const AttentionExplorer& explorer);
// Writes the page atomically (core/output_file.h); fails naming the path and the reason.
void save_attention_explorer(const AttentionExplorer& explorer, const std::string& path);

// A character as a label a reader can see: ' ' -> '␣', '\n' -> '↵', '\t' -> '⇥', other control
// characters as \xNN.
std::string visible_character(char c);

}  // namespace uwaga::apps
