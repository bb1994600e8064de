// Configuration structs list their JSON fields once (core/json_fields.h): the list writes the
// JSON and reads it back, nested structs are nested objects, and errors name the field's path.
#include <catch2/catch.hpp>

#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/json_fields.h"

using namespace uwaga;
using Catch::Contains;

namespace {

struct Inner {
  std::int64_t dim = 8;
  std::string name = "inner";

  template <class Field>
  static void fields(Field&& field) {
    field("dim", &Inner::dim);
    field("name", &Inner::name);
  }
};

// Writes and reads its own JSON text, as Vocabulary does.
struct Words {
  std::vector<std::string> words;
  std::string to_json() const { return nlohmann::json{{"words", words}}.dump(); }
  static Words from_json(const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.contains("words")) fail("Words::from_json: no words");
    return {j["words"].get<std::vector<std::string>>()};
  }
};

struct Outer {
  double lr = 0.5;
  bool flag = true;
  std::uint64_t seed = 3;
  std::vector<float> mean = {0.25f};
  Inner inner;
  Words words{{"a", "b"}};

  template <class Field>
  static void fields(Field&& field) {
    field("lr", &Outer::lr);
    field("flag", &Outer::flag);
    field("seed", &Outer::seed);
    field("mean", &Outer::mean);
    field("inner", &Outer::inner);
    field("words", &Outer::words);
  }
};

}  // namespace

TEST_CASE("json fields: one list writes the JSON and reads it back", "[core][json]") {
  Outer outer;
  outer.inner.dim = 16;
  const nlohmann::json j = fields_to_json(outer);
  CHECK(j.dump() == R"({"flag":true,"inner":{"dim":16,"name":"inner"},"lr":0.5,"mean":[0.25],)"
                    R"("seed":3,"words":{"words":["a","b"]}})");
  Outer back;
  back.inner.dim = 0;
  back.words = {};
  fields_from_json(parse_json_input(j.dump(), "x"), back, "x");
  CHECK(fields_to_json(back) == j);
  // Keys the list does not name are ignored.
  nlohmann::json extra = j;
  extra["comment"] = "hello";
  CHECK_NOTHROW(fields_from_json(extra, back, "x"));
}

TEST_CASE("json fields: errors name the field's path", "[core][json]") {
  const nlohmann::json good = fields_to_json(Outer{});
  Outer out;
  nlohmann::json j = good;
  j["inner"].erase("dim");
  CHECK_THROWS_WITH(fields_from_json(j, out, "the config"),
                    Contains("the config: the field \"inner.dim\" is missing"));
  j = good;
  j["flag"] = 1;
  CHECK_THROWS_WITH(fields_from_json(j, out, "the config"),
                    Contains("the config: the field \"flag\" is 1: ") &&
                        Contains("type must be boolean, but is number"));
  j = good;
  j["inner"] = "x";
  CHECK_THROWS_WITH(fields_from_json(j, out, "the config"),
                    Contains("the config: the field \"inner\" should be a JSON object, got \"x\""));
  j = good;
  j["words"] = nlohmann::json::object();
  CHECK_THROWS_WITH(fields_from_json(j, out, "the config"),
                    Contains("the config: the field \"words\": Words::from_json: no words"));
  CHECK_THROWS_WITH(fields_from_json(nlohmann::json::array(), out, "the config"),
                    Contains("the config should be a JSON object, got []"));
}

// Before: nlohmann cast whatever number it held: "dim": 8.5 read as 8, 2^64 - 1 as -1, and 1e49
// into an int64 was undefined behaviour (found by tests/fuzz fuzz_run_config); "mean": [1e300]
// read as inf.
TEST_CASE("json fields: numbers are read exactly or refused", "[core][json]") {
  const nlohmann::json good = fields_to_json(Outer{});
  auto read = [&](const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = good;
    if (key == "dim") j["inner"]["dim"] = value;
    else j[key] = value;
    Outer out;
    fields_from_json(parse_json_input(j.dump(), "the config"), out, "the config");
    return out;
  };
  const std::string int64_range =
      "expected a whole number from -9223372036854775808 to 9223372036854775807";
  CHECK(read("dim", -7).inner.dim == -7);
  CHECK(read("dim", 9223372036854775807ll).inner.dim == 9223372036854775807ll);
  CHECK_THROWS_WITH(read("dim", 8.5), Contains("the field \"inner.dim\" is 8.5: " + int64_range));
  CHECK(read("dim", 8.0).inner.dim == 8);
  CHECK(read("dim", -9.223372036854775808e18).inner.dim ==
        std::numeric_limits<std::int64_t>::min());
  CHECK_THROWS_WITH(read("dim", 9.223372036854775808e18), Contains(int64_range));  // 2^63
  CHECK_THROWS_WITH(read("dim", 8.77e48), Contains(int64_range));
  CHECK_THROWS_WITH(read("dim", 9223372036854775808ull), Contains(int64_range));
  CHECK_THROWS_WITH(read("dim", "8"), Contains(int64_range));
  CHECK(read("seed", 18446744073709551615ull).seed == 18446744073709551615ull);
  CHECK_THROWS_WITH(read("seed", -1), Contains("the field \"seed\" is -1: expected a whole "
                                               "number from 0 to 18446744073709551615"));
  CHECK(read("lr", 3).lr == 3.0);
  CHECK(read("lr", -1e300).lr == -1e300);
  CHECK_THROWS_WITH(read("lr", true), Contains("the field \"lr\" is true: expected a number"));
  CHECK(read("mean", {1, 0.5}).mean == std::vector<float>{1.0f, 0.5f});
  CHECK_THROWS_WITH(read("mean", {0.5, 1e300}),
                    Contains("the field \"mean[1]\" is 1e+300: expected a finite number within "
                             "float's range"));
  CHECK_THROWS_WITH(read("mean", {"x"}),
                    Contains("the field \"mean[0]\" is \"x\": expected a number"));
  CHECK_THROWS_WITH(read("mean", 0.5), Contains("the field \"mean\" is 0.5: expected an array"));
}
