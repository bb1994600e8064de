#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>

#include "core/regular_file.h"
#include "core/safetensors.h"
#include "data/text/char_corpus.h"
#include "optim/checkpoint.h"
#include "optim/jsonl_log.h"
#include "tests/support/temp_dir.h"

using namespace uwaga;
using Catch::Contains;

TEST_CASE("inputs that are not regular files are refused without blocking", "[core][files]") {
  // Opening a FIFO for reading waits for a writer: without the check each call below would hang.
  testing::TempDir dir("regular-file");
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(open_regular_file(fifo, "x"), Contains("x: is a FIFO (named pipe), not a regular file"));
  CHECK_THROWS_WITH(load_safetensors(fifo), Contains("is a FIFO (named pipe), not a regular file"));
  CHECK_THROWS_WITH(read_safetensors_header(fifo), Contains("pipe"));
  CHECK_THROWS_WITH(optim::read_checkpoint_info(fifo), Contains("is a FIFO"));
  CHECK_THROWS_WITH(read_text_file(fifo), Contains("the text file '" + fifo + "': is a FIFO"));
  CHECK_THROWS_WITH(read_text_file(dir.str()), Contains("a directory"));
  CHECK_THROWS_WITH(read_text_file("/dev/zero"), Contains("is a character device"));
  CHECK_THROWS_WITH(read_text_file(dir.file("missing")), Contains("No such file"));
  CHECK_THROWS_WITH(optim::JsonlLog(fifo), Contains("the log '" + fifo + "' is a FIFO"));
}

TEST_CASE("read_regular_file refuses a file larger than its limit", "[core][files]") {
  testing::TempDir dir("regular-file");
  std::ofstream(dir.file("a.txt")) << "0123456789";
  CHECK(read_regular_file(dir.file("a.txt"), 10, "a") == "0123456789");
  CHECK_THROWS_WITH(read_regular_file(dir.file("a.txt"), 9, "a"),
                    Contains("a: holds 10 bytes, more than the 9 read into memory at most"));
}
