// The attention explorer page (apps/common/attention_explorer.h): the weights, labels and image
// it carries are the ones it was given, nothing in a label can break out of its <script>, it asks
// nothing of the network, and weights that do not fit their labels are an error naming the family
// and the shapes. tests/apps/explorer_browser.sh checks the page in a browser.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include "apps/common/attention_explorer.h"
#include "core/error.h"
#include "core/shape_ops.h"
#include "tests/support/occurrences.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using namespace uwaga::apps;
using Catch::Contains;
using uwaga::testing::TempDir;
using uwaga::testing::occurrences;

namespace {

// Every row of A sums to 1: A (h, T, S) from softmax-like rows.
Tensor rows_of_weights(std::int64_t h, std::int64_t T, std::int64_t S, double shift) {
  std::vector<double> v;
  for (std::int64_t k = 0; k < h; ++k)
    for (std::int64_t t = 0; t < T; ++t) {
      double total = 0;
      for (std::int64_t s = 0; s < S; ++s) total += 1 + shift * k + t * s;
      for (std::int64_t s = 0; s < S; ++s) v.push_back((1 + shift * k + t * s) / total);
    }
  return Tensor::from_vector(v, {h, T, S}, DType::Float64);
}

AttentionExplorer two_layers() {
  AttentionExplorer e;
  e.title = "a <title> & more";
  e.notes = attention_explorer_basics();
  AttentionFamily f;
  f.id = "cross", f.name = "cross-attention";
  f.queries = {"estamos", "comiendo", "pan"};
  f.keys = {"we", "are", "eating", "bread"};
  f.layers = {rows_of_weights(2, 3, 4, 0.5), rows_of_weights(2, 3, 4, 2.0)};
  f.token_view = true;
  e.families.push_back(f);
  return e;
}

// The JSON the page's script reads.
nlohmann::json page_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"explorer-data\">\n";
  const auto start = page.find(open);
  REQUIRE(start != std::string::npos);
  const auto end = page.find("\n</script>", start);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(page.substr(start + open.size(), end - start - open.size()));
}

}  // namespace

TEST_CASE("explorer: the page carries the weights and labels it was given",
          "[apps][explorer]") {
  const AttentionExplorer e = two_layers();
  const std::string page = attention_explorer_html(e);
  const nlohmann::json data = page_data(page);
  REQUIRE(data["families"].size() == 1);
  const auto& f = data["families"][0];
  REQUIRE(f["id"] == "cross");
  REQUIRE(f["token_view"] == true);
  REQUIRE(f["queries"] == nlohmann::json({"estamos", "comiendo", "pan"}));
  REQUIRE(f["keys"] == nlohmann::json({"we", "are", "eating", "bread"}));
  REQUIRE(f["weights"].size() == 2);     // layers
  REQUIRE(f["weights"][1].size() == 2);  // heads
  for (std::size_t l = 0; l < 2; ++l) {
    const std::vector<double> A = e.families[0].layers[l].to_vector();
    for (std::size_t i = 0; i < A.size(); ++i)  // head k, row t, column s at k·T·S + t·S + s
      REQUIRE(f["weights"][l][i / 12][i % 12].get<double>() == Approx(A[i]).margin(5e-6));
  }
  REQUIRE(data["notes"].size() == 2);
  REQUIRE(data["image"].is_null());
  REQUIRE(page.find("<title>a &lt;title&gt; &amp; more</title>") != std::string::npos);
  REQUIRE(data["title"] == "a <title> & more");
}

TEST_CASE("explorer: the page is self-contained and a label cannot end its script",
          "[apps][explorer]") {
  AttentionExplorer e = two_layers();
  e.families[0].queries[0] = "</script><script>alert(1)</script><!--";
  e.subtitle = std::string("bad \xff byte");
  const std::string page = attention_explorer_html(e);
  // Only the page's own two <script> elements end; the label comes back as it was.
  REQUIRE(occurrences(page, "</script>") == 2);
  REQUIRE(occurrences(page, "<!--") == 0);
  const nlohmann::json data = page_data(page);
  REQUIRE(data["families"][0]["queries"][0] == "</script><script>alert(1)</script><!--");
  REQUIRE(data["subtitle"] == "bad \xEF\xBF\xBD byte");  // not UTF-8: U+FFFD
  // Nothing is fetched: no src= or href=, and the one "http" is the SVG namespace name.
  REQUIRE(occurrences(page, "src=") == 0);
  REQUIRE(occurrences(page, "href=") == 0);
  REQUIRE(occurrences(page, "http") == occurrences(page, "http://www.w3.org/2000/svg"));
}

// A ViT-like family over a 2 × 2 patch grid (class token first) and a 3-channel 2 × 4 image.
AttentionExplorer with_image() {
  AttentionExplorer e;
  AttentionFamily f;
  f.id = "self", f.name = "self-attention";
  f.queries = f.keys = {"class", "patch (1, 1)", "patch (1, 2)", "patch (2, 1)", "patch (2, 2)"};
  f.layers = {reshape(rows_of_weights(2, 5, 5, 1.0), {1, 2, 5, 5})};  // (1, h, T, S) is taken too
  e.families.push_back(f);
  ExplorerImage im;
  im.channels = 3, im.height = 2, im.width = 4;
  for (int i = 0; i < 24; ++i) im.pixels.push_back(i / 23.0);
  im.grid_rows = 2, im.grid_cols = 2, im.family = "self";
  im.queries = {0, 3}, im.query_names = {"the class token", "patch (2, 1)"};
  im.rollout = reshape(rows_of_weights(1, 5, 5, 0.0), {5, 5});  // R (T, S)
  e.image = im;
  return e;
}

TEST_CASE("explorer: an image with its patch grid and rollout", "[apps][explorer]") {
  const AttentionExplorer e = with_image();
  const nlohmann::json data = page_data(attention_explorer_html(e));
  const auto& im = data["image"];
  REQUIRE(im["channels"] == 3);
  REQUIRE(im["pixels"].size() == 24);
  REQUIRE(im["pixels"][0] == 0);
  REQUIRE(im["pixels"][23] == 255);  // in [0, 1] -> 0 … 255, colour planes kept
  REQUIRE(im["pixels"][8] == 89);    // 8/23 · 255 = 88.7
  REQUIRE(im["queries"] == nlohmann::json({0, 3}));
  REQUIRE(im["grid_cols"] == 2);
  const std::vector<double> R = e.image->rollout.to_vector();
  REQUIRE(im["rollout"].size() == 25);
  for (std::size_t i = 0; i < 25; ++i)
    REQUIRE(im["rollout"][i].get<double>() == Approx(R[i]).margin(5e-6));
  REQUIRE(data["families"][0]["weights"][0].size() == 2);
}

TEST_CASE("explorer: weights that do not fit their labels are an error naming them",
          "[apps][explorer]") {
  AttentionExplorer e = two_layers();
  e.families[0].layers[1] = rows_of_weights(2, 3, 3, 1.0);
  REQUIRE_THROWS_WITH(attention_explorer_html(e),
                      Contains("family 'cross' layer 2: weights (2, 3, 3) should be (2, 3, 4) "
                               "for 3 queries and 4 keys"));
  e = two_layers();
  e.families[0].layers[1] = rows_of_weights(3, 3, 4, 1.0);  // a layer with another head count
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("should be (2, 3, 4)"));
  e = two_layers();
  e.families[0].layers[0] = Tensor();
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("weights (none)"));
  e = two_layers();
  e.families[0].layers.clear();
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("has 0 layers"));
  e = two_layers();
  e.families[0].id = "two words";
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("family id 'two words'"));
  e = two_layers();
  e.families.push_back(e.families[0]);
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("two families have the id 'cross'"));
  e = two_layers();
  e.families[0].layers[0] = Tensor::full({2, 3, 4}, std::nan(""), DType::Float64);
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("not finite"));
  e.families.clear();
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("no attention to show"));
}

TEST_CASE("explorer: an image that does not fit is an error naming it", "[apps][explorer]") {
  AttentionExplorer e = with_image();
  e.image->pixels.pop_back();
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("3x2x4 (channels x height x width) "
                                                           "with 23 values"));
  e = with_image();
  e.image->grid_cols = 3;  // 6 patches from key 1 need 7 keys
  REQUIRE_THROWS_WITH(attention_explorer_html(e),
                      Contains("a 2x3 patch grid from key 1 does not fit family 'self' with 5 keys"));
  e = with_image();
  e.image->family = "cross";
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("names family 'cross'"));
  e = with_image();
  e.image->queries = {0, 5};
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("image query 5 is outside"));
  e = with_image();
  e.image->query_names.pop_back();
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("a name for each"));
  e = with_image();
  e.image->rollout = Tensor::zeros({4, 5});
  REQUIRE_THROWS_WITH(attention_explorer_html(e), Contains("the rollout (4, 5) should be (5, 5)"));
}

TEST_CASE("explorer: characters as labels a reader can see", "[apps][explorer]") {
  REQUIRE(visible_character('a') == "a");
  REQUIRE(visible_character(' ') == "\xE2\x90\xA3");   // ␣
  REQUIRE(visible_character('\n') == "\xE2\x86\xB5");  // ↵
  REQUIRE(visible_character('\x1b') == "\\x1B");
  REQUIRE(visible_character('\xc3') == "\\xC3");  // a byte of a UTF-8 character, alone
}

TEST_CASE("explorer: save writes the page and names a path it cannot write",
          "[apps][explorer]") {
  const TempDir dir("explorer");
  const std::string path = dir.file("page.html");
  save_attention_explorer(two_layers(), path);
  std::ifstream in(path);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(page == attention_explorer_html(two_layers()));
  const std::string nowhere = dir.file("no/such/dir/page.html");
  REQUIRE_THROWS_WITH(save_attention_explorer(two_layers(), nowhere),
                      Contains("cannot write '" + nowhere + "'"));
}
