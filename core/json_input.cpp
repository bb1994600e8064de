#include "core/json_input.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace uwaga {

using nlohmann::json;

namespace {

// Builds the JSON value from the parser's events (nlohmann's SAX interface), checking as it goes.
// nlohmann's own parse with a callback would do the checks too, but after every object or array
// that closes it scans its parent for discarded values: quadratic in the length of an array of
// objects, minutes for COCO's 262,000 annotations.
class CheckedBuilder : public json::json_sax_t {
 public:
  CheckedBuilder(json& root, const std::string& what, const std::vector<std::string>& skipped_keys)
      : root_(root), what_(what), skipped_keys_(skipped_keys) {}

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& key) override {
    if (skipping_ > 0) return true;
    if (std::find(skipped_keys_.begin(), skipped_keys_.end(), key) != skipped_keys_.end()) {
      skip_next_ = true;
      return true;
    }
    json& object = *open_.back();
    if (object.contains(key)) fail(what_, " repeats the key \"", key, "\"");
    slot_ = &object[key];
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    fail(what_, " is not valid JSON: ", e.what());
  }

 private:
  // A value goes to the root, to the end of the innermost array, or to the slot of the key read
  // last; nowhere while a skipped value is read. Returns where it went.
  json* place(json&& value) {
    if (skipping_ > 0) return nullptr;
    if (skip_next_) {
      skip_next_ = false;
      return nullptr;
    }
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    *slot_ = std::move(value);
    return slot_;
  }
  template <class V>
  bool put(V&& value) {
    place(json(std::forward<V>(value)));
    return true;
  }
  bool open(json&& container) {
    if (depth_ >= kMaxJsonDepth) fail(what_, " nests deeper than ", kMaxJsonDepth, " levels");
    ++depth_;
    if (skipping_ > 0 || skip_next_) {
      ++skipping_;  // this container and everything in it
      skip_next_ = false;
      return true;
    }
    open_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    --depth_;
    if (skipping_ > 0) --skipping_;
    else open_.pop_back();
    return true;
  }

  json& root_;
  const std::string& what_;
  const std::vector<std::string>& skipped_keys_;
  int depth_ = 0;             // arrays and objects open around the parser
  std::vector<json*> open_;   // the ones being built, innermost last
  json* slot_ = nullptr;      // the value of the key read last
  int skipping_ = 0;          // > 0 inside a skipped value: how many containers deep
  bool skip_next_ = false;    // a skipped key was read: its value is not kept
};

}  // namespace

nlohmann::json parse_json_input(const std::string& text, const std::string& what,
                                const std::vector<std::string>& skipped_keys) {
  json parsed;
  CheckedBuilder builder(parsed, what, skipped_keys);
  json::sax_parse(text, &builder);
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
