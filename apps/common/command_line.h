#pragma once
// What the uwaga programs share on the command line: MODE dispatch with usage and --help, and
// one reporting rule — bad input is one line on stderr and exit status 2, never a crash.
#include <cxxopts.hpp>

#include <string>
#include <vector>

namespace uwaga::apps {

struct Mode {
  const char* name;
  const char* summary;                // its line in the program's --help
  int (*run)(int argc, char** argv);  // argv[0] is the mode; returns the exit status
};

// A flag's spelling before the programs shared one (README: "Flags across the programs"): still
// read, as the new one, with a note on stderr.
struct RenamedFlag {
  const char* old_name;  // "coco-images"
  const char* new_name;  // "data-dir"
};

// Runs argv[1]'s mode. `program --help`, or no mode, lists the modes (`notes`, if any, after
// them). Errors (uwaga::Error, cxxopts' parse errors) print "<program>: <message>" and return 2;
// anything unexpected returns 1.
int run_modes(const char* program, const std::vector<Mode>& modes, int argc, char** argv,
              const char* notes = "", const std::vector<RenamedFlag>& renamed = {});

// The flags that name where a program's data is, spelled alike in every program and in every
// mode that reads data: --data-dir DIR (image data), --text FILE (a text file).
void add_data_dir_flag(cxxopts::Options& o, const std::string& help);
void add_text_flag(cxxopts::Options& o, const std::string& help);
// --data-dir's value, else `fallback`.
std::string data_dir_or(const cxxopts::ParseResult& r, const std::string& fallback);

// "uwaga-gpt 0.1.0 (git 1a2b3c4d5e6f)": `program --version`, the string checkpoints keep
// (core/version.h).
void print_version(const char* program);

// The program as the user ran it, for the commands the programs print ("./build/apps/uwaga-vit
// eval ..."; "uwaga-vit" when the shell found it on PATH), shell-quoted; `program` until
// run_modes has seen argv[0].
std::string program_as_typed(const char* program);

// `word` as a POSIX shell reads it back: as it is when it is plain, else in single quotes.
std::string shell_quoted(const std::string& word);

// cxxopts' message, naming the flag when a value failed to parse ("--epochs expects a whole
// number, got '1.5'" for "Argument '1.5' failed to parse").
std::string parse_error_message(const cxxopts::exceptions::exception& e, int argc, char** argv);

// Prints the mode's options and returns true when the user asked for --help.
bool wants_help(const cxxopts::Options& o, const cxxopts::ParseResult& r);

// Fails naming the first argument no flag took ("<mode>: unexpected argument 'x'"), a flag given
// twice, or a float flag whose value has characters after the number ("--lr 0.001abc") or is not
// decimal ("--clip 0x2", which cxxopts would read as 0). A mode
// that takes arguments names the option that collects them (`positional`, which may repeat);
// an empty `mode` puts no prefix before the message.
void reject_unexpected_arguments(const cxxopts::ParseResult& r, const char* mode,
                                 const char* positional = nullptr);

// The arguments collected by the positional option `key`, as given. (r[key] would split each at
// its commas, cxxopts' separator for lists: "we eat, they read" would be two sentences.)
std::vector<std::string> positional_arguments(const cxxopts::ParseResult& r, const char* key);

// field = the flag's value, when the user gave the flag.
template <class T>
void override_from(const cxxopts::ParseResult& r, const char* flag, T& field) {
  if (r.count(flag)) field = r[flag].as<T>();
}

}  // namespace uwaga::apps
