// The run configurations as JSON text (what a checkpoint's "config" holds): uwaga-vit's,
// uwaga-translate's and uwaga-gpt's from_json, and the shapes its model declares once it
// is accepted. A config accepted by from_json must round-trip through to_json.
#include <cstdlib>

#include "apps/gpt/gpt_checkpoint.h"
#include "apps/translate/translate_checkpoint.h"
#include "apps/vit/vit_checkpoint.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  uwaga::fuzz::expect_error_or_success([&] {
    const auto run = uwaga::apps::VitRunConfig::from_json(text);
    if (uwaga::apps::VitRunConfig::from_json(run.to_json()).to_json() != run.to_json())
      std::abort();
    uwaga::apps::declared_model_shapes<uwaga::nn::VisionTransformer>(run.model);
  });
  uwaga::fuzz::expect_error_or_success([&] {
    const auto run = uwaga::apps::TranslateRunConfig::from_json(text);
    if (uwaga::apps::TranslateRunConfig::from_json(run.to_json()).to_json() != run.to_json())
      std::abort();
    uwaga::apps::declared_model_shapes<uwaga::nn::Seq2SeqTransformer>(run.model);
  });
  uwaga::fuzz::expect_error_or_success([&] {
    const auto run = uwaga::apps::GptRunConfig::from_json(text);
    if (uwaga::apps::GptRunConfig::from_json(run.to_json()).to_json() != run.to_json())
      std::abort();
    uwaga::apps::declared_model_shapes<uwaga::nn::Gpt>(run.model);
  });
  return 0;
}
