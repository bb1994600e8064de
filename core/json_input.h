#pragma once
// JSON that comes into uwaga from outside — a safetensors header, the run configuration in a
// checkpoint's metadata, a vocabulary — read defensively. nlohmann::json parses without
// recursion, but its dump(), comparisons and copies recurse once per level of nesting: a crafted
// file nesting arrays 100,000 levels deep (a 200 KB file) would overflow the stack in whatever
// touched the value next, often the error message about it. So such input is refused while it is
// parsed, and messages show values with json_brief, which neither recurses nor prints more than
// about 100 characters.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace uwaga {

// The deepest nesting accepted. uwaga's own files nest three levels (a run configuration's
// vocabulary, a safetensors tensor's shape).
constexpr int kMaxJsonDepth = 64;

// Parses `text`, named by `what` in messages ("load_safetensors: 'x.safetensors': the header").
// Throws uwaga::Error
//   "<what> is not valid JSON: <the parser's message>"
//   "<what> nests deeper than 64 levels"
//   "<what> repeats the key "dim""   (nlohmann::json would silently keep the last value)
// Values under a key in `skipped_keys`, at any depth, are read (and their nesting checked) but not
// kept, nor checked for repeated keys: the COCO keypoints reader skips "segmentation", the
// polygons that are most of the file.
nlohmann::json parse_json_input(const std::string& text, const std::string& what,
                                const std::vector<std::string>& skipped_keys = {});

// A value for an error message, never longer than about 100 characters: a number or a string as
// it is, an array element by element with anything nested inside shown as [...] or {...}, an
// object as {...}.
std::string json_brief(const nlohmann::json& value);

}  // namespace uwaga
