#include "core/json_input.h"

#include <set>
#include <vector>

#include "core/error.h"

namespace uwaga {

using nlohmann::json;

nlohmann::json parse_json_input(const std::string& text, const std::string& what) {
  // The parser calls back at each event with the number of arrays and objects around it.
  std::vector<std::set<std::string>> keys_per_object;  // the keys seen, innermost object last
  std::string duplicate;
  auto callback = [&](int depth, json::parse_event_t event, json& value) {
    const bool opens = event == json::parse_event_t::object_start ||
                       event == json::parse_event_t::array_start;
    if (opens && depth >= kMaxJsonDepth) fail(what, " nests deeper than ", kMaxJsonDepth, " levels");
    if (event == json::parse_event_t::object_start) keys_per_object.emplace_back();
    else if (event == json::parse_event_t::object_end) keys_per_object.pop_back();
    else if (event == json::parse_event_t::key && !keys_per_object.empty() &&
             !keys_per_object.back().insert(value.get<std::string>()).second && duplicate.empty())
      duplicate = value.get<std::string>();
    return true;
  };
  json parsed;
  try {
    parsed = json::parse(text, callback);
  } catch (const json::exception& e) {
    fail(what, " is not valid JSON: ", e.what());
  }
  if (!duplicate.empty()) fail(what, " repeats the key \"", duplicate, "\"");
  return parsed;
}

std::string json_brief(const nlohmann::json& value) {
  constexpr std::size_t kLimit = 100;
  auto cut = [&](std::string s) {
    if (s.size() > kLimit) s = s.substr(0, kLimit) + "...";
    return s;
  };
  if (value.is_object()) return value.empty() ? "{}" : "{...}";
  if (!value.is_array()) return cut(value.dump());  // not nested: dump() does not recurse
  std::string out = "[";
  for (const json& item : value) {
    if (out.size() > 1) out += ", ";
    if (out.size() > kLimit) return out + "...]";
    out += item.is_array() ? (item.empty() ? "[]" : "[...]") : json_brief(item);
  }
  return out + "]";
}

}  // namespace uwaga
