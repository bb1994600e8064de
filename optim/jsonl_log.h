#pragma once
// JsonlLog: a run's log.jsonl, one JSON object per line, appended across resumes and handed to
// the kernel with one write() per record, so a crash of the process loses nothing written. Every
// write is checked: a full disk or a file-size limit is an Error naming the file, not a log that
// silently stops, and the part of the record that did fit is cut off again, so the log still
// ends with a whole line. A log whose last line was cut anyway (the process killed or the
// machine stopped mid-record) is cut back to its last whole line when reopened, so the next
// record starts a line of its own; note() says so.
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
  int fd_ = -1;
  long long size_ = 0;  // bytes of whole records: where a failed write is cut back to
  std::string note_;
};

}  // namespace uwaga::optim
