#pragma once
// Input files that must be regular files. A FIFO blocks forever on open or read, /dev/zero or
// /dev/urandom never end, a directory cannot be read: each is refused with a one-line error naming
// the file and what it is, before anything blocks or grows.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace uwaga {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// "a FIFO", "a directory", "a character device", ... for the file type in st_mode.
std::string file_kind(unsigned st_mode);

// Opens `path` for reading in binary mode when it is a regular file (following symlinks); else
// fails with "<where>: is a FIFO (named pipe), not a regular file" (or a directory, a device...)
// or "<where>: cannot open: <reason>". `where` names the file ("load_safetensors: 'x.st'").
// Opening does not block on a FIFO.
FilePtr open_regular_file(const std::string& path, const std::string& where);

// The whole regular file, refused ("<where>: holds N bytes, more than the M read into memory at
// most") when it holds more than max_bytes.
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes,
                              const std::string& where);

}  // namespace uwaga
