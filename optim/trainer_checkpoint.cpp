#include "optim/trainer_checkpoint.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_input.h"

namespace uwaga::optim {

void save_checkpoint_saying(const std::string& path, const nn::Module& model, const Optimizer& opt,
                            const CheckpointInfo& info,
                            const std::function<void(const std::string&)>& say) {
  double values = 0;
  for (const Tensor& p : model.parameters()) values += static_cast<double>(p.numel());
  const bool large = values >= 80e6;
  const auto begun = std::chrono::steady_clock::now();
  if (large) say("writing " + path + " ...");
  save_checkpoint(path, model, &opt, info);
  if (!large) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
  char line[100];
  std::snprintf(line, sizeof line, "written: %.2f GB in %.1f s",
                static_cast<double>(std::filesystem::file_size(path)) / 1e9, seconds);
  say(line);
}

CheckpointInfo load_checkpoint_on_every_process(const std::string& checkpoint, nn::Module& model,
                                                Optimizer& opt, GradientReduction& processes) {
  const bool root = processes.rank() == 0;
  auto fail_together = [&](const std::string& error) {
    if (const std::string first = processes.first_error(error); !first.empty()) fail(first);
  };
  std::string error, bytes;
  if (root && !std::filesystem::exists(checkpoint))
    error = "Trainer: cannot resume: there is no checkpoint at '" + checkpoint +
            "' (start without resume first)";
  else if (root && processes.size() > 1)
    bytes = read_file_bytes(checkpoint);
  fail_together(error);
  processes.broadcast(bytes);
  CheckpointInfo info;
  try {
    info = root ? load_checkpoint(checkpoint, model, &opt)
                : load_checkpoint_bytes(bytes, checkpoint, model, &opt);
  } catch (const Error& e) {
    error = e.what();
  }
  fail_together(error);
  return info;
}

std::string non_finite_state(const nn::Module& model, const Optimizer& opt) {
  if (auto name = first_non_finite(model.named_parameters()))
    return "parameter '" + *name + "' holds NaN or inf";
  if (auto name = first_non_finite(model.named_buffers()))
    return "buffer '" + *name + "' holds NaN or inf";
  if (auto key = first_non_finite(opt.state(Optimizer::StateAccess::shared)))  // read, not kept
    return "optimizer state '" + *key + "' holds NaN or inf";
  return "";
}

std::string TrainerState::to_json() const {
  nlohmann::json j = {{"epoch", epoch.to_json()}, {"processes", processes}};
  if (dropout_seeds) j["dropout_seeds"] = generator_state_to_string(*dropout_seeds);
  return j.dump();
}

TrainerState TrainerState::from_checkpoint(const CheckpointInfo& info,
                                           const std::string& checkpoint) {
  TrainerState state;
  std::string dropout_seeds = info.task_state;
  if (!info.trainer_state.empty()) {
    try {
      const nlohmann::json j = nlohmann::json::parse(info.trainer_state);
      state.epoch = Meter::from_json(j.at("epoch"));
      if (j.contains("dropout_seeds")) dropout_seeds = j.at("dropout_seeds");
      if (j.contains("processes")) {
        // A count of processes, read only when it is one (a cast of 1e49 is undefined).
        const nlohmann::json& n = j.at("processes");
        if (!n.is_number_unsigned() || n.get<std::uint64_t>() > 1u << 20)
          fail("\"processes\" is ", json_brief(n), ", not a number of processes");
        state.processes = n.get<int>();
      }
    } catch (const nlohmann::json::exception& e) {
      fail("Trainer: cannot resume from '", checkpoint, "': its trainer_state is damaged (",
           e.what(), ")");
    } catch (const Error& e) {
      fail("Trainer: cannot resume from '", checkpoint, "': its trainer_state is damaged (",
           e.what(), ")");
    }
  }
  if (!dropout_seeds.empty()) {
    try {
      state.dropout_seeds = generator_state_from_string(dropout_seeds);
    } catch (const Error& e) {
      fail("Trainer: cannot resume from '", checkpoint, "': its dropout seeds are damaged (",
           e.what(), ")");
    }
  }
  return state;
}

}  // namespace uwaga::optim
