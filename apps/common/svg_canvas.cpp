#include "apps/common/svg_canvas.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/output_file.h"
#include "apps/common/printable_text.h"
#include "core/error.h"

namespace uwaga::apps {

Rgb viridis(double t) {
  // Five anchor colours of viridis, interpolated linearly.
  static const Rgb stops[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98},
                              {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4.0;
  int i = std::min(3, static_cast<int>(t));
  double f = t - i;
  auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g),
          mix(stops[i].b, stops[i + 1].b)};
}

SvgCanvas::SvgCanvas(double width, double height) : width_(width), height_(height) {}

namespace {

// RFC 4648 base64: three bytes to four digits of six bits, the end padded with '='.
std::string base64(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto v = (std::uint32_t(std::uint8_t(bytes[i])) << 16) |
                   (std::uint32_t(std::uint8_t(bytes[i + 1])) << 8) | std::uint8_t(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) out += digits[(v >> shift) & 63];
  }
  if (i < bytes.size()) {  // one or two bytes left
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    out += digits[(v >> 18) & 63];
    out += digits[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? digits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace

void SvgCanvas::png_image(double x, double y, double w, double h, const std::string& png) {
  // xlink:href, which every SVG renderer reads (SVG 2's plain href is newer).
  links_ = true;
  body_ << "<image x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
        << "\" style=\"image-rendering:pixelated\" xlink:href=\"data:image/png;base64,"
        << base64(png) << "\"/>\n";
}

void SvgCanvas::rect(double x, double y, double w, double h, Rgb c, double opacity) {
  body_ << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
        << "\" fill=\"rgb(" << c.r << "," << c.g << "," << c.b << ")\"";
  if (opacity < 1.0) body_ << " fill-opacity=\"" << opacity << "\"";
  body_ << "/>\n";
}

void SvgCanvas::text(double x, double y, const std::string& s, double size, const char* anchor,
                     double rotate) {
  // XML text: no control characters or broken UTF-8 (printable), and <, >, & as entities.
  std::string escaped;
  for (char ch : printable(s)) {
    if (ch == '<') escaped += "&lt;";
    else if (ch == '>') escaped += "&gt;";
    else if (ch == '&') escaped += "&amp;";
    else escaped += ch;
  }
  body_ << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"" << size
        << "\" font-family=\"sans-serif\" text-anchor=\"" << anchor << "\"";
  if (rotate != 0) body_ << " transform=\"rotate(" << rotate << " " << x << " " << y << ")\"";
  body_ << ">" << escaped << "</text>\n";
}

void SvgCanvas::gray_image(double x, double y, const std::vector<double>& v, std::int64_t h,
                           std::int64_t w, double cell) {
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < w; ++j) {
      int g = static_cast<int>(std::lround(255 * std::clamp(v[i * w + j], 0.0, 1.0)));
      rect(x + j * cell, y + i * cell, cell, cell, {g, g, g});
    }
}

void SvgCanvas::rgb_image(double x, double y, const std::vector<double>& v, std::int64_t h,
                          std::int64_t w, double cell) {
  auto level = [&](std::int64_t c, std::int64_t i) {
    return static_cast<int>(std::lround(255 * std::clamp(v[c * h * w + i], 0.0, 1.0)));
  };
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < w; ++j)
      rect(x + j * cell, y + i * cell, cell, cell,
           {level(0, i * w + j), level(1, i * w + j), level(2, i * w + j)});
}

void SvgCanvas::heatmap(double x, double y, const std::vector<double>& v, std::int64_t h,
                        std::int64_t w, double cw, double ch, const ColourScale& scale,
                        double opacity) {
  for (std::int64_t i = 0; i < h; ++i)
    for (std::int64_t j = 0; j < w; ++j)
      rect(x + j * cw, y + i * ch, cw, ch, scale(v[i * w + j]), opacity);
}

void SvgCanvas::heatmap(double x, double y, const std::vector<double>& v, std::int64_t h,
                        std::int64_t w, double cw, double ch, double opacity) {
  double top = 0;
  for (double e : v) top = std::max(top, e);
  heatmap(x, y, v, h, w, cw, ch, ColourScale{top}, opacity);
}

void SvgCanvas::colour_legend(double x, double y, double length, const ColourScale& scale,
                              const std::string& caption) {
  const int steps = 64;
  const double bar = 10;
  for (int i = 0; i < steps; ++i)
    rect(x + length * i / steps, y, length / steps + 0.5, bar, viridis((i + 0.5) / steps));
  for (int k = 0; k <= 4; ++k) {
    const double tx = x + length * k / 4;
    line(tx, y + bar, tx, y + bar + 3, {0, 0, 0});
    char label[32];
    std::snprintf(label, sizeof label, "%.3g", scale.top * k / 4);
    text(tx, y + bar + 14, label, 10, "middle");
  }
  text(x + length + 8, y + bar, caption, 11);
}

namespace {

std::string colour(Rgb c) {
  return "rgb(" + std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b) + ")";
}

// The stroke attributes shared by lines and curves.
std::string stroke(Rgb c, double width, const char* dash) {
  std::ostringstream s;
  s << " fill=\"none\" stroke=\"" << colour(c) << "\" stroke-width=\"" << width << "\"";
  if (dash) s << " stroke-dasharray=\"" << dash << "\"";
  return s.str();
}

}  // namespace

void SvgCanvas::line(double x1, double y1, double x2, double y2, Rgb c, double width,
                     const char* dash) {
  body_ << "<line x1=\"" << x1 << "\" y1=\"" << y1 << "\" x2=\"" << x2 << "\" y2=\"" << y2
        << "\"" << stroke(c, width, dash) << "/>\n";
}

void SvgCanvas::path(const std::vector<std::pair<double, double>>& points, Rgb c, double width,
                     const char* dash) {
  if (points.empty()) return;
  body_ << "<path d=\"";
  for (std::size_t i = 0; i < points.size(); ++i)
    body_ << (i == 0 ? "M" : " L") << points[i].first << " " << points[i].second;
  body_ << "\"" << stroke(c, width, dash) << " stroke-linejoin=\"round\"/>\n";
}

void SvgCanvas::polyline(const std::vector<std::pair<double, double>>& points, Rgb c,
                         double width, const char* dash) {
  if (points.empty()) return;
  body_ << "<polyline points=\"";
  for (std::size_t i = 0; i < points.size(); ++i)
    body_ << (i == 0 ? "" : " ") << points[i].first << "," << points[i].second;
  body_ << "\"" << stroke(c, width, dash) << "/>\n";
}

void SvgCanvas::circle(double x, double y, double r, Rgb c) {
  body_ << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"" << r << "\" fill=\""
        << colour(c) << "\"/>\n";
}

void SvgCanvas::begin_group(const std::string& id) { body_ << "<g id=\"" << id << "\">\n"; }

void SvgCanvas::end_group() { body_ << "</g>\n"; }

void SvgCanvas::begin_definition(const std::string& id) {
  body_ << "<defs>\n<g id=\"" << id << "\">\n";
}

void SvgCanvas::end_definition() { body_ << "</g>\n</defs>\n"; }

void SvgCanvas::use(const std::string& id, double x, double y, double scale) {
  body_ << "<use href=\"#" << id << "\" transform=\"translate(" << x << " " << y << ")";
  if (scale != 1) body_ << " scale(" << scale << ")";
  body_ << "\"/>\n";
}

std::string SvgCanvas::str() const {
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" "
      << (links_ ? "xmlns:xlink=\"http://www.w3.org/1999/xlink\" " : "")  // for png_image
      << "width=\"" << width_ << "\" height=\"" << height_ << "\" viewBox=\"0 0 " << width_ << " "
      << height_ << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << body_.str() << "</svg>\n";
  return out.str();
}

void SvgCanvas::save(const std::string& path) const { write_svg_file(path, str()); }

void write_svg_file(const std::string& path, const std::string& svg) {
  write_file_atomically(path, svg);
}

}  // namespace uwaga::apps
