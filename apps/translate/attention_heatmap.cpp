#include "apps/translate/attention_heatmap.h"

#include <algorithm>
#include <sstream>

namespace uwaga::apps {

std::vector<double> CrossAttention::average() const { return mean_attention(tokens()); }

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
  const std::size_t heads = a.layers.empty() ? 0 : static_cast<std::size_t>(a.layers[0].size(0));
  std::ostringstream subtitle;
  subtitle << "cross-attention, average over " << a.layers.size() << " layers x " << heads
           << " heads (rows: produced words, columns: source words)";
  save_token_attention_svg(a.tokens(), title, subtitle.str(), path);
}

}  // namespace uwaga::apps
