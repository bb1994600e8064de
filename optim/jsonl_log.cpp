#include "optim/jsonl_log.h"

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace uwaga::optim {

JsonlLog::JsonlLog(const std::string& path) {
  if (path.empty()) return;
  out_.open(path, std::ios::app);
  if (!out_) fail("Trainer: cannot open the log '", path, "' for appending");
}

void JsonlLog::write(const nlohmann::json& record) {
  if (!out_.is_open()) return;
  out_ << record.dump() << '\n';
  out_.flush();
}

}  // namespace uwaga::optim
