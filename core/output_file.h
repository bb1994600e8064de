#pragma once
// Files the programs write (pictures, pages, tokenizer files, checkpoints), and where they may go.
// A regular file, or a name not yet taken, is replaced atomically: the bytes go to a temporary
// beside it, which is then renamed over it, so a kill or a full disk midway leaves the previous
// file whole (a killed run's temporary is removed when a run resumes in that directory:
// optim::remove_stale_temporaries). A link is followed: the file it leads to is replaced, the link
// stays. A character device (/dev/null, /dev/stdout, a terminal) is written in place: renaming
// over it would replace the device itself, for every process on the machine. Anything else (a
// FIFO, a directory, a socket, a block device) is refused, named, before anything is written.
#include <string>

namespace uwaga {

struct OutputTarget {
  std::string path;             // where to write: `path` with its links resolved
  bool character_device = false;  // written in place, never renamed over
};

// Where an output named `path` goes; fails "<where>: '<path>' is a FIFO (named pipe); ..." for
// anything but a regular file, a new name or a character device.
OutputTarget output_target(const std::string& path, const std::string& where);

// Writes `bytes` to `path` as above. On failure throws uwaga::Error "cannot write '<path>':
// <reason>" and leaves no temporary behind.
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace uwaga
