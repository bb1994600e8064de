// The SVG pictures of attention: colours come from one scale shared by every map (a near-uniform
// head stays dark beside a sharp one), with a legend; colour images are drawn in colour; the
// token maps (uwaga-translate's cross-attention, uwaga-gpt's self-attention) hold one cell per
// weight in the mean and in every head, and weights that do not fit their labels are an error.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "apps/common/svg_canvas.h"
#include "apps/common/token_attention_svg.h"
#include "core/error.h"
#include "tests/support/occurrences.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using namespace uwaga::apps;
using Catch::Contains;
using uwaga::testing::TempDir;
using uwaga::testing::occurrences;

namespace {

const std::string kYellow = "fill=\"rgb(253,231,37)\"";  // viridis(1): the top of a scale

}  // namespace

TEST_CASE("svg: a shared colour scale keeps a near-uniform map dark", "[apps][svg]") {
  SvgCanvas own(100, 100), shared(100, 100);
  const std::vector<double> uniform = {0.26, 0.25, 0.25, 0.24};
  own.heatmap(0, 0, uniform, 2, 2, 10, 10);  // scaled to its own maximum
  shared.heatmap(0, 0, uniform, 2, 2, 10, 10, ColourScale{1.0});
  REQUIRE(occurrences(own.str(), kYellow) == 1);     // its largest weight drawn as bright as any
  REQUIRE(occurrences(shared.str(), kYellow) == 0);  // 0.26 of 1: dark
  REQUIRE(occurrences(shared.str(), "fill=\"rgb(58,85,139)\"") == 1);  // viridis(0.26), 1 cell
  REQUIRE(ColourScale{0.5}(0.5).r == 253);
  REQUIRE(ColourScale{0.5}(2.0).g == 231);  // clamped to the top
  REQUIRE(ColourScale{0.0}(0.3).r == 68);   // no scale: everything at the bottom
}

TEST_CASE("svg: colour images and the legend", "[apps][svg]") {
  SvgCanvas svg(300, 100);
  svg.rgb_image(0, 0, {1.0, 0.0, 0.0, 0.5, 0.0, 1.0}, 1, 2, 5);  // (3, 1, 2): red, then blue-green
  REQUIRE(occurrences(svg.str(), "fill=\"rgb(255,0,0)\"") == 1);
  REQUIRE(occurrences(svg.str(), "fill=\"rgb(0,128,255)\"") == 1);
  svg.colour_legend(0, 50, 200, ColourScale{0.8}, "attention weight");
  const std::string s = svg.str();
  for (const char* tick : {">0<", ">0.2<", ">0.4<", ">0.6<", ">0.8<"})
    REQUIRE(occurrences(s, tick) == 1);
  REQUIRE(occurrences(s, ">attention weight<") == 1);
}

TEST_CASE("svg: an embedded PNG is written in base64 and the page declares xlink",
          "[apps][svg]") {
  REQUIRE(occurrences(SvgCanvas(10, 10).str(), "xlink") == 0);  // only pages that embed declare it
  // RFC 4648's cases: whole groups of three bytes, then one or two left over and padded.
  const std::pair<std::string, std::string> cases[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
      {std::string("\xff\xfe\x00", 3), "//4A"}};  // high bits and a zero byte
  for (const auto& [bytes, digits] : cases) {
    SvgCanvas svg(10, 10);
    svg.png_image(1, 2, 30, 40, bytes);
    const std::string s = svg.str();
    INFO(s);
    REQUIRE(occurrences(s, "xmlns:xlink=\"http://www.w3.org/1999/xlink\"") == 1);
    REQUIRE(occurrences(s, "<image x=\"1\" y=\"2\" width=\"30\" height=\"40\"") == 1);
    REQUIRE(occurrences(s, "xlink:href=\"data:image/png;base64," + digits + "\"") == 1);
  }
}

TEST_CASE("svg: token attention maps the mean and every head on one scale", "[apps][svg]") {
  // Layer 1: head 1 spreads evenly over the 4 keys, head 2 puts everything on key 1.
  const std::vector<double> heads = {0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25,
                                     0.25, 0.25, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  TokenAttention a{{"estamos", "comiendo", "pan"}, {"we", "are", "eating", "bread"},
                   {Tensor::from_vector(heads, {2, 3, 4}, DType::Float64)}};
  const std::vector<double> mean = mean_attention(a);
  REQUIRE(mean.size() == 12);
  REQUIRE(mean[0] == Approx(0.625));
  REQUIRE(mean[1] == Approx(0.125));

  const TempDir dir("attention-svg");
  save_token_attention_svg(a, "a title", "rows: produced words", dir.file("a.svg"));
  std::ifstream in(dir.file("a.svg"));
  const std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A cell per weight: the mean (12) and 2 heads (24); 64 steps of legend; the background.
  REQUIRE(occurrences(svg, "<rect") == 12 + 24 + 64 + 1);
  // Only the sharp head's 3 weights of 1 reach the top of the shared scale: neither the even
  // head (0.25 each) nor the mean (at most 0.625) looks as bright.
  REQUIRE(occurrences(svg, kYellow) == 3);
  REQUIRE(occurrences(svg, "one scale for every map") == 1);
  REQUIRE(occurrences(svg, ">comiendo<") == 3);  // a row label on the mean and on each head

  a.layers.push_back(Tensor::zeros({2, 3, 3}, DType::Float64));
  REQUIRE_THROWS_WITH(mean_attention(a), Contains("(2, 3, 3); expected (h, 3, 4)"));
}
