#pragma once
// One list of JSON fields per configuration struct, used in both directions. The struct names
// each field once, in a static function that calls field(name, &Struct::member):
//
//   struct VitConfig {
//     std::int64_t image_size = 28;
//     std::int64_t dim = 64;
//     ...
//     template <class Field>
//     static void fields(Field&& field) {
//       field("image_size", &VitConfig::image_size);
//       field("dim", &VitConfig::dim);
//       ...
//     }
//   };
//
// fields_to_json(config) calls it with a `field` that writes each member into a JSON object,
// fields_from_json(object, config, what) with one that reads each back. A member that is itself
// such a struct (a run configuration's model) is a nested object; a member that writes and reads
// its own JSON text (to_json() and from_json(text), as Vocabulary does) is embedded as that JSON;
// a number (or a vector of numbers) is read only when it fits exactly: a whole number in range for
// an integer (8.0 is 8, 8.5 an error), a finite one for a float; any other member converts as
// nlohmann::json converts it.
// Errors name the field by its path:
//   "the run configuration: the field "model.dim" is missing"
//   "the run configuration: the field "model.dim" is 8.5: expected a whole number from
//    -9223372036854775808 to 9223372036854775807"
//   "the run configuration: the field "preset" is 3: [json.exception.type_error.302] type must
//    be string, but is number"
// Keys the list does not name are ignored. Object keys are sorted, so the order of the list does
// not change the JSON text.
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"

namespace uwaga {

// A struct with a field list, as above.
template <class T>
concept HasJsonFields = requires { T::fields([](const char*, auto) {}); };

// A type that converts itself to and from JSON text.
template <class T>
concept HasJsonText = requires(const T& value, const std::string& text) {
  { value.to_json() } -> std::convertible_to<std::string>;
  { T::from_json(text) } -> std::convertible_to<T>;
};

template <class Config>
nlohmann::json fields_to_json(const Config& config);

template <class T>
nlohmann::json field_to_json(const T& value) {
  if constexpr (HasJsonFields<T>) return fields_to_json(value);
  else if constexpr (HasJsonText<T>) return nlohmann::json::parse(value.to_json());
  else return value;
}

// The JSON object of `config`: {"name": value, ...} for each field in its list.
template <class Config>
nlohmann::json fields_to_json(const Config& config) {
  nlohmann::json object = nlohmann::json::object();
  Config::fields([&](const char* name, auto member) { object[name] = field_to_json(config.*member); });
  return object;
}

template <class Config>
void fields_from_json(const nlohmann::json& object, Config& config, const std::string& what,
                      const std::string& path = "");

// A number type (not bool), and a vector of them.
template <class T>
concept JsonNumber = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
template <class T>
struct IsNumberVector : std::false_type {};
template <JsonNumber U>
struct IsNumberVector<std::vector<U>> : std::true_type {};

// The number `value`, at `path`, into `out`, or an error when it does not fit. nlohmann's own
// conversion casts whatever number the JSON holds: 8.5 became 8 in an integer, 2^64 - 1 became -1
// in an int64, and 1e49 in an int64 was undefined behaviour.
template <JsonNumber T>
void number_from_json(const nlohmann::json& value, T& out, const std::string& what,
                      const std::string& path) {
  using Limits = std::numeric_limits<T>;
  auto refuse = [&](const std::string& expected) {
    fail(what, ": the field \"", path, "\" is ", json_brief(value), ": expected ", expected);
  };
  if constexpr (std::is_integral_v<T>) {
    const std::string range = "a whole number from " + std::to_string(Limits::min()) + " to " +
                              std::to_string(Limits::max());
    const auto max = static_cast<std::uint64_t>(Limits::max());
    if (value.is_number_unsigned()) {
      const auto v = value.get<std::uint64_t>();
      if (v > max) refuse(range);
      out = static_cast<T>(v);
    } else if (value.is_number_integer()) {
      const auto v = value.get<std::int64_t>();
      if (v < 0 ? !std::is_signed_v<T> || v < static_cast<std::int64_t>(Limits::min())
                : static_cast<std::uint64_t>(v) > max)
        refuse(range);
      out = static_cast<T>(v);
    } else if (value.is_number_float()) {  // 8.0 is 8; 8.5 and 1e49 fit no integer
      const double v = value.get<double>();
      if (!(v == std::trunc(v) && v >= static_cast<double>(Limits::min()) &&
            v < static_cast<double>(Limits::max()) + 1.0))
        refuse(range);
      out = static_cast<T>(v);
    } else {
      refuse(range);
    }
  } else {
    if (!value.is_number()) refuse("a number");
    const double v = value.get<double>();
    if (!std::isfinite(v) || std::fabs(v) > static_cast<double>(Limits::max()))
      refuse(sizeof(T) < sizeof(double) ? "a finite number within float's range"
                                        : "a finite number");
    out = static_cast<T>(v);
  }
}

// `value`, the field at `path` ("model.dim"), into `out`.
template <class T>
void field_from_json(const nlohmann::json& value, T& out, const std::string& what,
                     const std::string& path) {
  if constexpr (JsonNumber<T>) {
    number_from_json(value, out, what, path);
  } else if constexpr (IsNumberVector<T>::value) {
    if (!value.is_array())
      fail(what, ": the field \"", path, "\" is ", json_brief(value), ": expected an array");
    T items(value.size());
    for (std::size_t i = 0; i < items.size(); ++i)
      number_from_json(value[i], items[i], what, path + "[" + std::to_string(i) + "]");
    out = std::move(items);
  } else if constexpr (HasJsonFields<T>) {
    fields_from_json(value, out, what, path);
  } else if constexpr (HasJsonText<T>) {
    try {
      out = T::from_json(value.dump());  // parsed by parse_json_input: the nesting is bounded
    } catch (const Error& e) {
      fail(what, ": the field \"", path, "\": ", e.what());
    }
  } else {
    try {
      value.get_to(out);
    } catch (const nlohmann::json::exception& e) {
      fail(what, ": the field \"", path, "\" is ", json_brief(value), ": ", e.what());
    }
  }
}

// Reads each field in the list of `config` from `object`, which parse_json_input (or
// fields_to_json) made. `what` names the whole JSON in messages ("the run configuration"),
// `path` the object inside it ("model"; "" for the whole).
template <class Config>
void fields_from_json(const nlohmann::json& object, Config& config, const std::string& what,
                      const std::string& path) {
  if (!object.is_object()) {
    if (path.empty()) fail(what, " should be a JSON object, got ", json_brief(object));
    fail(what, ": the field \"", path, "\" should be a JSON object, got ", json_brief(object));
  }
  Config::fields([&](const char* name, auto member) {
    const std::string field = path.empty() ? name : path + "." + name;
    const auto it = object.find(name);
    if (it == object.end()) fail(what, ": the field \"", field, "\" is missing");
    field_from_json(*it, config.*member, what, field);
  });
}

}  // namespace uwaga
