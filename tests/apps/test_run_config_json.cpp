// The run configurations of uwaga-vit and uwaga-translate as JSON, as they travel in a
// checkpoint's metadata: the text is what existing checkpoints hold, a round trip changes
// nothing, errors name the field, and a crafted configuration is an error, not a crash.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <tuple>

#include "apps/gpt/gpt_run_config.h"
#include "apps/pose/pose_run_config.h"
#include "apps/translate/translate_run_config.h"
#include "apps/vit/vit_run_config.h"
#include "core/error.h"
#include "core/random.h"
#include "nn/vision_transformer.h"

using namespace uwaga;
using namespace uwaga::apps;
using Catch::Contains;

namespace {

// A run of the "mnist-tiny" preset as a checkpoint holds it: with the dataset's statistics.
VitRunConfig vit_run() {
  VitRunConfig run = vit_preset("mnist-tiny");
  run.mean = {0.1307f};
  run.std = {0.3081f};
  run.class_names = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  return run;
}

// A run of the "tiny" preset with (small) vocabularies.
TranslateRunConfig translate_run() {
  TranslateRunConfig run = translate_preset("tiny");
  TranslationCorpus corpus;
  corpus.train = {{"we are eating bread", "estamos comiendo pan"}, {"i eat", "como"}};
  build_vocabularies(run, corpus);
  return run;
}

// A character run of uwaga-gpt's "smoke" preset, as a checkpoint holds it.
GptRunConfig gpt_char_run_config() {
  GptRunConfig run = gpt_preset("smoke");
  run.text = "/data/text.txt";
  run.vocab = CharVocabulary::build("hello");
  run.model.vocab = run.vocab.size();
  return run;
}

// `json` with the value of `key` replaced by `value` (JSON text).
std::string with_value(const std::string& json, const std::string& key, const std::string& value) {
  nlohmann::json j = nlohmann::json::parse(json);
  j[key] = "@value@";
  std::string text = j.dump();
  return text.replace(text.find("\"@value@\""), 9, value);
}

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// A setting added later: every program's run configuration, saved without `key` (as runs were
// before it existed, when they trained with `value`), reads back as the one written with it.
void require_every_program_reads_without(const std::string& key, const nlohmann::json& value) {
  auto without = [&](const std::string& json) {
    nlohmann::json j = nlohmann::json::parse(json);
    REQUIRE(j.at(key) == value);
    j.erase(key);
    return j.dump();
  };
  VitRunConfig vit = vit_preset("mnist-tiny");
  vit.mean = {0.5f}, vit.std = {0.25f};
  CHECK(VitRunConfig::from_json(without(vit.to_json())).to_json() == vit.to_json());
  const TranslateRunConfig translate = translate_run();
  CHECK(TranslateRunConfig::from_json(without(translate.to_json())).to_json() ==
        translate.to_json());
  const PoseRunConfig pose = pose_preset("smoke");
  CHECK(PoseRunConfig::from_json(without(pose.to_json())).to_json() == pose.to_json());
  const GptRunConfig gpt = gpt_char_run_config();
  CHECK(GptRunConfig::from_json(without(gpt.to_json())).to_json() == gpt.to_json());
}

}  // namespace

TEST_CASE("run configuration JSON: the presets' text is what checkpoints hold", "[apps][json]") {
  // Keys, values and their (sorted) order: a change here makes existing checkpoints unreadable
  // or their configurations differ from a new run's.
  CHECK(vit_preset("mnist-tiny").to_json() ==
        R"({"augment":true,"batch_size":128,"class_names":[],"clip_norm":1.0,"crop_scale":0.0,)"
        R"("cutmix":0.0,"dataset":"mnist","ema":0.0,"epochs":15,"erase":0.0,"grad_accum":1,)"
        R"("label_smoothing":0.0,"lr":0.001,"mean":[],"min_lr":1e-05,"mix_probability":1.0,)"
        R"("mixup":0.0,"model":{"attention_dropout":0.0,"cct_details":false,"channels":1,)"
        R"("depth":6,"dim":64,)"
        R"("drop_path":0.0,"dropout":0.0,)"
        R"("heads":4,"image_size":28,"mlp_dim":128,"num_classes":10,"patch":7,"pool":"cls",)"
        R"("stem":"patch"},)"
        R"("policy":"none","precision":"fp32","preset":"mnist-tiny","randaugment_magnitude":9,)"
        R"("randaugment_ops":2,)"
        R"("seed":0,)"
        R"("std":[],"train_size":0,"warmup":469,"weight_decay":0.05})");
  CHECK(translate_preset("tiny").to_json() ==
        R"({"batch_size":32,"clip_norm":1.0,"corpus":{"seed":0,"test_fraction":0.1,)"
        R"("test_size":100,"train_size":2000,"valid_fraction":0.1,"valid_size":100},"epochs":2,)"
        R"("eval_size":50,"format":"uwaga-translate-1","grad_accum":1,"label_smoothing":0.0,)"
        R"("lr":0.003,)"
        R"("min_lr":1e-05,"model":{"decoder_layers":1,"dim":32,"dropout":0.0,)"
        R"("encoder_layers":1,"heads":2,"max_length":32,"mlp_dim":64,"pad_id":0,)"
        R"("positions":"sinusoidal","src_vocab":0,"tgt_vocab":0},"precision":"fp32",)"
        R"("preset":"tiny","seed":0,)"
        R"("src_vocab":{"tokens":["<pad>","<bos>","<eos>","<unk>"]},)"
        R"("tgt_vocab":{"tokens":["<pad>","<bos>","<eos>","<unk>"]},"warmup":10,)"
        R"("weight_decay":0.0})");
}

TEST_CASE("run configuration JSON: a run saved before --grad-accum trained without it, in every "
          "program", "[apps][json]") {
  require_every_program_reads_without("grad_accum", 1);
  VitRunConfig vit = vit_preset("mnist-tiny");
  vit.mean = {0.5f}, vit.std = {0.25f};
  vit.grad_accum = 4;  // and a saved one is read back
  CHECK(VitRunConfig::from_json(vit.to_json()).grad_accum == 4);
  vit.grad_accum = 0;
  CHECK_THROWS_WITH(vit.validate(), Contains("--grad-accum must be from 1 to 65,536, got 0"));
}

TEST_CASE("run configuration JSON: a run saved before --precision trained in fp32, in every "
          "program", "[apps][json]") {
  require_every_program_reads_without("precision", "fp32");
  VitRunConfig vit = vit_preset("mnist-tiny");
  vit.mean = {0.5f}, vit.std = {0.25f};
  vit.precision = "bf16";  // and a saved one is read back
  CHECK(VitRunConfig::from_json(vit.to_json()).precision == "bf16");
  vit.precision = "fp16";
  CHECK_THROWS_WITH(vit.validate(), Contains("--precision must be fp32 or bf16, got 'fp16'"));
}

TEST_CASE("run configuration JSON: from_json reads back what to_json wrote", "[apps][json]") {
  VitRunConfig vit = vit_run();
  vit.seed = 18446744073709551615ull;
  vit.lr = 1.0 / 3;
  vit.train_size = 2048;
  const VitRunConfig vit_back = VitRunConfig::from_json(vit.to_json());
  CHECK(vit_back.to_json() == vit.to_json());
  CHECK(vit_back.seed == vit.seed);
  CHECK(vit_back.mean == vit.mean);
  CHECK(vit_back.model.patch == 7);

  TranslateRunConfig translate = translate_run();
  translate.corpus.seed = 77;
  translate.model.dropout = 0.1;
  const TranslateRunConfig translate_back = TranslateRunConfig::from_json(translate.to_json());
  CHECK(translate_back.to_json() == translate.to_json());
  CHECK(translate_back.corpus.seed == 77);
  CHECK(translate_back.tgt_vocab == translate.tgt_vocab);
}

TEST_CASE("run configuration JSON: the log's copy of a BPE run gives the tables' sizes, the "
          "checkpoint's copy the tables", "[apps][json]") {
  GptRunConfig run = gpt_char_run_config();
  run.tokenizer = "bpe:40";
  run.bpe = BpeTokenizer::train("the cat sat on the mat; the cat ate the rat. " +
                                     std::string(200, 'a'), 40);
  run.model.vocab = run.bpe.size();
  const nlohmann::json full = nlohmann::json::parse(run.to_json());
  nlohmann::json logged = nlohmann::json::parse(run.to_log_json());
  REQUIRE(run.bpe.merge_count() > 10);
  CHECK(logged["bpe"] == nlohmann::json{{"tokens", run.bpe.size()},
                                        {"merges", run.bpe.merge_count()},
                                        {"tables", "in the checkpoint's configuration"}});
  CHECK(GptRunConfig::from_json(run.to_json()).bpe == run.bpe);
  logged["bpe"] = full["bpe"];  // everything else as the checkpoint holds it
  CHECK(logged == full);
  // A character run has no tables to leave out.
  CHECK(gpt_char_run_config().to_log_json() == gpt_char_run_config().to_json());
}

TEST_CASE("run configuration JSON: a checkpoint from before --train-size trains on all images",
          "[apps][json]") {
  nlohmann::json j = nlohmann::json::parse(vit_run().to_json());
  j.erase("train_size");
  CHECK(VitRunConfig::from_json(j.dump()).train_size == 0);
}

// Before: a std of 1e-45 loaded, and eval printed loss NaN with exit status 0.
TEST_CASE("run configuration JSON: the image statistics must be those of pixels in [0, 1]",
          "[apps][json]") {
  for (const auto& [key, value, message] :
       {std::tuple{"std", 1e-45, "a channel standard deviation of 1.4013e-45"},
        std::tuple{"std", 3.0, "a channel standard deviation of 3"},
        std::tuple{"mean", -0.5, "a channel mean of -0.5"}}) {
    nlohmann::json j = nlohmann::json::parse(vit_run().to_json());
    j[key] = {value};
    CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()), Catch::Contains(message));
  }
}

TEST_CASE("run configuration JSON: a checkpoint from before drop path, dropout, attention "
          "dropout or the conv stem has none", "[apps][json]") {
  nlohmann::json j = nlohmann::json::parse(vit_run().to_json());
  j["model"]["drop_path"] = 0.1;
  j["model"]["dropout"] = 0.2;
  j["model"]["attention_dropout"] = 0.05;
  j["model"]["patch"] = 4;
  j["model"]["stem"] = "conv";
  j["model"]["pool"] = "seq";
  const VitRunConfig saved = VitRunConfig::from_json(j.dump());
  CHECK(saved.model.drop_path == 0.1);
  CHECK(saved.model.dropout == 0.2);
  CHECK(saved.model.attention_dropout == 0.05);
  CHECK(saved.model.stem == "conv");
  CHECK(saved.model.pool == "seq");
  nlohmann::json cct = j;
  cct["model"]["stem"] = "cct", cct["model"]["cct_details"] = true;
  CHECK(VitRunConfig::from_json(cct.dump()).model.cct_details);
  j["model"].erase("drop_path");
  j["model"].erase("dropout");
  j["model"].erase("attention_dropout");
  j["model"].erase("stem");
  j["model"].erase("pool");
  j["model"].erase("cct_details");
  const VitRunConfig old = VitRunConfig::from_json(j.dump());
  CHECK(!old.model.cct_details);  // uwaga's model, as before the field
  CHECK(old.model.drop_path == 0.0);
  CHECK(old.model.dropout == 0.0);
  CHECK(old.model.attention_dropout == 0.0);
  CHECK(old.model.stem == "patch");
  CHECK(old.model.pool == "cls");
  j["model"]["stem"] = "pixels";
  CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()), Contains("stem must be patch, conv or cct"));
  j["model"]["stem"] = "cct";
  j["model"]["pool"] = "max";
  CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()), Contains("pool must be cls or seq"));
}

TEST_CASE("run configuration JSON: a checkpoint from before the augmentation recipe has none of it",
          "[apps][json]") {
  // The text of mnist-tiny's configuration as checkpoints held it then.
  const std::string before =
      R"({"augment":true,"batch_size":128,"class_names":[],"clip_norm":1.0,"dataset":"mnist",)"
      R"("epochs":15,"label_smoothing":0.0,"lr":0.001,"mean":[0.5],"min_lr":1e-05,"model":)"
      R"({"channels":1,"depth":6,"dim":64,"heads":4,"image_size":28,"mlp_dim":128,)"
      R"("num_classes":10,"patch":7},"preset":"mnist-tiny","seed":0,"std":[0.25],)"
      R"("train_size":0,"warmup":469,"weight_decay":0.05})";
  VitRunConfig tiny = vit_preset("mnist-tiny");
  tiny.mean = {0.5f}, tiny.std = {0.25f};
  CHECK(VitRunConfig::from_json(before).to_json() == tiny.to_json());
  VitRunConfig run = vit_preset("cifar10-vit");
  run.mean = {0.5f, 0.5f, 0.5f}, run.std = {0.25f, 0.25f, 0.25f};
  CHECK(describe_recipe(run) == "shift 4, flip, randaugment 2x9; drop path 0.1; ema 0.9995");
  run.mixup = 0.8, run.cutmix = 1.0, run.ema = 0.999, run.model.dropout = 0.1;
  CHECK(describe_recipe(VitRunConfig::from_json(run.to_json())) ==
        "shift 4, flip, randaugment 2x9; mixup 0.8; cutmix 1; drop path 0.1; dropout 0.1; ema 0.999");
  run.policy = "augmix";
  CHECK_THROWS_WITH(run.validate(), Contains("'augmix' is not a policy"));
  run.policy = "autoaugment";
  CHECK(describe_recipe(VitRunConfig::from_json(run.to_json()))
            .starts_with("autoaugment, shift 4, flip"));
  run.policy = "none";
  run.ema = 1.0;
  CHECK_THROWS_WITH(run.validate(), Contains("--ema must be in [0, 1)"));
  run.ema = 0.0;
  run.model.dropout = -0.1;
  CHECK_THROWS_WITH(run.validate(), Contains("--dropout must be in [0, 1)"));
  run.model.dropout = 0.0;
  run.model.attention_dropout = 1.0;
  CHECK_THROWS_WITH(run.validate(), Contains("--attention-dropout must be in [0, 1)"));
  run.model.attention_dropout = 0.0;
  run.model.cct_details = true;  // cifar10-vit's stem cct, pool seq
  run.validate();
  run.model.pool = "cls";
  CHECK_THROWS_WITH(run.validate(),
                    Contains("--cct-details needs --stem cct --pool seq, got --stem cct --pool cls"));
}

TEST_CASE("run configuration: fashion-mnist-best is fashion-mnist on a conv stem's 4x4 patches, with erasing",
          "[apps][json]") {
  VitRunConfig best = vit_preset("fashion-mnist-best");
  best.mean = {0.5f}, best.std = {0.25f};
  CHECK(describe_recipe(best) == "shift 1, flip, erase 0.25");
  Generator gen(0);
  CHECK(nn::VisionTransformer(best.model, gen).num_parameters() == 830090);  // README.md's figure
  nlohmann::json b = nlohmann::json::parse(best.to_json());
  nlohmann::json plain = nlohmann::json::parse(vit_preset("fashion-mnist").to_json());
  CHECK(b["model"]["patch"] == 4);
  CHECK(b["model"]["stem"] == "conv");
  CHECK(b["erase"] == 0.25);
  for (nlohmann::json* j : {&b, &plain}) {  // and nothing else differs
    for (const char* key : {"preset", "erase", "mean", "std"}) j->erase(key);
    for (const char* key : {"patch", "stem"}) (*j)["model"].erase(key);
  }
  CHECK(b == plain);
}

TEST_CASE("run configuration: cifar10-vit is CCT-4/3x2's shape with the recipe", "[apps][json]") {
  VitRunConfig run = vit_preset("cifar10-vit");
  run.mean = {0.5f, 0.5f, 0.5f}, run.std = {0.25f, 0.25f, 0.25f};
  CHECK(describe_recipe(run) == "shift 4, flip, randaugment 2x9; drop path 0.1; ema 0.9995");
  CHECK(run.epochs == 170);  // the schedule README.md's 86.20 % was measured with
  CHECK(run.warmup == 1950);
  Generator gen(0);
  CHECK(nn::VisionTransformer(run.model, gen).num_parameters() == 500171);  // README.md's figure
  CHECK(run.model.to_json() ==
        R"({"attention_dropout":0.0,"cct_details":false,"channels":3,"depth":4,"dim":128,)"
        R"("drop_path":0.1,)"
        R"("dropout":0.0,"heads":2,)"
        R"("image_size":32,"mlp_dim":128,"num_classes":10,"patch":4,"pool":"seq","stem":"cct"})");
}

TEST_CASE("run configuration: cifar10-cct is cifar10-vit's model under CCT's own recipe",
          "[apps][json]") {
  VitRunConfig cct = vit_preset("cifar10-cct");
  cct.mean = {0.5f, 0.5f, 0.5f}, cct.std = {0.25f, 0.25f, 0.25f};
  CHECK(describe_recipe(cct) == "autoaugment, shift 4, flip; drop path 0.1; attention dropout 0.1");
  CHECK(training_augment(cct).policy == AugmentPolicy::auto_augment);
  // examples/main.py's: AdamW lr 5e-4, weight decay 3e-2, batch 128, 200 epochs, 5 of them
  // warm-up (390 steps each: the last partial batch is dropped), cosine to 0, no clipping,
  // label smoothing 0.1; no moving average.
  CHECK(cct.epochs == 200);
  CHECK(cct.batch_size == 128);
  CHECK(cct.lr == 5e-4);
  CHECK(cct.min_lr == 0.0);
  CHECK(cct.weight_decay == 3e-2);
  CHECK(cct.warmup == 5 * (50000 / 128));
  CHECK(cct.clip_norm == 0.0);
  CHECK(cct.label_smoothing == 0.1);
  CHECK(cct.ema == 0.0);
  CHECK(cct.augment);
  CHECK(cct.model.drop_path == 0.1);
  CHECK(cct.model.attention_dropout == 0.1);  // cct.py's default, on the softmax's weights
  // The model is CCT-4/3x2 exactly: 482,123 parameters, cifar10-vit's 500,171 less the Linear
  // after the tokenizer and the qkv biases (16,512 + 1,536). Without cct_details and attention
  // dropout it is cifar10-vit's.
  CHECK(cct.model.cct_details);
  VitRunConfig vit = vit_preset("cifar10-vit");
  nn::VitConfig without = cct.model;
  without.attention_dropout = 0.0, without.cct_details = false;
  CHECK(without.to_json() == vit.model.to_json());
  Generator gen(0);
  CHECK(nn::VisionTransformer(cct.model, gen).num_parameters() == 482123);  // README.md's figure
  // Read back from a checkpoint's text, and nothing differs from cifar10-vit but the recipe,
  // attention dropout and cct_details.
  CHECK(VitRunConfig::from_json(cct.to_json()).to_json() == cct.to_json());
  vit.mean = cct.mean, vit.std = cct.std;
  nlohmann::json a = nlohmann::json::parse(cct.to_json()), b = nlohmann::json::parse(vit.to_json());
  for (nlohmann::json* j : {&a, &b})
    for (const char* key : {"preset", "epochs", "lr", "min_lr", "weight_decay", "clip_norm",
                            "ema", "policy"})
      j->erase(key);
  for (const char* key : {"attention_dropout", "cct_details"})
    a["model"].erase(key), b["model"].erase(key);
  CHECK(a == b);
  const std::vector<std::string> names = vit_preset_names();
  CHECK(std::find(names.begin(), names.end(), "cifar10-cct") != names.end());
}

TEST_CASE("run configuration: cifar10-cct2 is CCT-2/3x2, cifar10-cct with two blocks",
          "[apps][json]") {
  const VitRunConfig cct = vit_preset("cifar10-cct"), cct2 = vit_preset("cifar10-cct2");
  CHECK(cct2.preset == "cifar10-cct2");
  CHECK(cct2.model.depth == 2);
  Generator gen(0);
  // Two blocks of 99,200 parameters fewer than CCT-4/3x2's 482,123: the paper's 0.28 M.
  CHECK(nn::VisionTransformer(cct2.model, gen).num_parameters() == 283723);
  nlohmann::json a = nlohmann::json::parse(cct.to_json()), b = nlohmann::json::parse(cct2.to_json());
  for (nlohmann::json* j : {&a, &b}) {
    j->erase("preset");
    (*j)["model"].erase("depth");
  }
  CHECK(a == b);  // the recipe and the rest of the model are cifar10-cct's
  const std::vector<std::string> names = vit_preset_names();
  CHECK(std::find(names.begin(), names.end(), "cifar10-cct2") != names.end());
}

TEST_CASE("run configuration JSON: errors name the field", "[apps][json]") {
  const std::string vit = vit_run().to_json();
  nlohmann::json j = nlohmann::json::parse(vit);
  j.erase("epochs");
  CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()),
                    Contains("the checkpoint's run configuration: the field \"epochs\" is missing"));
  j = nlohmann::json::parse(vit);
  j["model"].erase("dim");
  CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()),
                    Contains("the field \"model.dim\" is missing"));
  j = nlohmann::json::parse(vit);
  j["model"]["dim"] = "64";
  CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()),
                    Contains("the field \"model.dim\" is \"64\": expected a whole number"));
  CHECK_THROWS_WITH(VitRunConfig::from_json(with_value(vit, "mean", "[\"a\"]")),
                    Contains("the field \"mean[0]\" is \"a\": expected a number"));
  CHECK_THROWS_WITH(VitRunConfig::from_json(with_value(vit, "preset", "3")),
                    Contains("the field \"preset\" is 3: ") &&
                        Contains("type must be string, but is number"));
  CHECK_THROWS_WITH(VitRunConfig::from_json(with_value(vit, "model", "7")),
                    Contains("the field \"model\" should be a JSON object, got 7"));
  CHECK_THROWS_WITH(VitRunConfig::from_json("[1, 2]"),
                    Contains("the checkpoint's run configuration should be a JSON object"));
  CHECK_THROWS_WITH(VitRunConfig::from_json("{\"preset\": "),
                    Contains("the checkpoint's run configuration is not valid JSON"));

  const std::string translate = translate_run().to_json();
  j = nlohmann::json::parse(translate);
  j["corpus"]["seed"] = nlohmann::json::array();
  CHECK_THROWS_WITH(TranslateRunConfig::from_json(j.dump()),
                    Contains("the run configuration: the field \"corpus.seed\" is []"));
  j = nlohmann::json::parse(translate);
  j["src_vocab"]["tokens"][2] = "x";
  CHECK_THROWS_WITH(TranslateRunConfig::from_json(j.dump()),
                    Contains("the field \"src_vocab\"") && Contains("token 2 is 'x'"));
  j = nlohmann::json::parse(translate);
  j.erase("format");
  CHECK_THROWS_WITH(TranslateRunConfig::from_json(j.dump()),
                    Contains("no \"format\": \"uwaga-translate-1\""));
}

TEST_CASE("run configuration JSON: a value nested 100,000 levels deep is an error, not a crash",
          "[apps][json]") {
  // Found by fuzzing: such a configuration (a 200 KB checkpoint) overflowed the stack, as
  // from_json printed the nested value with the recursive json::dump() to read it again.
  const std::string deep = nested_arrays(100000);
  const std::string vit = vit_run().to_json();
  const nlohmann::json vit_fields = nlohmann::json::parse(vit);
  for (const auto& [key, value] : vit_fields.items()) {
    INFO("vit: " << key);
    CHECK_THROWS_AS(VitRunConfig::from_json(with_value(vit, key, deep)), Error);
    CHECK_THROWS_WITH(VitRunConfig::from_json(with_value(vit, key, deep)),
                      Contains("nests deeper than 64 levels"));
  }
  const std::string translate = translate_run().to_json();
  const nlohmann::json translate_fields = nlohmann::json::parse(translate);
  for (const auto& [key, value] : translate_fields.items()) {
    INFO("translate: " << key);
    CHECK_THROWS_AS(TranslateRunConfig::from_json(with_value(translate, key, deep)), Error);
    CHECK_THROWS_WITH(TranslateRunConfig::from_json(with_value(translate, key, deep)),
                      Contains("nests deeper than 64 levels"));
  }
  CHECK_THROWS_WITH(VitRunConfig::from_json(deep), Contains("nests deeper than 64 levels"));
  CHECK_THROWS_WITH(TranslateRunConfig::from_json(deep), Contains("nests deeper than 64 levels"));
}

// Before: only the flags were checked. A translate checkpoint whose corpus.test_size was 800,000
// translated for hours in `eval`; a ViT's epochs were read unchecked.
TEST_CASE("run configuration JSON: the limits of a new run hold for a checkpoint's values",
          "[apps][json]") {
  nlohmann::json j = nlohmann::json::parse(translate_run().to_json());
  j["corpus"]["test_size"] = 800000;
  CHECK_THROWS_WITH(TranslateRunConfig::from_json(j.dump()),
                    Contains("--valid-size and --test-size may be at most 100000 sentences, got "
                             "100 and 800000"));
  j = nlohmann::json::parse(translate_run().to_json());
  j["epochs"] = 2000000;
  CHECK_THROWS_WITH(TranslateRunConfig::from_json(j.dump()),
                    Contains("--epochs must be from 1 to 1,000,000, got 2000000"));
  j = nlohmann::json::parse(vit_run().to_json());
  j["epochs"] = 2000000;
  CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()), Contains("--epochs must be from 1"));
  j = nlohmann::json::parse(vit_run().to_json());
  j["train_size"] = -1;
  CHECK_THROWS_WITH(VitRunConfig::from_json(j.dump()), Contains("--train-size must be >= 0"));

  // Nothing bounded the steps of an epoch: 10^6 epochs of 10^18 steps overflow the step count.
  GptRunConfig gpt = gpt_char_run_config();
  REQUIRE(GptRunConfig::from_json(gpt.to_json()).to_json() == gpt.to_json());
  gpt.steps_per_epoch = 2'000'000'000;
  CHECK_THROWS_WITH(gpt.validate(),
                    Contains("--steps-per-epoch must be from 1 to 1,000,000,000, got 2000000000"));
  CHECK_THROWS_WITH(GptRunConfig::from_json(gpt.to_json()), Contains("--steps-per-epoch"));
}

// Before: "WarmupCosineLr: floor 1 is above base 0.001", naming neither flag.
TEST_CASE("run configuration: --min-lr above --lr names both flags", "[apps][json]") {
  VitRunConfig vit = vit_run();
  vit.min_lr = 1;
  CHECK_THROWS_WITH(vit.validate(),
                    Contains("--min-lr 1 is above --lr 0.001: the learning rate decays from --lr "
                             "down to --min-lr"));
  TranslateRunConfig translate = translate_run();
  translate.min_lr = translate.lr;  // a constant rate is fine
  CHECK_NOTHROW(translate.validate());
  GptRunConfig gpt = gpt_char_run_config();
  gpt.min_lr = 1;
  CHECK_THROWS_WITH(GptRunConfig::from_json(gpt.to_json()),
                    Contains("--min-lr 1 is above --lr 0.003"));
}
