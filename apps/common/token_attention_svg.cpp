#include "apps/common/token_attention_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "apps/common/svg_canvas.h"
#include "core/error.h"

namespace uwaga::apps {
namespace {

// A rough width of a label in pixels (sans-serif at `size`; accents count as one letter).
double text_width(const std::string& s, double size) {
  std::size_t letters = 0;
  for (unsigned char c : s) letters += (c & 0xC0) != 0x80;  // count UTF-8 lead bytes only
  return 0.6 * size * static_cast<double>(letters);
}

double widest(const std::vector<std::string>& words, double size) {
  double w = 0;
  for (const auto& s : words) w = std::max(w, text_width(s, size));
  return w;
}

// How large one map is drawn: its cell and label sizes, and the margins its labels need.
struct MapLayout {
  double cell, font;  // font 0: no labels (the cells are too small to name)
  double left, top;   // from the panel's corner to the first cell
  double width, height;
};

MapLayout layout(const TokenAttention& a, double cell, double font, double margin) {
  MapLayout m{cell, cell >= 8 ? font : 0, margin, margin, 0, 0};
  if (m.font > 0) {
    m.left += widest(a.queries, m.font);
    m.top += 0.75 * widest(a.keys, m.font);  // slanted labels rise about 0.75 of their length
  }
  const auto T = static_cast<double>(a.queries.size()), S = static_cast<double>(a.keys.size());
  m.width = m.left + S * cell + 10 + (m.font > 0 ? 0.75 * widest(a.keys, m.font) : 0);
  m.height = m.top + T * cell + 10;
  return m;
}

// One heatmap with its row and column labels; (x, y) is the top-left of the cells.
void draw_map(SvgCanvas& svg, double x, double y, const std::vector<double>& values,
              const TokenAttention& a, const MapLayout& m, const ColourScale& scale,
              bool numbers) {
  const auto T = static_cast<std::int64_t>(a.queries.size());
  const auto S = static_cast<std::int64_t>(a.keys.size());
  svg.heatmap(x, y, values, T, S, m.cell, m.cell, scale);
  if (m.font > 0) {
    for (std::int64_t s = 0; s < S; ++s)  // keys along the top, slanted
      svg.text(x + (s + 0.5) * m.cell, y - 4, a.keys[s], m.font, "start", -45);
    for (std::int64_t t = 0; t < T; ++t)  // queries down the left
      svg.text(x - 4, y + (t + 0.5) * m.cell + m.font / 3, a.queries[t], m.font, "end");
  }
  if (!numbers) return;
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t s = 0; s < S; ++s) {
      const double v = values[t * S + s];
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.2f", v);
      // Dark text on the bright (yellow) end of viridis, white elsewhere: the SVG text has no
      // colour attribute, so the cell is labelled only where black is readable.
      if (scale.top > 0 && v / scale.top > 0.55)
        svg.text(x + (s + 0.5) * m.cell, y + (t + 0.5) * m.cell + m.font / 3, buf,
                 m.font * 0.8, "middle");
    }
}

}  // namespace

std::vector<double> mean_attention(const TokenAttention& a) {
  const std::size_t T = a.queries.size(), S = a.keys.size();
  std::vector<double> mean(T * S, 0.0);
  std::int64_t maps = 0;
  for (const Tensor& layer : a.layers) {  // (h, T, S)
    if (layer.dim() != 3 || layer.size(1) != static_cast<std::int64_t>(T) ||
        layer.size(2) != static_cast<std::int64_t>(S))
      fail("attention: a layer's weights are ", shape_str(layer.shape()), "; expected (h, ", T,
           ", ", S, ") for ", T, " queries and ", S, " keys");
    const std::vector<double> v = layer.to_vector();
    const auto h = static_cast<std::size_t>(layer.size(0));
    for (std::size_t k = 0; k < h; ++k)
      for (std::size_t i = 0; i < T * S; ++i) mean[i] += v[k * T * S + i];
    maps += static_cast<std::int64_t>(h);
  }
  for (double& m : mean) m /= static_cast<double>(std::max<std::int64_t>(maps, 1));
  return mean;
}

void save_token_attention_svg(const TokenAttention& a, const std::string& title,
                              const std::string& subtitle, const std::string& path) {
  const std::vector<double> mean = mean_attention(a);
  const auto T = static_cast<double>(a.queries.size());
  const auto S = static_cast<double>(a.keys.size());
  const double longest = std::max(T, S);
  const std::size_t layers = a.layers.size();
  const std::size_t heads = layers ? static_cast<std::size_t>(a.layers[0].size(0)) : 0;
  // One scale for every map: 0 to the largest weight of any head (the mean's is no larger).
  ColourScale scale{0};
  for (const Tensor& layer : a.layers)
    for (double w : layer.to_vector()) scale.top = std::max(scale.top, w);
  // The big map (the mean), with values when its cells are large enough to hold them; the small
  // maps, one per layer (rows) and head (columns). Cells shrink for long inputs.
  const MapLayout big = layout(a, std::clamp(std::floor(640 / longest), 6.0, 40.0), 13, 20);
  const MapLayout small = layout(a, std::clamp(std::floor(220 / longest), 2.0, 18.0), 9, 10);
  const double width = std::max({20 + big.width, static_cast<double>(heads) * small.width + 20,
                                 620.0});
  const double big_top = 50, legend_y = big_top + big.height + 10;
  const double grid_y = legend_y + 60;
  const double height = grid_y + static_cast<double>(layers) * (small.height + 14) + 10;

  SvgCanvas svg(width, height);
  svg.text(10, 20, title, 14);
  svg.text(10, 38, subtitle, 11);
  draw_map(svg, 10 + big.left, big_top + big.top, mean, a, big, scale, big.cell >= 28);
  svg.colour_legend(10, legend_y, 240, scale,
                    "attention weight: one scale for every map, 0 to the largest weight of any "
                    "head");
  std::ostringstream each;
  each << "each layer (rows) and head (columns), " << layers << " x " << heads;
  svg.text(10, grid_y - 12, each.str(), 12);
  for (std::size_t l = 0; l < layers; ++l) {
    const std::vector<double> v = a.layers[l].to_vector();
    const std::size_t TS = a.queries.size() * a.keys.size();
    for (std::size_t k = 0; k < heads; ++k) {
      const double x = 10 + static_cast<double>(k) * small.width;
      const double y = grid_y + static_cast<double>(l) * (small.height + 14);
      std::ostringstream label;
      label << "layer " << l + 1 << ", head " << k + 1;
      svg.text(x, y + 10, label.str(), 10);
      std::vector<double> head(v.begin() + static_cast<std::ptrdiff_t>(k * TS),
                               v.begin() + static_cast<std::ptrdiff_t>((k + 1) * TS));
      draw_map(svg, x + small.left, y + 14 + small.top, head, a, small, scale, false);
    }
  }
  svg.save(path);
}

}  // namespace uwaga::apps
