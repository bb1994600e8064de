#include "optim/trainer.h"

#include <chrono>
#include <cstdio>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/graph.h"
#include "optim/checkpoint.h"
#include "optim/clip.h"
#include "optim/jsonl_log.h"
#include "optim/meter.h"
#include "optim/progress.h"
#include "optim/run_directory.h"
#include "optim/stop_signal.h"
#include "optim/trainer_checkpoint.h"

namespace uwaga::optim {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// ---- one call of fit() ------------------------------------------------------------------------
class Run {
 public:
  Run(nn::Model& model, BatchSource& data, const nn::Loss& loss, Optimizer& optimizer,
      const LrSchedule& schedule, const TrainerOptions& options, std::string checkpoint_path,
      std::string log_path)
      : model_(model),
        data_(data),
        loss_(loss),
        optimizer_(optimizer),
        schedule_(schedule),
        options_(options),
        parallel_(model, options.parallel, options.reduction),
        processes_(parallel_.reduction()),
        root_(processes_.rank() == 0),
        dropout_seeds_(options.seed ^ 0xD1B54A32D192ED03ull),
        checkpoint_path_(std::move(checkpoint_path)),
        log_(root_ ? log_path : std::string()),
        progress_(options.quiet || !root_),
        batches_(data.batches_per_epoch()) {
    planned_ = options_.epochs * batches_;
    if (options_.max_steps > 0 && options_.max_steps < planned_) planned_ = options_.max_steps;
    if (!log_.note().empty()) progress_.line(log_.note());
  }

  TrainSummary fit(const Evaluate& evaluate);  // the loop; end() says how it ended
  void say(const std::string& line) { progress_.line(line); }
  // Logs the stop record of a run ended by an exception (a full disk, a failing task), and clears
  // the progress bar; the caller prints the message.
  void stop_on_error(const std::string& message) {
    progress_.clear();
    try {
      log_.write({{"type", "stop"}, {"reason", "error"}, {"step", step_}, {"message", message}});
    } catch (const Error&) {
      // The log itself may be what failed (a full disk): the caller reports the first error.
    }
  }

 private:
  // How fit()'s loop ends.
  enum class Ending { finished, non_finite, interrupted, max_steps };
  TrainSummary end(Ending ending);
  void start();   // a new run
  void resume();  // a run continued from its checkpoint
  bool train_step();  // false: stopped on a non-finite value
  bool end_epoch(const Evaluate& evaluate);  // false: stopped, not saved (non-finite parameters)
  bool save();        // false: stopped instead (a parameter holds NaN or inf)
  // Ends the run without saving: `what` was not finite. Returns false, for train_step and save.
  bool stop_non_finite(const std::string& where, const std::string& what);
  void report_step();
  RunPosition position() const;
  bool budget_reached() const { return options_.max_steps > 0 && step_ >= options_.max_steps; }
  bool interrupted();  // by SIGINT or SIGTERM, here or on another process
  // Records why the run ends early; `loud` messages print even when quiet.
  void stop(const std::string& reason, const std::string& message, bool loud = true);
  // Fails on every process with the message of the lowest rank that has one (none: returns).
  void fail_together(const std::string& message) {
    const std::string first = processes_.first_error(message);
    if (!first.empty()) fail(first);
  }

  nn::Model& model_;
  BatchSource& data_;
  const nn::Loss& loss_;
  Optimizer& optimizer_;
  const LrSchedule& schedule_;
  const TrainerOptions& options_;
  DataParallel parallel_;
  GradientReduction& processes_;  // those training this model together (often just this one)
  bool root_;                     // process 0: the one that writes the log and checkpoints
  Generator dropout_seeds_;  // one seed per step, for the dropout masks
  std::string checkpoint_path_;
  JsonlLog log_;
  Progress progress_;
  std::int64_t batches_, planned_;

  // Where the run is: `batch_` batches of epoch `epoch_` are done, `step_` steps in all.
  std::int64_t step_ = 0, epoch_ = 0, batch_ = 0;
  bool epoch_finished_ = false;
  bool epoch_begun_ = false;  // data_.begin_epoch(epoch_) called
  std::int64_t saved_step_ = -1;

  std::vector<Tensor> params_;
  TrainSummary summary_;
  Meter window_, epoch_meter_;
  std::int64_t session_steps_ = 0;
  double session_step_seconds_ = 0;
  Clock::time_point started_, epoch_start_;
};

void Run::resume() {
  const CheckpointInfo info =
      load_checkpoint_on_every_process(checkpoint_path_, model_, optimizer_, processes_);
  if (info.batch_in_epoch > batches_)
    fail("Trainer: cannot resume from '", checkpoint_path_, "': it stopped after batch ",
         info.batch_in_epoch, " of an epoch, but the task has ", batches_,
         " batches per epoch (a different data set or batch size?)");
  step_ = info.step;
  epoch_ = info.epoch;
  batch_ = info.batch_in_epoch;
  epoch_finished_ = info.epoch_finished;
  saved_step_ = step_;
  optimizer_.set_lr(info.lr);
  data_.begin_epoch(epoch_);
  epoch_begun_ = true;
  const TrainerState state = TrainerState::from_checkpoint(info, checkpoint_path_);
  epoch_meter_ = state.epoch;
  if (state.dropout_seeds) dropout_seeds_.set_state(*state.dropout_seeds);
  summary_.steps = step_;
  summary_.epochs_done = epoch_ + (epoch_finished_ ? 1 : 0);
  json record = {{"type", "resume"},          {"step", step_},
                 {"epoch", epoch_ + 1},          {"batch_in_epoch", batch_},
                 {"processes", processes_.size()}, {"threads", parallel_.threads()}};
  if (state.processes > 0 && state.processes != processes_.size()) {
    record["processes_before"] = state.processes;
    progress_.line("resuming on " + std::to_string(processes_.size()) + " process(es); the run " +
                   "was trained on " + std::to_string(state.processes) + " until now (the same " +
                   "training, summed in another order)");
  }
  log_.write(record);
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
  // A checkpoint of NaN would be worse than none (optim/trainer_checkpoint.h).
  if (const std::string what = non_finite_state(model_, optimizer_); !what.empty())
    return stop_non_finite("after step " + std::to_string(step_), what);
  CheckpointInfo info;
  info.step = step_;
  info.epoch = epoch_;
  info.batch_in_epoch = batch_;
  info.epoch_finished = epoch_finished_;
  info.lr = optimizer_.lr();
  info.config = options_.config;
  info.trainer_state =
      TrainerState{epoch_meter_, dropout_seeds_.state(), processes_.size()}.to_json();
  std::string error;
  if (root_) {  // the processes hold the same values: one writes them
    try {
      save_checkpoint_saying(checkpoint_path_, model_, optimizer_, info,
                             [this](const std::string& line) { progress_.line(line); });
    } catch (const Error& e) {
      error = "Trainer: cannot save the checkpoint of step " + std::to_string(step_) + " (" +
              (saved_step_ >= 0 ? "the last one, of step " + std::to_string(saved_step_) +
                                      ", is kept as it was"
                                : std::string("none was written before")) +
              "): " + e.what();
    }
  }
  fail_together(error);  // the others go on only once the checkpoint is written
  saved_step_ = step_;
  return true;
}

void Run::stop(const std::string& reason, const std::string& message, bool loud) {
  summary_.message = message;
  log_.write({{"type", "stop"}, {"reason", reason}, {"step", step_}, {"message", message}});
  if (!root_) return;  // process 0 says it for all
  if (loud) progress_.message(message);
  else progress_.line(message);
}

// One step: data → model → loss → backward → gradient reduction → optimizer.
bool Run::train_step() {
  const double lr = schedule_.lr(step_);
  optimizer_.set_lr(lr);
  // The optimizer may hold only some of the parameters; the gradient norm covers them all.
  optimizer_.zero_grad();
  model_.zero_grad();
  const auto start = Clock::now();

  const Batch batch = data_.batch(batch_);
  const StepResult r = parallel_.gradient(batch, loss_, dropout_seeds_.next_u64());
  // A non-finite value would poison the parameters and every later checkpoint: stop before the
  // update, and keep the last checkpoint, which was written from finite values.
  const std::string where = "step " + std::to_string(step_ + 1) + " (epoch " +
                            std::to_string(epoch_ + 1) + ", batch " + std::to_string(batch_ + 1) +
                            "/" + std::to_string(batches_) + ")";
  if (!std::isfinite(r.loss)) return stop_non_finite(where, "the loss is " + format_value(r.loss));
  const double norm = clip_grad_norm(params_, options_.clip_norm);
  if (!std::isfinite(norm))
    return stop_non_finite(where, "the gradient norm is " + format_value(norm) + " (loss " +
                                      format_value(r.loss) + ")");
  optimizer_.step();

  const double seconds = seconds_since(start);
  ++step_;
  ++batch_;
  ++session_steps_;
  session_step_seconds_ += seconds;
  summary_.steps = step_;
  summary_.losses.push_back(r.loss);
  window_.add(r, norm, seconds);
  epoch_meter_.add(r, norm, seconds);
  report_step();
  return true;
}

RunPosition Run::position() const {
  RunPosition at{epoch_ + 1, options_.epochs, batch_, batches_,
                 step_, planned_, optimizer_.lr(), -1};
  if (session_steps_ > 0)
    at.eta_seconds = session_step_seconds_ / static_cast<double>(session_steps_) *
                     static_cast<double>(planned_ - step_);
  return at;
}

void Run::report_step() {
  const bool log_now = options_.log_every > 0 && step_ % options_.log_every == 0;
  // The bar shows the epoch so far; log lines and JSONL records the steps since the last line.
  progress_.bar(status_line(position(), epoch_meter_, true), log_now || batch_ == batches_);
  if (!log_now) return;
  if (!progress_.tty()) progress_.line(status_line(position(), window_, false));
  json record = {{"type", "step"},          {"step", step_},
                 {"epoch", epoch_ + 1},        {"batch", batch_},
                 {"loss", window_.mean_loss()}, {"lr", optimizer_.lr()},
                 {"grad_norm", window_.mean_grad_norm()}, {"items_per_s", window_.items_per_second()}};
  if (window_.has_accuracy()) record["accuracy"] = window_.accuracy();
  log_.write(record);
  window_ = Meter{};
}

bool Run::end_epoch(const Evaluate& evaluate) {
  const std::int64_t done = epoch_ + 1;
  const bool due = options_.eval_every > 0 &&
                   (done % options_.eval_every == 0 || done == options_.epochs);
  const bool evaluating = due && evaluate && root_;  // process 0 reports
  if (evaluating) {
    model_.eval();
    try {
      NoGradGuard no_grad;
      summary_.last_eval = evaluate();
    } catch (...) {
      model_.train();
      throw;
    }
    model_.train();
  }
  const double seconds = seconds_since(epoch_start_);
  epoch_finished_ = true;
  summary_.epochs_done = epoch_ + 1;

  std::ostringstream line;
  line << "epoch " << epoch_ + 1 << "/" << options_.epochs << " done in "
       << format_duration(seconds) << " (step " << step_ << ")";
  json record = {{"type", "epoch"}, {"epoch", epoch_ + 1}, {"step", step_},
                 {"lr", optimizer_.lr()}, {"seconds", seconds}};
  if (epoch_meter_.steps > 0) {
    line << "  train loss " << format("%.4f", epoch_meter_.mean_loss());
    record["train_loss"] = epoch_meter_.mean_loss();
    if (epoch_meter_.has_accuracy()) {
      line << " acc " << format("%.4f", epoch_meter_.accuracy());
      record["train_accuracy"] = epoch_meter_.accuracy();
    }
    record["items_per_s"] = epoch_meter_.items_per_second();
  }
  if (evaluating) {
    line << "  " << options_.eval_split;
    for (const auto& [name, value] : summary_.last_eval) {
      line << " " << name << " " << format("%.4f", value);
      record[options_.eval_split + "_" + name] = value;
    }
  }
  progress_.result(line.str());
  log_.write(record);
  const bool save_due = done % options_.save_every == 0 || done == options_.epochs;
  return save_due ? save() : true;
}

// A new run's first log record, and every process starting from process 0's parameters.
void Run::start() {
  // Marks where this run's records begin (a directory whose earlier run never saved a
  // checkpoint, e.g. one stopped by a NaN, can hold another run's log before it).
  const std::string& text = options_.log_config.empty() ? options_.config : options_.log_config;
  json config = text.empty() ? json() : json::parse(text, nullptr, false);
  if (config.is_discarded()) config = text;  // not JSON: kept as the task wrote it
  log_.write({{"type", "start"},
              {"epochs", options_.epochs},
              {"batches_per_epoch", batches_},
              {"processes", processes_.size()},
              {"threads", parallel_.threads()},
              {"config", config}});
  start_from_process_0(processes_, params_);
}

// Every process stops after the same step when any of them was interrupted.
bool Run::interrupted() { return processes_.any(StopSignalGuard::stop_signal() != 0); }

TrainSummary Run::fit(const Evaluate& evaluate) {
  started_ = Clock::now();
  params_ = model_.parameters();
  if (options_.resume) resume();
  else start();
  StopSignalGuard signals(options_.quiet || !root_);
  model_.train();
  for (; epoch_ < options_.epochs;
       ++epoch_, batch_ = 0, epoch_finished_ = false, epoch_begun_ = false) {
    if (epoch_finished_) continue;
    if (!epoch_begun_) data_.begin_epoch(epoch_);
    epoch_begun_ = true;
    epoch_start_ = Clock::now();
    if (batch_ == 0) epoch_meter_ = Meter{};  // resumed mid-epoch: the saved sums go on
    while (batch_ < batches_) {
      if (budget_reached()) return end(Ending::max_steps);  // resuming a run that used its budget
      if (!train_step()) return end(Ending::non_finite);
      if (interrupted())  // even after the last batch: evaluation can wait for the resume
        return end(save() ? Ending::interrupted : Ending::non_finite);
      if (batch_ == batches_) break;  // the epoch's end saves a checkpoint anyway
      if (budget_reached()) return end(save() ? Ending::max_steps : Ending::non_finite);
      if (options_.checkpoint_every > 0 && step_ % options_.checkpoint_every == 0 && !save())
        return end(Ending::non_finite);
    }
    if (!end_epoch(evaluate)) return end(Ending::non_finite);
    if (interrupted()) return end(Ending::interrupted);
    if (budget_reached()) return end(Ending::max_steps);
  }
  return end(Ending::finished);
}

// Says why the run ends (a non-finite value has been reported where it was found), and sums up.
TrainSummary Run::end(Ending ending) {
  const std::string saved = checkpoint_path_.empty() ? std::string()
                                                     : "; checkpoint saved to " + checkpoint_path_;
  switch (ending) {
    case Ending::finished:  // the log says so: a finished run differs from a crashed one (whose
                            // log just ends) or one stopped early; the app prints the result
      log_.write({{"type", "stop"},
                  {"reason", "finished"},
                  {"step", step_},
                  {"message", "finished " + std::to_string(options_.epochs) + " epoch" +
                                  (options_.epochs == 1 ? "" : "s") + " after step " +
                                  std::to_string(step_)}});
      break;
    case Ending::non_finite:
      summary_.stopped_non_finite = true;
      break;
    case Ending::interrupted: {
      summary_.interrupted = true;
      const int signal = StopSignalGuard::stop_signal();
      stop("interrupted",
           std::string("interrupted by ") +
               (signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT"
                                                                 : "a signal to another process") +
               " after step " + std::to_string(step_) +
               (saved.empty() ? "; nothing was saved (no output directory)"
                              : saved + ". To continue: " +
                                    (options_.resume_command.empty()
                                         ? std::string("run again with resume")
                                         : options_.resume_command)));
      break;
    }
    case Ending::max_steps:
      stop("max_steps", "reached max_steps = " + std::to_string(options_.max_steps) +
                            (saved_step_ == step_ ? saved : std::string()),
           /*loud=*/false);
      break;
  }
  progress_.clear();
  summary_.seconds = seconds_since(started_);
  return summary_;
}

}  // namespace

Trainer::Trainer(nn::Model& model, BatchSource& data, const nn::Loss& loss, Optimizer& optimizer,
                 const LrSchedule& schedule, TrainerOptions options)
    : model_(model),
      data_(data),
      loss_(loss),
      optimizer_(optimizer),
      schedule_(schedule),
      options_(std::move(options)) {
  options_.validate();
}

std::string Trainer::checkpoint_path() const {
  if (options_.out_dir.empty()) return "";
  return (std::filesystem::path(options_.out_dir) / "checkpoint.safetensors").string();
}

std::string Trainer::log_path() const {
  if (options_.out_dir.empty()) return "";
  return (std::filesystem::path(options_.out_dir) / "log.jsonl").string();
}

TrainSummary Trainer::fit(const Evaluate& evaluate) {
  const std::int64_t batches = data_.batches_per_epoch();
  if (batches <= 0)
    fail("Trainer: the data has ", batches, " batches per epoch; it needs at least one");
  check_optimizer_of(optimizer_, model_);
  SingleProcess one;
  const RunDirectory directory(options_.out_dir, checkpoint_path(), options_.resume,
                               options_.reduction ? *options_.reduction : one);
  Run run(model_, data_, loss_, optimizer_, schedule_, options_, checkpoint_path(), log_path());
  if (!directory.note().empty()) run.say(directory.note());
  try {
    return run.fit(evaluate);
  } catch (const std::exception& e) {
    run.stop_on_error(e.what());  // the log says how the run ended; the caller prints the error
    throw;
  }
}

}  // namespace uwaga::optim
