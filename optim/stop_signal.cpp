#include "optim/stop_signal.h"

#include <unistd.h>

#include <csignal>

namespace uwaga::optim {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_quiet = 0;

extern "C" void on_stop_signal(int signal) {
  g_stop_signal = signal;
  if (!g_quiet) {
    static const char msg[] =
        "\nuwaga: stopping after this step and saving a checkpoint (again to quit now)\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
  }
}

void install(int signal, const struct sigaction& action, struct sigaction& old) {
  sigaction(signal, nullptr, &old);
  if (old.sa_handler != SIG_IGN) sigaction(signal, &action, nullptr);
}

}  // namespace

StopSignalGuard::StopSignalGuard(bool quiet) {
  g_stop_signal = 0;
  g_quiet = quiet;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  install(SIGINT, action, old_int_);
  install(SIGTERM, action, old_term_);
}

StopSignalGuard::~StopSignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignalGuard::stop_signal() { return g_stop_signal; }

}  // namespace uwaga::optim
