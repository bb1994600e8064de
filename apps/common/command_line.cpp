#include "apps/common/command_line.h"

#include <iostream>

#include "apps/common/thread_policy.h"
#include "core/error.h"

namespace uwaga::apps {

int run_modes(const char* program, const char* usage, const std::vector<Mode>& modes, int argc,
              char** argv) {
  choose_openmp_wait_policy(argv);
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cout << usage;
    return argc < 2 ? 2 : 0;
  }
  const std::string mode = argv[1];
  try {
    for (const Mode& m : modes)
      if (mode == m.name) return m.run(argc - 1, argv + 1);
    std::string names;
    for (std::size_t i = 0; i < modes.size(); ++i)
      names += std::string(i == 0 ? "" : i + 1 == modes.size() ? " or " : ", ") + modes[i].name;
    std::cerr << program << ": unknown mode '" << mode << "'; expected " << names
              << " (see --help)\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << program << " " << mode << ": " << e.what() << " (see --help)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": unexpected error: " << e.what() << "\n";
    return 1;
  }
}

bool wants_help(const cxxopts::Options& o, const cxxopts::ParseResult& r) {
  if (!r.count("help")) return false;
  std::cout << o.help() << "\n";
  return true;
}

void reject_unexpected_arguments(const cxxopts::ParseResult& r, const char* mode) {
  if (!r.unmatched().empty()) fail(mode, ": unexpected argument '", r.unmatched()[0], "'");
}

}  // namespace uwaga::apps
