#include "optim/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace uwaga::optim {

std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

std::string format_value(double x) {
  if (std::isnan(x)) return "nan";
  return format("%g", x);
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  char buf[32];
  long t = std::lround(s);
  if (s < 10) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (t < 60) std::snprintf(buf, sizeof buf, "%lds", t);
  else if (t < 3600) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
  return buf;
}

std::string status_line(const RunPosition& at, const Meter& m, bool with_bar) {
  const char* sep = with_bar ? " " : "  ";
  std::ostringstream s;
  s << "epoch " << at.epoch << "/" << at.epochs << sep;
  if (with_bar) {
    constexpr int kWidth = 10;
    const int filled = static_cast<int>(kWidth * at.batch / std::max<std::int64_t>(at.batches, 1));
    s << '[' << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << at.batch
      << "/" << at.batches << sep;
  }
  s << "step " << at.step << "/" << at.planned;
  if (m.steps > 0) {
    s << sep << "loss " << format("%.4f", m.mean_loss());
    if (m.has_accuracy()) s << sep << "acc " << format("%.4f", m.accuracy());
  }
  s << sep << "lr " << format("%.2e", at.lr);
  if (at.eta_seconds >= 0) s << sep << "ETA " << format_duration(at.eta_seconds);
  if (m.steps > 0) {
    s << sep << format("%.0f", m.items_per_second()) << " items/s" << sep << "|g| "
      << format("%.3g", m.mean_grad_norm());
  }
  return s.str();
}

Progress::Progress(bool quiet) : quiet_(quiet), tty_(::isatty(2) == 1) {}

void Progress::bar(const std::string& line, bool force) {
  if (quiet_ || !tty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && std::chrono::duration<double>(now - last_draw_).count() < 0.1) return;
  // A line wider than the terminal would wrap, and \r would then redraw only its last row.
  struct winsize ws {};
  const std::size_t width = ::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 200;
  std::cerr << '\r' << line.substr(0, width) << "\033[K" << std::flush;
  drawn_ = true;
  last_draw_ = now;
}

void Progress::line(const std::string& text) {
  if (quiet_) return;
  clear();
  std::cerr << text << '\n' << std::flush;
}

void Progress::result(const std::string& text) {
  if (quiet_) return;
  clear();
  std::cout << text << '\n' << std::flush;
}

void Progress::message(const std::string& text) {
  clear();
  std::cerr << text << '\n' << std::flush;
}

void Progress::clear() {
  if (!drawn_) return;
  std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace uwaga::optim
