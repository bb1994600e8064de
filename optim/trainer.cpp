#include "optim/trainer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/graph.h"
#include "optim/checkpoint.h"
#include "optim/clip.h"

namespace uwaga::optim {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// ---- Ctrl-C ---------------------------------------------------------------------------------
// The handler only sets a flag; the loop looks at it after each step, so an interruption always
// lands between two steps and the checkpoint it saves is consistent. SA_RESETHAND restores the
// default action, so a second Ctrl-C ends the program at once.
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

class StopSignalGuard {
 public:
  explicit StopSignalGuard(bool quiet) {
    g_stop_signal = 0;
    g_quiet = quiet;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    install(SIGINT, action, old_int_);
    install(SIGTERM, action, old_term_);
  }
  ~StopSignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;

  static int stop_signal() { return g_stop_signal; }

 private:
  // A signal the program was told to ignore (nohup, a background job) stays ignored.
  static void install(int signal, const struct sigaction& action, struct sigaction& old) {
    sigaction(signal, nullptr, &old);
    if (old.sa_handler != SIG_IGN) sigaction(signal, &action, nullptr);
  }

  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// ---- one run per output directory ------------------------------------------------------------
// Two processes training into one directory (a second terminal, a resume started while the run
// still goes on) would interleave their logs and overwrite each other's checkpoints. The run
// holds an exclusive flock() on the directory itself, released when it ends or dies; a second
// run fails at once. Where the file system cannot lock (some network mounts), runs go unlocked.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir) {
    if (dir.empty()) return;
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return;  // writing into it will fail with a clearer error
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) return;
    ::close(fd_);
    fd_ = -1;
    fail("Trainer: another run is already training into '", dir,
         "' (it holds the directory's lock); wait for it to end, or use another output directory");
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// ---- formatting ---------------------------------------------------------------------------------
std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// "nan", "inf", "-inf" or %g (printf may write "-nan").
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

// ---- running sums over a window of steps (a log interval, or an epoch) ------------------------
struct Meter {
  std::int64_t steps = 0, items = 0, correct = 0, counted = 0;  // counted: items with `correct`
  double loss = 0, grad_norm = 0, seconds = 0;

  void add(double step_loss, const StepResult& r, double norm, double step_seconds) {
    ++steps;
    loss += step_loss;
    grad_norm += norm;
    seconds += step_seconds;
    items += r.items;
    if (r.correct >= 0) {
      correct += r.correct;
      counted += r.items;
    }
  }
  double mean_loss() const { return loss / static_cast<double>(steps); }
  double mean_grad_norm() const { return grad_norm / static_cast<double>(steps); }
  bool has_accuracy() const { return counted > 0; }
  double accuracy() const { return static_cast<double>(correct) / static_cast<double>(counted); }
  double items_per_second() const { return seconds > 0 ? static_cast<double>(items) / seconds : 0; }

  // Saved with a checkpoint, so an epoch's train loss and accuracy still cover all its steps
  // when the run is resumed in the middle of it.
  nlohmann::json to_json() const {
    return {{"steps", steps},   {"items", items},         {"correct", correct},
            {"counted", counted}, {"loss", loss},       {"grad_norm", grad_norm},
            {"seconds", seconds}};
  }
  static Meter from_json(const nlohmann::json& j) {
    Meter m;
    m.steps = j.at("steps");
    m.items = j.at("items");
    m.correct = j.at("correct");
    m.counted = j.at("counted");
    m.loss = j.at("loss");
    m.grad_norm = j.at("grad_norm");
    m.seconds = j.at("seconds");
    return m;
  }
};

// ---- JSONL log: one object per line, flushed at once so a crash loses nothing written ----------
class JsonlLog {
 public:
  explicit JsonlLog(const std::string& path) {
    if (path.empty()) return;
    out_.open(path, std::ios::app);
    if (!out_) fail("Trainer: cannot open the log '", path, "' for appending");
  }
  void write(const json& record) {
    if (!out_.is_open()) return;
    out_ << record.dump() << '\n';
    out_.flush();
  }

 private:
  std::ofstream out_;
};

// ---- the terminal: a live bar on a tty, plain lines otherwise ---------------------------------
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(::isatty(2) == 1) {}
  bool tty() const { return tty_; }

  // Redraws the bar in place, at most ten times a second unless `force`.
  void bar(const std::string& line, bool force) {
    if (quiet_ || !tty_) return;
    if (!force && drawn_ && seconds_since(last_draw_) < 0.1) return;
    // A line wider than the terminal would wrap, and \r would then redraw only its last row.
    struct winsize ws {};
    const std::size_t width =
        ::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 200;
    std::cerr << '\r' << line.substr(0, width) << "\033[K" << std::flush;
    drawn_ = true;
    last_draw_ = Clock::now();
  }
  void line(const std::string& text) {  // a log line on stderr (pipes, CI)
    if (quiet_) return;
    clear();
    std::cerr << text << '\n' << std::flush;
  }
  void result(const std::string& text) {  // an epoch summary on stdout
    if (quiet_) return;
    clear();
    std::cout << text << '\n' << std::flush;
  }
  void message(const std::string& text) {  // always shown: why a run stopped
    clear();
    std::cerr << text << '\n' << std::flush;
  }
  void clear() {
    if (!drawn_) return;
    std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }

 private:
  bool quiet_, tty_;
  bool drawn_ = false;
  Clock::time_point last_draw_;
};

// ---- one call of fit() ------------------------------------------------------------------------
class Run {
 public:
  Run(TrainTask& task, Optimizer& optimizer, const LrSchedule& schedule,
      const TrainerOptions& options, std::string checkpoint_path, std::string log_path)
      : task_(task),
        opt_(optimizer),
        schedule_(schedule),
        o_(options),
        checkpoint_path_(std::move(checkpoint_path)),
        log_(log_path),
        progress_(options.quiet),
        batches_(task.batches_per_epoch()) {
    planned_ = o_.epochs * batches_;
    if (o_.max_steps > 0 && o_.max_steps < planned_) planned_ = o_.max_steps;
  }

  TrainSummary fit();
  // Logs the stop record of a run ended by an exception (a full disk, a failing task), and clears
  // the progress bar; the caller prints the message.
  void stop_on_error(const std::string& message) {
    progress_.clear();
    log_.write({{"type", "stop"}, {"reason", "error"}, {"step", step_}, {"message", message}});
  }

 private:
  void resume();
  bool train_step();  // false: stopped on a non-finite value
  bool end_epoch();   // false: stopped, not saved (non-finite parameters)
  bool save();        // false: stopped instead (a parameter holds NaN or inf)
  // Ends the run without saving: `what` was not finite. Returns false, for train_step and save.
  bool stop_non_finite(const std::string& where, const std::string& what);
  void report_step();
  std::string status_line(const Meter& m, bool with_bar) const;
  bool budget_reached() const { return o_.max_steps > 0 && step_ >= o_.max_steps; }
  // Records why the run ends early; `loud` messages print even when quiet.
  void stop(const std::string& reason, const std::string& message, bool loud = true);

  TrainTask& task_;
  Optimizer& opt_;
  const LrSchedule& schedule_;
  const TrainerOptions& o_;
  std::string checkpoint_path_;
  JsonlLog log_;
  Progress progress_;
  std::int64_t batches_, planned_;

  // Where the run is: `batch_` batches of epoch `epoch_` are done, `step_` steps in all.
  std::int64_t step_ = 0, epoch_ = 0, batch_ = 0;
  bool epoch_finished_ = false;
  bool epoch_begun_ = false;  // begin_epoch(epoch_) called
  std::int64_t saved_step_ = -1;

  std::vector<Tensor> params_;
  TrainSummary summary_;
  Meter window_, epoch_meter_;
  std::int64_t session_steps_ = 0;
  double session_step_seconds_ = 0;
  Clock::time_point epoch_start_;
};

void Run::resume() {
  if (!std::filesystem::exists(checkpoint_path_))
    fail("Trainer: cannot resume: there is no checkpoint at '", checkpoint_path_,
         "' (start without resume first)");
  CheckpointInfo info = load_checkpoint(checkpoint_path_, task_.model(), &opt_);
  if (info.batch_in_epoch > batches_)
    fail("Trainer: cannot resume from '", checkpoint_path_, "': it stopped after batch ",
         info.batch_in_epoch, " of an epoch, but the task has ", batches_,
         " batches per epoch (a different data set or batch size?)");
  step_ = info.step;
  epoch_ = info.epoch;
  batch_ = info.batch_in_epoch;
  epoch_finished_ = info.epoch_finished;
  saved_step_ = step_;
  opt_.set_lr(info.lr);
  // begin_epoch first, then the task's saved state on top: the task is then exactly as it was
  // when the checkpoint was written, whatever begin_epoch touches.
  task_.begin_epoch(epoch_);
  epoch_begun_ = true;
  try {
    task_.load_state(info.task_state);
  } catch (const Error& e) {
    fail("Trainer: cannot resume from '", checkpoint_path_, "': its task_state is damaged (",
         e.what(), ")");
  }
  if (!info.trainer_state.empty()) {  // older checkpoints have none: the epoch's sums restart
    try {
      epoch_meter_ = Meter::from_json(nlohmann::json::parse(info.trainer_state).at("epoch"));
    } catch (const nlohmann::json::exception& e) {
      fail("Trainer: cannot resume from '", checkpoint_path_, "': its trainer_state is damaged (",
           e.what(), ")");
    }
  }
  summary_.steps = step_;
  summary_.epochs_done = epoch_ + (epoch_finished_ ? 1 : 0);
  log_.write({{"type", "resume"}, {"step", step_}, {"epoch", epoch_ + 1},
              {"batch_in_epoch", batch_}});
  progress_.line("resumed from " + checkpoint_path_ + " at step " + std::to_string(step_) +
                 " (epoch " + std::to_string(epoch_ + 1) + ", batch " + std::to_string(batch_) +
                 "/" + std::to_string(batches_) + ")");
}

bool Run::stop_non_finite(const std::string& where, const std::string& what) {
  stop("non_finite",
       where + ": " + what + " — stopping without saving" +
           (saved_step_ >= 0 ? "; the last checkpoint (step " + std::to_string(saved_step_) +
                                   ", " + checkpoint_path_ + ") is kept as it was"
                             : std::string("; no checkpoint was written")));
  return false;
}

bool Run::save() {
  if (checkpoint_path_.empty()) return true;
  // Finite gradients and a finite learning rate can still overflow a parameter (a learning rate
  // of 1e30, say); a checkpoint of NaN would be worse than none.
  const std::string when = "after step " + std::to_string(step_);
  if (auto name = first_non_finite(task_.model().named_parameters()))
    return stop_non_finite(when, "parameter '" + *name + "' holds NaN or inf");
  // The same for the optimizer's state: a gradient of 1e21 is finite, its square in float32 is
  // not, and an inf in Adam's second moment freezes that parameter from then on (and would make
  // the checkpoint unloadable).
  if (auto key = first_non_finite(opt_.state()))
    return stop_non_finite(when, "optimizer state '" + *key + "' holds NaN or inf");
  CheckpointInfo info;
  info.step = step_;
  info.epoch = epoch_;
  info.batch_in_epoch = batch_;
  info.epoch_finished = epoch_finished_;
  info.lr = opt_.lr();
  info.config = task_.config_json();
  info.task_state = task_.save_state();
  info.trainer_state = nlohmann::json{{"epoch", epoch_meter_.to_json()}}.dump();
  try {
    save_checkpoint(checkpoint_path_, task_.model(), &opt_, info);
  } catch (const Error& e) {
    fail("Trainer: cannot save the checkpoint of step ", step_, " (",
         saved_step_ >= 0 ? "the last one, of step " + std::to_string(saved_step_) +
                                ", is kept as it was"
                          : std::string("none was written before"),
         "): ", e.what());
  }
  saved_step_ = step_;
  return true;
}

void Run::stop(const std::string& reason, const std::string& message, bool loud) {
  summary_.message = message;
  log_.write({{"type", "stop"}, {"reason", reason}, {"step", step_}, {"message", message}});
  if (loud) progress_.message(message);
  else progress_.line(message);
}

bool Run::train_step() {
  const double lr = schedule_.lr(step_);
  opt_.set_lr(lr);
  // The optimizer may hold only some of the parameters; the gradient norm covers them all.
  opt_.zero_grad();
  task_.model().zero_grad();
  const auto start = Clock::now();

  StepResult r = task_.train_step(batch_);
  if (!r.loss.defined() || r.loss.numel() != 1)
    fail("Trainer: train_step(", batch_, ") must return a one-element loss, got ",
         r.loss.defined() ? shape_str(r.loss.shape()) : std::string("an undefined tensor"));
  const double loss = r.loss.item();
  // A non-finite value would poison the parameters and every later checkpoint: stop before the
  // update, and keep the last checkpoint, which was written from finite values.
  const std::string where = "step " + std::to_string(step_ + 1) + " (epoch " +
                            std::to_string(epoch_ + 1) + ", batch " + std::to_string(batch_ + 1) +
                            "/" + std::to_string(batches_) + ")";
  if (!std::isfinite(loss)) return stop_non_finite(where, "the loss is " + format_value(loss));
  const double norm = clip_grad_norm(params_, o_.clip_norm);
  if (!std::isfinite(norm))
    return stop_non_finite(where, "the gradient norm is " + format_value(norm) + " (loss " +
                                      format_value(loss) + ")");
  opt_.step();

  const double seconds = seconds_since(start);
  ++step_;
  ++batch_;
  ++session_steps_;
  session_step_seconds_ += seconds;
  summary_.steps = step_;
  summary_.losses.push_back(loss);
  window_.add(loss, r, norm, seconds);
  epoch_meter_.add(loss, r, norm, seconds);
  report_step();
  return true;
}

// The most useful fields first: a bar cut to the terminal's width loses the rest.
std::string Run::status_line(const Meter& m, bool with_bar) const {
  const char* sep = with_bar ? " " : "  ";
  std::ostringstream s;
  s << "epoch " << epoch_ + 1 << "/" << o_.epochs << sep;
  if (with_bar) {
    constexpr int kWidth = 10;
    const int filled = static_cast<int>(kWidth * batch_ / std::max<std::int64_t>(batches_, 1));
    s << '[' << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << batch_
      << "/" << batches_ << sep;
  }
  s << "step " << step_ << "/" << planned_;
  if (m.steps > 0) {
    s << sep << "loss " << format("%.4f", m.mean_loss());
    if (m.has_accuracy()) s << sep << "acc " << format("%.4f", m.accuracy());
  }
  s << sep << "lr " << format("%.2e", opt_.lr());
  if (session_steps_ > 0) {
    const double per_step = session_step_seconds_ / static_cast<double>(session_steps_);
    s << sep << "ETA " << format_duration(per_step * static_cast<double>(planned_ - step_));
  }
  if (m.steps > 0) {
    s << sep << format("%.0f", m.items_per_second()) << " items/s" << sep << "|g| "
      << format("%.3g", m.mean_grad_norm());
  }
  return s.str();
}

void Run::report_step() {
  const bool log_now = o_.log_every > 0 && step_ % o_.log_every == 0;
  // The bar shows the epoch so far; log lines and JSONL records the steps since the last line.
  progress_.bar(status_line(epoch_meter_, true), log_now || batch_ == batches_);
  if (!log_now) return;
  if (!progress_.tty()) progress_.line(status_line(window_, false));
  json record = {{"type", "step"},
                 {"step", step_},
                 {"epoch", epoch_ + 1},
                 {"batch", batch_},
                 {"loss", window_.mean_loss()},
                 {"lr", opt_.lr()},
                 {"grad_norm", window_.mean_grad_norm()},
                 {"items_per_s", window_.items_per_second()}};
  if (window_.has_accuracy()) record["accuracy"] = window_.accuracy();
  log_.write(record);
  window_ = Meter{};
}

bool Run::end_epoch() {
  if (o_.evaluate_each_epoch) {
    task_.model().eval();
    try {
      NoGradGuard no_grad;
      summary_.last_eval = task_.evaluate();
    } catch (...) {
      task_.model().train();
      throw;
    }
    task_.model().train();
  }
  const double seconds = seconds_since(epoch_start_);
  epoch_finished_ = true;
  summary_.epochs_done = epoch_ + 1;

  std::ostringstream line;
  line << "epoch " << epoch_ + 1 << "/" << o_.epochs << " done in " << format_duration(seconds)
       << " (step " << step_ << ")";
  json record = {{"type", "epoch"}, {"epoch", epoch_ + 1}, {"step", step_},
                 {"lr", opt_.lr()}, {"seconds", seconds}};
  if (epoch_meter_.steps > 0) {
    line << "  train loss " << format("%.4f", epoch_meter_.mean_loss());
    record["train_loss"] = epoch_meter_.mean_loss();
    if (epoch_meter_.has_accuracy()) {
      line << " acc " << format("%.4f", epoch_meter_.accuracy());
      record["train_accuracy"] = epoch_meter_.accuracy();
    }
    record["items_per_s"] = epoch_meter_.items_per_second();
  }
  if (o_.evaluate_each_epoch) {
    line << "  " << task_.eval_split();
    for (const auto& [name, value] : summary_.last_eval) {
      line << " " << name << " " << format("%.4f", value);
      record[task_.eval_split() + "_" + name] = value;
    }
  }
  progress_.result(line.str());
  log_.write(record);
  return save();
}

TrainSummary Run::fit() {
  const auto start = Clock::now();
  params_ = task_.model().parameters();
  if (o_.resume) {
    resume();
  } else {
    // Marks where this run's records begin (a directory whose earlier run never saved a
    // checkpoint, e.g. one stopped by a NaN, can hold another run's log before it).
    const std::string text = task_.config_json();
    json config = text.empty() ? json() : json::parse(text, nullptr, false);
    if (config.is_discarded()) config = text;  // not JSON: kept as the task wrote it
    log_.write({{"type", "start"},
                {"epochs", o_.epochs},
                {"batches_per_epoch", batches_},
                {"config", config}});
  }
  StopSignalGuard signals(o_.quiet);
  task_.model().train();

  auto finish = [&] {
    progress_.clear();
    summary_.seconds = seconds_since(start);
    return summary_;
  };
  auto interrupted = [] { return StopSignalGuard::stop_signal() != 0; };
  auto stop_interrupted = [&] {
    summary_.interrupted = true;
    std::string how = checkpoint_path_.empty()
                          ? "; nothing was saved (no output directory)"
                          : "; checkpoint saved to " + checkpoint_path_ + ". To continue: " +
                                (o_.resume_command.empty() ? std::string("run again with resume")
                                                           : o_.resume_command);
    stop("interrupted", std::string("interrupted by ") +
                            (StopSignalGuard::stop_signal() == SIGTERM ? "SIGTERM" : "SIGINT") +
                            " after step " + std::to_string(step_) + how);
    return finish();
  };

  auto stop_unsaved = [&] {  // save() found a non-finite parameter and said so
    summary_.stopped_non_finite = true;
    return finish();
  };

  auto stop_at_budget = [&] {
    stop("max_steps", "reached max_steps = " + std::to_string(o_.max_steps) +
                          (saved_step_ == step_ && !checkpoint_path_.empty()
                               ? "; checkpoint saved to " + checkpoint_path_
                               : std::string()),
         /*loud=*/false);
    return finish();
  };

  for (; epoch_ < o_.epochs; ++epoch_, batch_ = 0, epoch_finished_ = false, epoch_begun_ = false) {
    if (epoch_finished_) continue;
    if (!epoch_begun_) task_.begin_epoch(epoch_);
    epoch_begun_ = true;
    epoch_start_ = Clock::now();
    if (batch_ == 0) epoch_meter_ = Meter{};  // resumed mid-epoch: the saved sums go on
    while (batch_ < batches_) {
      if (budget_reached()) return stop_at_budget();  // resuming a run that used its budget
      if (!train_step()) {
        summary_.stopped_non_finite = true;
        return finish();
      }
      if (interrupted()) {  // even after the last batch: evaluation can wait for the resume
        if (!save()) return stop_unsaved();
        return stop_interrupted();
      }
      if (batch_ == batches_) break;  // the epoch's end saves a checkpoint anyway
      if (budget_reached()) {
        if (!save()) return stop_unsaved();
        return stop_at_budget();
      }
      if (o_.checkpoint_every > 0 && step_ % o_.checkpoint_every == 0 && !save())
        return stop_unsaved();
    }
    if (!end_epoch()) return stop_unsaved();
    if (interrupted()) return stop_interrupted();
    if (budget_reached()) return stop_at_budget();
  }
  return finish();
}

}  // namespace

StepResult TrainTask::train_step(std::int64_t index) {
  StepResult r = train_batch(index);
  if (r.loss.defined() && r.loss.numel() == 1 && std::isfinite(r.loss.item())) r.loss.backward();
  return r;
}

Trainer::Trainer(TrainTask& task, Optimizer& optimizer, const LrSchedule& schedule,
                 TrainerOptions options)
    : task_(task), optimizer_(optimizer), schedule_(schedule), options_(std::move(options)) {
  const TrainerOptions& o = options_;
  if (o.epochs < 0) fail("Trainer: epochs must be >= 0, got ", o.epochs);
  if (o.max_steps < 0) fail("Trainer: max_steps must be >= 0 (0: no limit), got ", o.max_steps);
  if (!(o.clip_norm >= 0)) fail("Trainer: clip_norm must be >= 0 (0: no clipping), got ",
                                o.clip_norm);
  if (o.log_every < 0) fail("Trainer: log_every must be >= 0 (0: no step lines), got ",
                            o.log_every);
  if (o.checkpoint_every < 0)
    fail("Trainer: checkpoint_every must be >= 0 (0: at epoch ends), got ", o.checkpoint_every);
  if (o.resume && o.out_dir.empty())
    fail("Trainer: resume needs out_dir, the directory holding checkpoint.safetensors");
}

std::string Trainer::checkpoint_path() const {
  if (options_.out_dir.empty()) return "";
  return (std::filesystem::path(options_.out_dir) / "checkpoint.safetensors").string();
}

std::string Trainer::log_path() const {
  if (options_.out_dir.empty()) return "";
  return (std::filesystem::path(options_.out_dir) / "log.jsonl").string();
}

TrainSummary Trainer::fit() {
  const std::int64_t batches = task_.batches_per_epoch();
  if (batches <= 0)
    fail("Trainer: the task has ", batches, " batches per epoch; it needs at least one");
  // An optimizer built on another model's parameters would train nothing the task uses.
  std::set<const void*> model_storages;
  for (const Tensor& p : task_.model().parameters()) model_storages.insert(p.impl().storage.get());
  for (const ParamGroup& group : optimizer_.groups())
    for (std::size_t i = 0; i < group.params.size(); ++i)
      if (!model_storages.count(group.params[i].impl().storage.get()))
        fail("Trainer: the optimizer's parameter '", group.names[i],
             "' is not a parameter of the task's model (an optimizer built for another model?)");
  if (!options_.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.out_dir, ec);
    if (ec)
      fail("Trainer: cannot create the output directory '", options_.out_dir, "': ",
           ec.message());
  }
  DirectoryLock lock(options_.out_dir);
  // A fresh run would overwrite the checkpoint at its first save: the earlier run's work, lost.
  if (!options_.resume && !options_.out_dir.empty() && std::filesystem::exists(checkpoint_path()))
    fail("Trainer: '", options_.out_dir, "' already holds a run (", checkpoint_path(),
         "); continue it with resume, or train into another out_dir");
  Run run(task_, optimizer_, schedule_, options_, checkpoint_path(), log_path());
  try {
    return run.fit();
  } catch (const std::exception& e) {
    run.stop_on_error(e.what());  // the log says how the run ended; the caller prints the error
    throw;
  }
}

}  // namespace uwaga::optim
