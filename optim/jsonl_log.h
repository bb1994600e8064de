#pragma once
// JsonlLog: a run's log.jsonl, one JSON object per line, appended across resumes and flushed
// after every record, so a crash loses nothing written.
#include <fstream>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace uwaga::optim {

class JsonlLog {
 public:
  explicit JsonlLog(const std::string& path);  // "": a log that writes nothing
  void write(const nlohmann::json& record);

 private:
  std::ofstream out_;
};

}  // namespace uwaga::optim
