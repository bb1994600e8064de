#include "optim/checkpoint.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/graph.h"
#include "core/json_input.h"
#include "core/reduction.h"
#include "core/regular_file.h"
#include "core/safetensors.h"
#include "core/version.h"

namespace uwaga::optim {

namespace {

const std::string kModelPrefix = "model.";
const std::string kOptimPrefix = "optim.";

// File names and values in single quotes, as load_safetensors writes them.
std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool has_negative(const Tensor& t) {
  if (!t.is_floating()) return false;
  for (double v : t.to_vector())
    if (v < 0) return true;
  return false;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// %.17g: enough digits that the double reads back bit for bit.
std::string exact_double(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::int64_t parse_int(const std::map<std::string, std::string>& metadata, const char* key,
                       const std::string& where) {
  auto it = metadata.find(key);
  if (it == metadata.end()) fail(where, ": the metadata has no \"", key, "\"");
  const std::string& s = it->second;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < 0)
    fail(where, ": metadata \"", key, "\" must be a non-negative integer, got ", in_quotes(s));
  return value;
}

// The metadata of a checkpoint, checked and converted; `where` starts every error.
CheckpointInfo info_from_metadata(const std::map<std::string, std::string>& metadata,
                                  const std::string& where) {
  auto format = metadata.find("format");
  if (format == metadata.end())
    fail(where, ": not a uwaga checkpoint: its metadata has no \"format\" (expected ",
         in_quotes(kCheckpointFormat), "); a plain safetensors file?");
  if (format->second != kCheckpointFormat)
    fail(where, ": unsupported checkpoint format ", in_quotes(format->second), " (expected ",
         in_quotes(kCheckpointFormat), ")");

  CheckpointInfo info;
  info.step = parse_int(metadata, "step", where);
  info.epoch = parse_int(metadata, "epoch", where);
  info.batch_in_epoch = parse_int(metadata, "batch_in_epoch", where);
  info.epoch_finished = parse_int(metadata, "epoch_finished", where) != 0;
  // Each finished epoch took at least one step, as did each batch of the current one; and the
  // step count must leave room to count on (2^62 would overflow at the next step or product).
  if (info.step > kMaxSteps)
    fail(where, ": metadata \"step\" is ", info.step, ", more than the ", kMaxSteps,
         " a run can take");
  const std::int64_t epochs_done = info.epoch + (info.epoch_finished ? 1 : 0);
  if (epochs_done > info.step || info.batch_in_epoch > info.step)
    fail(where, ": metadata \"epoch\" ", info.epoch, " and \"batch_in_epoch\" ",
         info.batch_in_epoch, " do not fit \"step\" ", info.step,
         " (each epoch and batch is at least one step)");

  auto lr = metadata.find("lr");
  if (lr == metadata.end()) fail(where, ": the metadata has no \"lr\"");
  char* end = nullptr;
  errno = 0;
  info.lr = std::strtod(lr->second.c_str(), &end);
  // strtod also reads "nan", "inf" and "-1": no learning rate the trainer could resume with.
  if (lr->second.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(info.lr) ||
      info.lr < 0)
    fail(where, ": metadata \"lr\" must be a finite number >= 0, got ", in_quotes(lr->second));

  if (auto it = metadata.find("config"); it != metadata.end()) info.config = it->second;
  if (auto it = metadata.find("task_state"); it != metadata.end()) info.task_state = it->second;
  if (auto it = metadata.find("trainer_state"); it != metadata.end())
    info.trainer_state = it->second;
  return info;
}

// The "__metadata__" object of a safetensors file, reading only its header.
std::map<std::string, std::string> read_metadata(const std::string& path,
                                                 const std::string& where) {
  if (std::filesystem::is_directory(path)) fail(where, ": is a directory, not a checkpoint file");
  FilePtr file = open_regular_file(path, where);
  unsigned char length[8];
  if (std::fread(length, 1, 8, file.get()) != 8)
    fail(where, ": the file is shorter than the 8-byte header length — truncated, or not a "
         "safetensors file");
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length[i];
  constexpr std::uint64_t kMaxHeader = 100u << 20;  // the format's own limit is 100 MB
  if (header_size > kMaxHeader)
    fail(where, ": the header length ", header_size, " is implausible — not a safetensors file");
  std::string text(static_cast<std::size_t>(header_size), '\0');
  if (std::fread(text.data(), 1, text.size(), file.get()) != text.size())
    fail(where, ": the file ends inside its ", header_size, "-byte header — truncated");

  const nlohmann::json header = parse_json_input(text, where + ": the header");
  std::map<std::string, std::string> metadata;
  if (!header.is_object() || !header.contains("__metadata__")) return metadata;
  const auto& m = header["__metadata__"];
  if (!m.is_object()) fail(where, ": \"__metadata__\" must be an object of strings");
  for (const auto& [key, value] : m.items()) {
    if (!value.is_string()) fail(where, ": metadata entry \"", key, "\" must be a string");
    metadata[key] = value.get<std::string>();
  }
  check_metadata_checksums(metadata, where);
  return metadata;
}

// Parameters and buffers whose dtype differs from the checkpoint's:
// "fc.weight: checkpoint F64, model F32".
std::vector<std::string> dtype_mismatches(const nn::Module& model, const nn::StateDict& state) {
  std::vector<std::string> out;
  nn::NamedTensors named = model.named_parameters();  // in the model's order
  for (auto& buffer : model.named_buffers()) named.push_back(buffer);
  for (const auto& [name, p] : named) {
    auto it = state.find(name);
    if (it != state.end() && it->second.dtype() != p.dtype())
      out.push_back(name + ": checkpoint " + safetensors_dtype_name(it->second.dtype()) +
                    ", model " + safetensors_dtype_name(p.dtype()));
  }
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

}  // namespace

void save_checkpoint(const std::string& path, const nn::Module& model, const Optimizer* opt,
                     const CheckpointInfo& info) {
  const std::string where = "save_checkpoint: " + in_quotes(path);
  if (!info.config.empty()) {
    try {
      const nlohmann::json parsed = nlohmann::json::parse(info.config);
      (void)parsed;
    } catch (const nlohmann::json::exception& e) {
      fail(where, ": the config is not valid JSON (", e.what(), "): ", info.config);
    }
  }
  std::map<std::string, Tensor> tensors;
  // Parameters and buffers (BatchNorm's running statistics): a model without buffers writes
  // exactly the parameters, as before buffers existed.
  for (const auto& [name, t] : model.state_dict()) tensors[kModelPrefix + name] = t;
  if (opt)
    for (const auto& [key, t] : opt->state(Optimizer::StateAccess::shared))  // written at once
      tensors[kOptimPrefix + key] = t;

  std::map<std::string, std::string> metadata = {
      {"format", kCheckpointFormat},
      {"step", std::to_string(info.step)},
      {"epoch", std::to_string(info.epoch)},
      {"batch_in_epoch", std::to_string(info.batch_in_epoch)},
      {"epoch_finished", info.epoch_finished ? "1" : "0"},
      {"lr", exact_double(info.lr)},
      {"config", info.config},
      {"task_state", info.task_state},
      {"trainer_state", info.trainer_state},
      {"uwaga_version", version_string()},  // the code that wrote it; never read back
  };
  save_safetensors(path, tensors, metadata);
}

CheckpointInfo load_checkpoint(const std::string& path, nn::Module& model, Optimizer* opt) {
  const std::string where = "load_checkpoint: " + in_quotes(path);
  // Its errors name the file already. A bfloat16 tensor comes back as one, bit for bit.
  SafetensorsFile file = load_safetensors(path, Bf16Entries::as_bfloat16);
  CheckpointInfo info = info_from_metadata(file.metadata, where);

  nn::StateDict model_state;
  std::map<std::string, Tensor> optim_state;
  std::vector<std::string> foreign;
  for (auto& [name, t] : file.tensors) {
    if (starts_with(name, kModelPrefix)) model_state[name.substr(kModelPrefix.size())] = t;
    else if (starts_with(name, kOptimPrefix)) optim_state[name.substr(kOptimPrefix.size())] = t;
    else foreign.push_back(name);
  }
  file.tensors.clear();  // each tensor is held once: freed as soon as it has been loaded
  if (!foreign.empty())
    fail(where, ": tensors outside \"model.\" and \"optim.\" (", foreign.size(), "): ",
         join(foreign), ".");
  if (auto name = first_non_finite(model_state))
    fail(where, ": parameter '", *name, "' holds NaN or inf (saved from a run that diverged?)");
  // The optimizer's state matters as much: an inf in Adam's second moment freezes its parameter
  // for good, a NaN reaches the parameters at the next step.
  if (auto key = opt ? first_non_finite(optim_state) : std::nullopt)
    fail(where, ": optimizer state '", *key, "' holds NaN or inf (saved from a run that "
         "diverged?)");
  // A second moment is an average of squares: a negative one was edited or damaged, and would
  // surface steps later as "the loss went NaN" (the square root of a negative number).
  if (opt)
    for (const auto& [key, t] : optim_state)
      if (has_suffix(key, ".exp_avg_sq") && has_negative(t))
        fail(where, ": optimizer state '", key, "' holds a negative value, which a second moment "
             "(an average of squares) cannot");
  if (auto bad = dtype_mismatches(model, model_state); !bad.empty())
    fail(where, ": the checkpoint does not fit the model. Dtype mismatch (", bad.size(), "): ",
         join(bad), ".");

  // Both loads check every name and shape before they change anything, so a failed load leaves
  // the model and the optimizer as they were: the optimizer first (what it held before is kept to
  // put back should the model's load fail: little, for the fresh optimizer of a resumed run),
  // then the model. Each part of the file is let go of once loaded (GPT-2 small: the Adam
  // moments' 1 GB before the model's copy is made).
  std::map<std::string, Tensor> optim_before;
  if (opt) {
    try {
      if (optim_state.empty() && !opt->state(Optimizer::StateAccess::shared).empty())
        fail("the checkpoint holds no optimizer state (it was saved without an optimizer)");
      optim_before = opt->state();
      opt->load_state(optim_state);
    } catch (const Error& e) {
      fail(where, ": ", e.what());
    }
    optim_state.clear();
  }
  try {
    model.load_state_dict(model_state);
  } catch (const Error& e) {
    if (opt) opt->load_state(optim_before);
    fail(where, ": ", e.what());
  }
  return info;
}

bool all_finite(const Tensor& t) { return first_non_finite(t) < 0; }

DType checkpoint_dtype(const std::string& name) {
  const std::string count = "num_batches_tracked";
  const bool is_count =
      name == count || (name.size() > count.size() &&
                        name.compare(name.size() - count.size() - 1, std::string::npos,
                                     "." + count) == 0);
  return is_count ? DType::Int64 : DType::Float32;
}

void check_checkpoint_shapes(const std::string& path, const ParameterShapes& expected) {
  const std::string where = "load_checkpoint: " + in_quotes(path);
  if (std::filesystem::is_directory(path)) fail(where, ": is a directory, not a checkpoint file");
  const SafetensorsHeader header = read_safetensors_header(path);
  std::vector<std::string> problems;
  for (const auto& [name, shape] : expected) {
    auto it = header.tensors.find(kModelPrefix + name);
    if (it == header.tensors.end()) problems.push_back(name + ": missing");
    else if (it->second.shape != shape)
      problems.push_back(name + ": file " + shape_str(it->second.shape) + ", config " +
                         shape_str(shape));
    else if (it->second.dtype != checkpoint_dtype(name))
      problems.push_back(name + ": file " + safetensors_dtype_name(it->second.dtype) +
                         ", model " + safetensors_dtype_name(checkpoint_dtype(name)));
  }
  for (const auto& [name, entry] : header.tensors) {
    (void)entry;
    if (starts_with(name, kModelPrefix) && !expected.count(name.substr(kModelPrefix.size())))
      problems.push_back(name.substr(kModelPrefix.size()) + ": not in the model");
  }
  if (problems.empty()) return;
  const std::size_t shown = std::min<std::size_t>(problems.size(), 5);
  std::vector<std::string> first(problems.begin(), problems.begin() + static_cast<long>(shown));
  fail(where, ": its tensors do not match the model its own configuration describes (",
       problems.size(), " differ",
       shown < problems.size() ? ", the first " + std::to_string(shown) : std::string(), "): ",
       join(first), ". A damaged or hand-edited checkpoint; nothing was built from it.");
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  const std::string where = "read_checkpoint_info: " + in_quotes(path);
  return info_from_metadata(read_metadata(path, where), where);
}

std::string generator_state_to_string(const Generator::State& state) {
  std::uint64_t spare_bits = 0;
  static_assert(sizeof spare_bits == sizeof state.spare);
  std::memcpy(&spare_bits, &state.spare, sizeof spare_bits);
  std::ostringstream out;
  out << "xoshiro256** " << std::hex << state.s[0] << ' ' << state.s[1] << ' ' << state.s[2]
      << ' ' << state.s[3] << ' ' << (state.has_spare ? 1 : 0) << ' ' << spare_bits;
  return out.str();
}

Generator::State generator_state_from_string(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  auto bad = [&](const std::string& why) {
    fail("generator_state_from_string: ", why, " in ", in_quotes(text),
         " (expected \"xoshiro256** <s0> <s1> <s2> <s3> <has_spare> <spare bits>\", in hex)");
  };
  if (tokens.size() != 7) bad("expected 7 fields, got " + std::to_string(tokens.size()));
  if (tokens[0] != "xoshiro256**") bad("unknown generator " + in_quotes(tokens[0]));
  std::uint64_t v[6];
  for (int i = 0; i < 6; ++i) {
    const std::string& t = tokens[i + 1];
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v[i], 16);
    if (ec != std::errc() || end != t.data() + t.size())
      bad("field " + std::to_string(i + 2) + " (" + in_quotes(t) + ") is not a hexadecimal number");
  }
  if (v[4] > 1) bad("has_spare must be 0 or 1");
  // xoshiro256** maps the all-zero state to itself: every number after it would be 0.
  if ((v[0] | v[1] | v[2] | v[3]) == 0)
    bad("the all-zero state s0..s3, which xoshiro256** never leaves (every draw would be 0)");
  Generator::State state;
  for (int i = 0; i < 4; ++i) state.s[i] = v[i];
  state.has_spare = v[4] == 1;
  std::memcpy(&state.spare, &v[5], sizeof state.spare);
  return state;
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir) {
  // "<anything>.safetensors.tmp.<digits>.<digits>", as create_temporary in safetensors.cpp names
  // them, and "<anything>.svg.tmp.<digits>.<digits>", as the apps' write_svg_file does (the
  // training curves drawn into the run directory); nothing else is touched.
  auto is_temporary = [](const std::string& name) {
    std::size_t at = std::string::npos, length = 0;
    for (const std::string marker : {".safetensors.tmp.", ".svg.tmp."})
      if (const std::size_t i = name.rfind(marker); i != std::string::npos && i != 0)
        at = i, length = marker.size();
    if (at == std::string::npos) return false;
    const std::string rest = name.substr(at + length);  // "<pid>.<n>"
    const std::size_t dot = rest.find('.');
    auto digits = [](const std::string& s) {
      return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
    };
    return dot != std::string::npos && digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
  };
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code file_ec;
    if (is_temporary(name) && entry.is_regular_file(file_ec) &&
        std::filesystem::remove(entry.path(), file_ec))
      removed.push_back(name);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open ", in_quotes(path), " for reading: ", std::strerror(errno));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in.good() && !in.eof()) fail("cannot read ", in_quotes(path));
  return bytes.str();
}

namespace {

// A file holding `bytes` that has no name in any directory: an anonymous memory file
// (memfd_create), or where there is none a temporary file unlinked at once. A process killed
// while it reads the copy (kill -9 of one of several processes) leaves nothing behind.
int nameless_copy(const std::string& bytes, const std::string& path) {
  int fd = ::memfd_create("uwaga-checkpoint", MFD_CLOEXEC);
  if (fd < 0) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path();
    std::string name = (dir / "uwaga-checkpoint-XXXXXX").string();
    fd = ::mkstemp(name.data());
    if (fd < 0)
      fail("cannot create a temporary file in ", in_quotes(dir.string()), " to receive ",
           in_quotes(path), ": ", std::strerror(errno));
    ::unlink(name.c_str());
  }
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      fail("cannot keep the copy of ", in_quotes(path), " received from process 0: ",
           std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  return fd;
}

}  // namespace

CheckpointInfo load_checkpoint_bytes(const std::string& bytes, const std::string& path,
                                     nn::Module& model, Optimizer* opt) {
  const int fd = nameless_copy(bytes, path);
  const std::string name = "/proc/self/fd/" + std::to_string(fd);  // the file behind `fd`
  try {
    CheckpointInfo info = load_checkpoint(name, model, opt);
    ::close(fd);
    return info;
  } catch (const Error& e) {
    ::close(fd);
    std::string message = e.what();
    for (std::size_t at; (at = message.find(name)) != std::string::npos;)
      message.replace(at, name.size(), path);
    fail(message);
  }
}

}  // namespace uwaga::optim
