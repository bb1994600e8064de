#include "apps/translate/attention_heatmap.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "apps/common/svg_canvas.h"

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

// One heatmap with its row and column labels; (x, y) is the top-left of the cells.
void draw_map(SvgCanvas& svg, double x, double y, const std::vector<double>& values,
              const CrossAttention& a, double cell, double font, bool numbers) {
  const auto T = static_cast<std::int64_t>(a.produced.size());
  const auto S = static_cast<std::int64_t>(a.source.size());
  svg.heatmap(x, y, values, T, S, cell, cell);
  for (std::int64_t s = 0; s < S; ++s)  // source words along the top, slanted
    svg.text(x + (s + 0.5) * cell, y - 4, a.source[s], font, "start", -45);
  for (std::int64_t t = 0; t < T; ++t)  // produced words down the left
    svg.text(x - 4, y + (t + 0.5) * cell + font / 3, a.produced[t], font, "end");
  if (!numbers) return;
  double top = 0;
  for (double v : values) top = std::max(top, v);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t s = 0; s < S; ++s) {
      const double v = values[t * S + s];
      char buf[16];
      std::snprintf(buf, sizeof buf, "%.2f", v);
      // Dark text on the bright (yellow) end of viridis, white elsewhere: the SVG text has no
      // colour attribute, so the cell is labelled only where black is readable.
      if (top > 0 && v / top > 0.55)
        svg.text(x + (s + 0.5) * cell, y + (t + 0.5) * cell + font / 3, buf, font * 0.8, "middle");
    }
}

}  // namespace

std::vector<double> CrossAttention::average() const {
  const std::size_t T = produced.size(), S = source.size();
  std::vector<double> mean(T * S, 0.0);
  std::int64_t maps = 0;
  for (const Tensor& layer : layers) {  // (h, T, S)
    const std::vector<double> v = layer.to_vector();
    const auto h = static_cast<std::size_t>(layer.size(0));
    for (std::size_t k = 0; k < h; ++k)
      for (std::size_t i = 0; i < T * S; ++i) mean[i] += v[k * T * S + i];
    maps += static_cast<std::int64_t>(h);
  }
  for (double& m : mean) m /= static_cast<double>(std::max<std::int64_t>(maps, 1));
  return mean;
}

std::vector<std::int64_t> CrossAttention::strongest_source() const {
  const std::vector<double> mean = average();
  const std::size_t S = source.size();
  std::vector<std::int64_t> out;
  for (std::size_t t = 0; t < produced.size(); ++t) {
    const auto row = mean.begin() + static_cast<std::ptrdiff_t>(t * S);
    out.push_back(std::max_element(row, row + static_cast<std::ptrdiff_t>(S)) - row);
  }
  return out;
}

void save_attention_svg(const CrossAttention& a, const std::string& title,
                        const std::string& path) {
  const auto T = static_cast<double>(a.produced.size());
  const auto S = static_cast<double>(a.source.size());
  const std::size_t layers = a.layers.size();
  const std::size_t heads = layers ? static_cast<std::size_t>(a.layers[0].size(0)) : 0;
  // The big map: the average over every layer and head.
  const double big = 40, big_font = 13;
  const double left = 20 + widest(a.produced, big_font);
  const double top = 50 + 0.75 * widest(a.source, big_font);
  // The small maps: one per layer (rows) and head (columns).
  const double small = 18, small_font = 9;
  const double small_left = 10 + widest(a.produced, small_font);
  const double small_top = 28 + 0.75 * widest(a.source, small_font);
  // Slanted labels reach about 0.75 of their length to the right of their column.
  const double panel_w = small_left + S * small + 10 + 0.75 * widest(a.source, small_font);
  const double panel_h = small_top + T * small + 10;
  const double width = std::max({left + S * big + 10 + 0.75 * widest(a.source, big_font),
                                static_cast<double>(heads) * panel_w + 20, 360.0});
  const double grid_y = top + T * big + 50;
  const double height = grid_y + static_cast<double>(layers) * panel_h + 10;

  SvgCanvas svg(width, height);
  svg.text(10, 20, title, 14);
  std::ostringstream subtitle;
  subtitle << "cross-attention, average over " << layers << " layers x " << heads
           << " heads (rows: produced words, columns: source words)";
  svg.text(10, 38, subtitle.str(), 11);
  draw_map(svg, left, top, a.average(), a, big, big_font, true);
  svg.text(10, grid_y - 20, "each layer and head", 12);
  for (std::size_t l = 0; l < layers; ++l) {
    const std::vector<double> v = a.layers[l].to_vector();
    const std::size_t TS = a.produced.size() * a.source.size();
    for (std::size_t k = 0; k < heads; ++k) {
      const double x = 10 + static_cast<double>(k) * panel_w;
      const double y = grid_y + static_cast<double>(l) * panel_h;
      std::ostringstream label;
      label << "layer " << l + 1 << ", head " << k + 1;
      svg.text(x, y + 10, label.str(), 10);
      std::vector<double> head(v.begin() + static_cast<std::ptrdiff_t>(k * TS),
                               v.begin() + static_cast<std::ptrdiff_t>((k + 1) * TS));
      draw_map(svg, x + small_left, y + small_top, head, a, small, small_font, false);
    }
  }
  svg.save(path);
}

}  // namespace uwaga::apps
