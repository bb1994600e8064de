// JSON from outside uwaga: nesting is bounded while it is parsed, repeated keys are refused, and
// values in messages are brief and never printed recursively.
#include <catch2/catch.hpp>

#include <string>

#include "core/error.h"
#include "core/json_input.h"

using namespace uwaga;
using Catch::Contains;
using nlohmann::json;

namespace {
std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}
}  // namespace

TEST_CASE("parse_json_input: nesting is bounded at kMaxJsonDepth levels", "[core][json]") {
  REQUIRE(kMaxJsonDepth == 64);
  CHECK(parse_json_input(nested_arrays(64), "x").is_array());
  CHECK_THROWS_WITH(parse_json_input(nested_arrays(65), "the test text"),
                    Contains("the test text nests deeper than 64 levels"));
  // Objects count as levels too, and the limit holds however deep the text goes.
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += "{\"k\":";
  objects += "1" + std::string(65, '}');
  CHECK_THROWS_WITH(parse_json_input(objects, "x"), Contains("nests deeper than 64 levels"));
  CHECK_THROWS_WITH(parse_json_input(nested_arrays(1000000), "x"),
                    Contains("nests deeper than 64 levels"));
}

TEST_CASE("parse_json_input: invalid JSON and repeated keys are named", "[core][json]") {
  CHECK(parse_json_input(R"({"a": {"b": [1, 2]}, "c": "d"})", "x")["a"]["b"][1] == 2);
  CHECK_THROWS_WITH(parse_json_input("{\"a\": ", "the header"),
                    Contains("the header is not valid JSON: [json.exception.parse_error"));
  CHECK_THROWS_WITH(parse_json_input(R"({"a": 1, "a": 2})", "x"),
                    Contains("x repeats the key \"a\""));
  CHECK_THROWS_WITH(parse_json_input(R"({"a": {"b": 1, "b": 1}})", "x"),
                    Contains("repeats the key \"b\""));
  // The same key in different objects is fine.
  CHECK_NOTHROW(parse_json_input(R"({"a": {"b": 1}, "c": {"b": 2}})", "x"));
}

TEST_CASE("parse_json_input: skipped keys are read but not kept", "[core][json]") {
  // An object under a skipped key has keys of its own ("size"); they are not mistaken for
  // repeats of the keys around it, before or after.
  const std::string text = R"({"a": {"size": 0, "segmentation": {"counts": [1, 2], "size": [3, 4]},
                                      "b": 1},
                               "c": [{"segmentation": [[1, 2]], "x": 1}, {"x": 2}]})";
  const json parsed = parse_json_input(text, "x", {"segmentation"});
  CHECK(parsed["a"] == json::parse(R"({"size": 0, "b": 1})"));
  CHECK(parsed["c"] == json::parse(R"([{"x": 1}, {"x": 2}])"));
  CHECK(parse_json_input(text, "x")["c"][0]["segmentation"][0][1] == 2);
  // What is skipped is still read: its syntax and its nesting are checked.
  CHECK_THROWS_WITH(parse_json_input("{\"s\": " + nested_arrays(70) + "}", "x", {"s"}),
                    Contains("nests deeper than 64 levels"));
  CHECK_THROWS_WITH(parse_json_input(R"({"s": [1, 2,]})", "x", {"s"}), Contains("not valid JSON"));
  // And a repeated key after a skipped object is still found.
  CHECK_THROWS_WITH(parse_json_input(R"({"b": 1, "s": {"t": {}}, "b": 2})", "x", {"s"}),
                    Contains("repeats the key \"b\""));
}

TEST_CASE("json_brief: short, and nested values shown as [...] or {...}", "[core][json]") {
  CHECK(json_brief(json(7)) == "7");
  CHECK(json_brief(json("F16")) == "\"F16\"");
  CHECK(json_brief(json::parse("[1, [2, 3], [], {\"a\": 1}]")) == "[1, [...], [], {...}]");
  CHECK(json_brief(json::object()) == "{}");
  CHECK(json_brief(parse_json_input(nested_arrays(64), "x")) == "[[...]]");
  const std::string brief = json_brief(json(std::string(100000, 'A')));
  CHECK(brief.size() < 120);
  CHECK_THAT(brief, Contains("\"AAAA") && Contains("..."));
  CHECK(json_brief(json(std::vector<int>(100000, 1))).size() < 120);
}
