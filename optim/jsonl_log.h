#pragma once
// JsonlLog: a run's log.jsonl, one JSON object per line, appended across resumes and flushed
// after every record, so a crash loses nothing written. Every write and flush is checked: a full
// disk or a file-size limit is an Error naming the file, not a log that silently stops. A log
// whose last line was cut (the process killed mid-record, the disk full) is cut back to its last
// whole line when reopened, so the next record starts a line of its own; note() says so.
#include <cstdio>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace uwaga::optim {

class JsonlLog {
 public:
  explicit JsonlLog(const std::string& path);  // "": a log that writes nothing
  ~JsonlLog();
  JsonlLog(const JsonlLog&) = delete;
  JsonlLog& operator=(const JsonlLog&) = delete;

  void write(const nlohmann::json& record);
  // What opening the log repaired, as one line ("" when nothing): for the run to print.
  const std::string& note() const { return note_; }

 private:
  std::string path_;
  std::FILE* out_ = nullptr;
  std::string note_;
};

}  // namespace uwaga::optim
