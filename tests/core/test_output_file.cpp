#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/output_file.h"
#include "core/safetensors.h"
#include "data/text/bpe_tokenizer.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_character_device(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

bool no_temporaries(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp") != std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE("an output replaces a regular file, or the file a link leads to", "[core][files]") {
  testing::TempDir dir("output-file");
  const std::string path = dir.file("a.svg");
  write_file_atomically(path, "first");
  write_file_atomically(path, "second");
  CHECK(contents(path) == "second");
  const std::string link = dir.file("link.svg");
  fs::create_symlink(path, link);
  write_file_atomically(link, "third");
  CHECK(fs::is_symlink(link));  // the link stays a link
  CHECK(contents(path) == "third");
  CHECK(no_temporaries(dir.str()));
}

TEST_CASE("an output never renames over a device node, a FIFO or a directory", "[core][files]") {
  // The device is a copy of /dev/null's node (major 1, minor 3) made in a temporary directory:
  // renaming over it would have turned it into a regular file, as it once did to /dev/null.
  testing::TempDir dir("output-file");
  const std::string null = dir.file("null");
  if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    WARN("cannot make a device node here (not root?): the character-device part is skipped");
  } else {
    write_file_atomically(null, "discarded");
    CHECK(is_character_device(null));
    CHECK_THROWS_WITH(save_safetensors(null, {{"w", Tensor::zeros({2})}}),
                      Contains(null) && Contains("is a character device"));
    CHECK(is_character_device(null));
    // A tokenizer saved into a directory whose encoder.json is a device writes through it.
    const std::string tok = dir.file("tok");
    fs::create_directory(tok);
    REQUIRE(::mknod((tok + "/encoder.json").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    BpeTokenizer::train("aaab", 1).save(tok);
    CHECK(is_character_device(tok + "/encoder.json"));
    CHECK(fs::is_regular_file(tok + "/vocab.bpe"));
  }
  CHECK(no_temporaries(dir.str()));
  // /dev/null itself, which every user may write to.
  write_file_atomically("/dev/null", "discarded");
  CHECK(is_character_device("/dev/null"));

  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(write_file_atomically(fifo, "x"),
                    Contains("cannot write: '" + fifo + "' is a FIFO (named pipe)"));
  CHECK_THROWS_WITH(save_safetensors(fifo, {{"w", Tensor::zeros({2})}}),
                    Contains("save_safetensors: '" + fifo + "' is a FIFO"));
  CHECK(fs::is_fifo(fifo));
  CHECK_THROWS_WITH(write_file_atomically(dir.str(), "x"), Contains("is a directory"));
  CHECK(no_temporaries(dir.str()));
}
