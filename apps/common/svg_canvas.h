#pragma once
// A minimal SVG writer for the apps' pictures: heatmaps and attention maps over images. SVG is
// text, opens in any browser, and keeps labels (words, class names) sharp.
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace uwaga::apps {

struct Rgb {
  int r, g, b;
};

// Perceptually ordered colours (dark purple → yellow, like matplotlib's viridis) for t in [0, 1].
Rgb viridis(double t);

// Values in [0, top] to colours: viridis(v / top). Panels drawn with one scale can be compared —
// a near-uniform attention map stays dark beside a sharp one — which a map scaled to its own
// maximum hides.
struct ColourScale {
  double top = 1;  // the value drawn brightest (larger ones are clamped to it)
  Rgb operator()(double v) const { return viridis(top > 0 ? v / top : 0); }
};

class SvgCanvas {
 public:
  SvgCanvas(double width, double height);
  void rect(double x, double y, double w, double h, Rgb fill, double opacity = 1.0);
  void text(double x, double y, const std::string& s, double size = 12, const char* anchor = "start",
            double rotate = 0);
  // A grayscale image (values in [0, 1], row-major h × w) drawn at (x, y) with cell size `cell`.
  void gray_image(double x, double y, const std::vector<double>& values, std::int64_t h,
                  std::int64_t w, double cell);
  // A colour image (values in [0, 1], (3, h, w) planes, row-major) drawn as gray_image.
  void rgb_image(double x, double y, const std::vector<double>& values, std::int64_t h,
                 std::int64_t w, double cell);
  // A raster given as PNG bytes (data/images/png's encode_png), embedded in the file and drawn w × h at
  // (x, y) with its pixels kept square and sharp.
  void png_image(double x, double y, double w, double h, const std::string& png);
  // A heatmap over an h × w grid of cells, coloured by `scale`.
  void heatmap(double x, double y, const std::vector<double>& values, std::int64_t h,
               std::int64_t w, double cell_w, double cell_h, const ColourScale& scale,
               double opacity = 1.0);
  // The same with the values scaled by their own max (each map its own scale).
  void heatmap(double x, double y, const std::vector<double>& values, std::int64_t h,
               std::int64_t w, double cell_w, double cell_h, double opacity = 1.0);
  // A horizontal colour bar `length` wide at (x, y) with ticks 0 … scale.top and a caption.
  void colour_legend(double x, double y, double length, const ColourScale& scale,
                     const std::string& caption);
  // Line drawings (training curves): a straight segment, a path through `points` (x, y), the
  // same as a <polyline> (for a second series that should not count as a path), a dot.
  // `dash`: an SVG stroke-dasharray ("6 3"), or null for a solid line.
  void line(double x1, double y1, double x2, double y2, Rgb stroke, double width = 1,
            const char* dash = nullptr);
  void path(const std::vector<std::pair<double, double>>& points, Rgb stroke, double width = 1.5,
            const char* dash = nullptr);
  void polyline(const std::vector<std::pair<double, double>>& points, Rgb stroke,
                double width = 1.5, const char* dash = nullptr);
  void circle(double x, double y, double r, Rgb fill);
  // <g id="..."> ... </g> around what is drawn between the two calls.
  void begin_group(const std::string& id);
  void end_group();
  // What is drawn between these two calls (around the origin) is defined, not shown, as `id`;
  // use(id, x, y, scale) shows it at (x, y), scaled. A picture drawn many times (the same image
  // under many heatmaps) is written once.
  void begin_definition(const std::string& id);
  void end_definition();
  void use(const std::string& id, double x, double y, double scale = 1);
  std::string str() const;
  // Writes the file; throws uwaga::Error naming the path on failure.
  void save(const std::string& path) const;

 private:
  double width_, height_;
  std::ostringstream body_;
  bool links_ = false;  // an <image> refers to its data with xlink:href
};

// Writes `svg` to `path` atomically (write_file_atomically, core/output_file.h).
void write_svg_file(const std::string& path, const std::string& svg);

}  // namespace uwaga::apps
