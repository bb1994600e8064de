#pragma once
// What a Trainer is asked to do (optim/trainer.h): how long, how to split each batch across
// threads and processes, where the files go, how often it logs, saves and evaluates.
#include <cstdint>
#include <string>

#include "optim/data_parallel.h"
#include "optim/gradient_reduction.h"

namespace uwaga::optim {

struct TrainerOptions {
  std::int64_t epochs = 1;
  std::int64_t max_steps = 0;         // 0: no limit; counts steps across resumes
  double clip_norm = 0.0;             // 0: only measure the gradient norm
  DataParallelOptions parallel;       // replicas (threads) and micro-batch size
  GradientReduction* reduction = nullptr;  // across processes; none: one process
  std::uint64_t seed = 0;             // of the dropout masks (one seed drawn per step)
  std::string out_dir;                // checkpoint.safetensors and log.jsonl; empty: no files
  bool resume = false;                // continue from out_dir/checkpoint.safetensors; without
                                      // it, an out_dir holding one is refused, not overwritten
  std::string config;                 // the run's configuration (JSON), kept in checkpoints
  std::string log_config;             // the same as the log's first record shows it; empty:
                                      // config (a configuration carrying large tables, e.g. GPT-2's
                                      // vocabulary, leaves them to the checkpoint)
  std::string eval_split = "test";    // what evaluate() measures, as the log names it
  std::int64_t log_every = 50;        // steps between log lines (and JSONL records); 0: none
  std::int64_t checkpoint_every = 0;  // steps between checkpoints; 0: only at epoch ends
  std::int64_t save_every = 1;        // epochs between epoch-end checkpoints (the last epoch, an
                                      // interruption and max_steps always save one)
  std::int64_t eval_every = 1;        // epochs between evaluations (the last epoch is always
                                      // evaluated); 0: never
  bool quiet = false;                 // no progress and no epoch lines (errors still print)
  std::string resume_command;         // printed after an interruption, e.g. "uwaga-vit --resume"

  // Throws an Error naming the offending field when the options cannot work.
  void validate() const;
};

}  // namespace uwaga::optim
