#include "apps/common/command_line.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "apps/common/printable_text.h"
#include "apps/common/thread_policy.h"
#include "core/error.h"
#include "core/version.h"
#include "optim/gradient_reduction.h"

namespace uwaga::apps {
namespace {

std::string typed_program;  // argv[0], set by run_modes

// cxxopts says "Argument 'abc' failed to parse" without the flag. Finds the flag that took the
// value ("--epochs abc" or "--epochs=abc") so the message can name it; "" when none did.
std::string flag_given(const std::string& value, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos && arg.substr(eq + 1) == value)
      return arg.substr(0, eq);
    if (arg.rfind("-", 0) == 0 && eq == std::string::npos && i + 1 < argc && argv[i + 1] == value)
      return arg;
  }
  return "";
}

// The text between cxxopts' quotes (‘…’ in UTF-8, or '…' where it is built without Unicode).
std::string quoted_value(const std::string& message) {
  for (const auto& [open, close] : {std::pair<std::string, std::string>{"\u2018", "\u2019"},
                                    std::pair<std::string, std::string>{"'", "'"}}) {
    const std::size_t begin = message.find(open);
    if (begin == std::string::npos) continue;
    const std::size_t end = message.rfind(close);
    if (end != std::string::npos && end > begin)
      return message.substr(begin + open.size(), end - begin - open.size());
  }
  return "";
}

void print_usage(const char* program, const std::vector<Mode>& modes, const char* notes) {
  std::cout << "usage: " << program << " MODE [options]\nmodes:\n";
  for (const Mode& m : modes) {
    const std::string name = m.name;
    std::cout << "  " << name << std::string(name.size() < 11 ? 12 - name.size() : 1, ' ')
              << m.summary << "\n";
  }
  std::cout << notes << "Run '" << program << " MODE --help' for the options of a mode.\nRun '"
            << program << " --version' for its version and git revision.\n";
}

// argv with each renamed flag ("--old" or "--old=value") spelled the new way.
std::vector<std::string> with_new_names(const char* program, int argc, char** argv,
                                        const std::vector<RenamedFlag>& renamed) {
  std::vector<std::string> words(argv, argv + argc);
  for (std::string& word : words)
    for (const RenamedFlag& f : renamed) {
      const std::string old_flag = std::string("--") + f.old_name;
      if (word != old_flag && word.rfind(old_flag + "=", 0) != 0) continue;
      std::cerr << program << ": note: " << old_flag << " is now --" << f.new_name << "\n";
      word = std::string("--") + f.new_name + word.substr(old_flag.size());
    }
  return words;
}

int run_mode(const char* program, const std::vector<Mode>& modes, int argc, char** argv,
             const char* notes, const std::vector<RenamedFlag>& renamed) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    print_usage(program, modes, notes);
    return argc < 2 ? 2 : 0;
  }
  if (std::string(argv[1]) == "--version") {
    print_version(program);
    return 0;
  }
  const std::string mode = argv[1];
  try {
    for (const Mode& m : modes)
      if (mode == m.name) {
        std::vector<std::string> words = with_new_names(program, argc - 1, argv + 1, renamed);
        std::vector<char*> args;
        for (std::string& word : words) args.push_back(word.data());
        args.push_back(nullptr);
        const int status = m.run(static_cast<int>(words.size()), args.data());
        // Results lost to a full disk or a closed pipe must not look like success.
        std::cout.flush();
        if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
          std::cerr << program << ": could not write the output: " << std::strerror(errno)
                    << "\n";
          return 1;
        }
        return status;
      }
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
    std::cerr << program << " " << mode << ": " << parse_error_message(e, argc, argv)
              << " (see --help)\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    // A symlink loop, a name too long, a permission: the path and the reason, as a bad input.
    std::cerr << program << ": " << printable(e.path1().string()) << ": " << e.code().message()
              << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": unexpected error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int run_modes(const char* program, const std::vector<Mode>& modes, int argc, char** argv,
              const char* notes, const std::vector<RenamedFlag>& renamed) {
  choose_openmp_wait_policy(argv);
  if (argc > 0 && argv[0] && *argv[0]) typed_program = argv[0];
  const int status = run_mode(program, modes, argc, argv, notes, renamed);
  optim::end_processes(status);  // under mpirun: the other processes end too
  return status;
}

std::string shell_quoted(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-=:,@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string program_as_typed(const char* program) {
  return shell_quoted(typed_program.empty() ? std::string(program) : typed_program);
}

std::string parse_error_message(const cxxopts::exceptions::exception& e, int argc, char** argv) {
  if (dynamic_cast<const cxxopts::exceptions::incorrect_argument_type*>(&e) == nullptr)
    return e.what();
  const std::string value = quoted_value(e.what());
  const std::string flag = flag_given(value, argc, argv);
  if (flag.empty()) return e.what();
  // The flags that can fail to parse are the numeric ones: say which kind of number.
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  const bool is_number = !value.empty() && *end == '\0';
  const bool spaced = value.find_first_of(" \t\n\r") != std::string::npos;
  // An integer flag reads digits only: "1e8" is a whole number, but not one it can read.
  const bool digits = value.find_first_not_of("+-0123456789") == std::string::npos;
  // cxxopts reads "-3" as an integer but not "+3".
  const bool plus = digits && value.size() > 1 && value[0] == '+' &&
                    value.find_first_of("+-", 1) == std::string::npos;
  const char* expected = spaced                         ? "expects a number without spaces"
                         : !is_number                   ? "expects a number"
                         : plus                         ? "expects a whole number without a '+' sign"
                         : std::isfinite(number) && number == std::trunc(number) && !digits
                             ? "expects a whole number in digits (no exponent or point)"
                         : !std::isfinite(number)       ? "expects a finite number"
                         : number != std::trunc(number) ? "expects a whole number"
                         // A whole number that fits a signed flag: a flag that counts from 0.
                         : number < 0 && number > -9e18 ? "expects a whole number >= 0"
                                                        : "is out of range";
  return flag + " " + expected + ", got '" + value + "'";
}

void print_version(const char* program) {
  std::cout << program << " " << version_string() << "\n";
}

void add_data_dir_flag(cxxopts::Options& o, const std::string& help) {
  o.add_options()("data-dir", help, cxxopts::value<std::string>());
}

void add_text_flag(cxxopts::Options& o, const std::string& help) {
  o.add_options()("text", help, cxxopts::value<std::string>());
}

std::string data_dir_or(const cxxopts::ParseResult& r, const std::string& fallback) {
  return r.count("data-dir") ? r["data-dir"].as<std::string>() : fallback;
}

bool wants_help(const cxxopts::Options& o, const cxxopts::ParseResult& r) {
  if (!r.count("help")) return false;
  std::cout << o.help() << "\n";
  return true;
}

void reject_unexpected_arguments(const cxxopts::ParseResult& r, const char* mode,
                                 const char* positional) {
  const std::string prefix = *mode ? std::string(mode) + ": " : "";
  if (!r.unmatched().empty()) fail(prefix, "unexpected argument '", r.unmatched()[0], "'");
  std::map<std::string, std::string> seen;
  for (const cxxopts::KeyValue& kv : r.arguments()) {
    if (positional && kv.key() == positional) continue;
    // cxxopts keeps the last of two values without a word: "--dim 32 --dim 64" is 64.
    auto [earlier, fresh] = seen.emplace(kv.key(), kv.value());
    if (!fresh)
      fail(prefix, "--", kv.key(), " is given twice ('", earlier->second, "', then '", kv.value(),
           "')");
    // cxxopts reads a float with a stream, which stops at the first character that is not part
    // of a number: "--lr 0.001abc" would be 0.001.
    bool is_float_flag = true;
    try {
      (void)r[kv.key()].as<double>();
    } catch (const std::bad_cast&) {
      is_float_flag = false;  // a flag of another type (integer, string, switch)
    }
    if (!is_float_flag) continue;
    char* end = nullptr;
    const double whole = std::strtod(kv.value().c_str(), &end);
    if (*end != '\0') fail(prefix, "--", kv.key(), " expects a number, got '", kv.value(), "'");
    // strtod reads all of "0x2" or "0x1p-1" while the stream stops at the x (0): the flag must
    // not take a value other than the one written.
    const double taken = r[kv.key()].as<double>();
    if (whole != taken && !(std::isnan(whole) && std::isnan(taken)))
      fail(prefix, "--", kv.key(), " expects a decimal number, got '", kv.value(), "'");
  }
}

std::vector<std::string> positional_arguments(const cxxopts::ParseResult& r, const char* key) {
  std::vector<std::string> given;
  for (const cxxopts::KeyValue& kv : r.arguments())
    if (kv.key() == key) given.push_back(kv.value());
  return given;
}

}  // namespace uwaga::apps
