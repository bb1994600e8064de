// uwaga.optim: parameter groups, SGD / Adam / AdamW, learning-rate schedules, clipping,
// checkpoints, and the Trainer (of any uwaga.nn.Model, with data and losses from C++ or Python).
#include <pybind11/stl.h>

#include "optim/adam.h"
#include "optim/checkpoint.h"
#include "optim/clip.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "optim/sgd.h"
#include "optim/trainer.h"
#include "notebooks/bindings/bindings.h"

namespace uwaga::python {
namespace {

using namespace optim;
using Metrics = std::map<std::string, double>;  // (a macro argument cannot hold the comma)

// The epoch-end evaluation, written in Python: a callable returning a dict of metric name (str)
// -> number. What it returns is checked and named when it is the wrong type (pybind11's own cast
// error names neither). The trainer runs without the GIL; the call takes it back.
Evaluate python_evaluate(py::object evaluate) {
  if (evaluate.is_none()) return {};
  if (!PyCallable_Check(evaluate.ptr()))
    throw py::type_error("Trainer.fit(evaluate=...) takes a callable, got " + type_name(evaluate));
  auto keep = std::make_shared<py::object>(std::move(evaluate));
  return [keep]() -> Metrics {
    py::gil_scoped_acquire gil;
    py::object r = (*keep)();
    const char* expected = "a dict of metric name (str) -> number";
    const auto wrong = [&](const std::string& what) {
      return py::type_error("evaluate() must return " + std::string(expected) + "; " + what);
    };
    if (!py::isinstance<py::dict>(r)) throw wrong("got " + type_name(r));
    Metrics metrics;
    for (auto [name, value] : r.cast<py::dict>()) {
      const auto bad = [&](const py::handle& what, const std::string& role) {
        return wrong(role + " " + std::string(py::repr(what)) + " is " + type_name(what));
      };
      if (!py::isinstance<py::str>(name)) throw bad(name, "the key");
      // A number, or anything with __float__ (NumPy scalars, one-element tensors).
      const double v = PyFloat_AsDouble(value.ptr());
      if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw bad(value, "the value of '" + name.cast<std::string>() + "',");
      }
      metrics[name.cast<std::string>()] = v;
    }
    return metrics;
  };
}

void bind_optimizers(py::module_& m) {
  py::class_<ParamGroup>(m, "ParamGroup")
      .def(py::init([](std::vector<std::string> names, std::vector<Tensor> params, double wd) {
             return ParamGroup{std::move(names), std::move(params), wd};
           }),
           py::arg("names"), py::arg("params"), py::arg("weight_decay") = 0.0)
      .def_readonly("names", &ParamGroup::names)
      .def_readonly("params", &ParamGroup::params)
      .def_readonly("weight_decay", &ParamGroup::weight_decay);
  m.def("default_no_decay", &default_no_decay, py::arg("name"), py::arg("param"));
  m.def("make_param_groups",
        [](const nn::Module& model, double wd) { return make_param_groups(model, wd); },
        py::arg("model"), py::arg("weight_decay"),
        "Two groups: decayed weights, and biases / norms / embeddings without decay.");

  py::class_<Optimizer>(m, "Optimizer")
      .def("step", &Optimizer::step)
      .def("zero_grad", &Optimizer::zero_grad)
      .def_property("lr", &Optimizer::lr, &Optimizer::set_lr)
      .def_property_readonly("steps", &Optimizer::steps)
      .def_property_readonly("groups", &Optimizer::groups)
      .def("state", [](const Optimizer& o) { return o.state(); })
      .def("load_state", &Optimizer::load_state, py::arg("state"));
  py::class_<Sgd, Optimizer>(m, "SGD")
      .def(py::init([](std::vector<ParamGroup> groups, double lr, double momentum, bool nesterov) {
             return new Sgd(std::move(groups), {lr, momentum, nesterov});
           }),
           py::arg("groups"), py::arg("lr") = 1e-3, py::arg("momentum") = 0.0,
           py::arg("nesterov") = false);
  auto adam_options = [](double lr, std::pair<double, double> betas, double eps) {
    return AdamOptions{lr, betas.first, betas.second, eps};
  };
  py::class_<Adam, Optimizer>(m, "Adam")
      .def(py::init([adam_options](std::vector<ParamGroup> groups, double lr,
                                   std::pair<double, double> betas, double eps) {
             return new Adam(std::move(groups), adam_options(lr, betas, eps));
           }),
           py::arg("groups"), py::arg("lr") = 1e-3,
           py::arg("betas") = std::make_pair(0.9, 0.999), py::arg("eps") = 1e-8);
  py::class_<AdamW, Adam>(m, "AdamW")
      .def(py::init([adam_options](std::vector<ParamGroup> groups, double lr,
                                   std::pair<double, double> betas, double eps) {
             return new AdamW(std::move(groups), adam_options(lr, betas, eps));
           }),
           py::arg("groups"), py::arg("lr") = 1e-3,
           py::arg("betas") = std::make_pair(0.9, 0.999), py::arg("eps") = 1e-8);

  m.def("clip_grad_norm", &clip_grad_norm, py::arg("params"), py::arg("max_norm"),
        "Scales every gradient by max_norm / ||g|| when ||g|| > max_norm; returns ||g||.");
}

void bind_schedules(py::module_& m) {
  py::class_<LrSchedule>(m, "LrSchedule")
      .def("lr", &LrSchedule::lr, py::arg("step"))
      .def("describe", &LrSchedule::describe)
      .def("__repr__", &LrSchedule::describe);
  py::class_<ConstantLr, LrSchedule>(m, "ConstantLr").def(py::init<double>(), py::arg("base"));
  py::class_<StepLr, LrSchedule>(m, "StepLr")
      .def(py::init<double, std::int64_t, double>(), py::arg("base"), py::arg("step_size"),
           py::arg("gamma"));
  py::class_<WarmupCosineLr, LrSchedule>(m, "WarmupCosineLr")
      .def(py::init<double, std::int64_t, std::int64_t, double>(), py::arg("base"),
           py::arg("warmup"), py::arg("total"), py::arg("floor") = 0.0);
}

void bind_checkpoints(py::module_& m) {
  py::class_<CheckpointInfo>(m, "CheckpointInfo")
      .def(py::init<>())
      .def_readwrite("step", &CheckpointInfo::step)
      .def_readwrite("epoch", &CheckpointInfo::epoch)
      .def_readwrite("batch_in_epoch", &CheckpointInfo::batch_in_epoch)
      .def_readwrite("epoch_finished", &CheckpointInfo::epoch_finished)
      .def_readwrite("lr", &CheckpointInfo::lr)
      .def_readwrite("config", &CheckpointInfo::config)
      .def_readwrite("task_state", &CheckpointInfo::task_state);
  m.def("save_checkpoint", &save_checkpoint, py::arg("path"), py::arg("model"),
        py::arg("optimizer") = nullptr, py::arg("info") = CheckpointInfo());
  m.def("load_checkpoint", &load_checkpoint, py::arg("path"), py::arg("model"),
        py::arg("optimizer") = nullptr);
  m.def("read_checkpoint_info", &read_checkpoint_info, py::arg("path"));
}

void bind_trainer(py::module_& m) {
  py::class_<TrainerOptions>(m, "TrainerOptions")
      .def(py::init([](const py::kwargs& kw) {
        py::object self = py::cast(TrainerOptions{});
        for (auto item : kw) py::setattr(self, item.first, item.second);
        return self.cast<TrainerOptions>();
      }))
      .def_readwrite("epochs", &TrainerOptions::epochs)
      .def_readwrite("max_steps", &TrainerOptions::max_steps)
      .def_readwrite("clip_norm", &TrainerOptions::clip_norm)
      .def_readwrite("out_dir", &TrainerOptions::out_dir)
      .def_readwrite("resume", &TrainerOptions::resume)
      .def_readwrite("log_every", &TrainerOptions::log_every)
      .def_readwrite("checkpoint_every", &TrainerOptions::checkpoint_every)
      .def_readwrite("eval_every", &TrainerOptions::eval_every)
      .def_readwrite("quiet", &TrainerOptions::quiet)
      .def_property(
          "threads", [](const TrainerOptions& o) { return o.parallel.threads; },
          [](TrainerOptions& o, int threads) { o.parallel.threads = threads; },
          "replicas of the model, one per thread (0: all of uwaga's threads)")
      .def_property(
          "micro_batch", [](const TrainerOptions& o) { return o.parallel.micro_batch; },
          [](TrainerOptions& o, std::int64_t rows) { o.parallel.micro_batch = rows; },
          "most rows per forward/backward pass (0: a thread's whole share)")
      .def_readwrite("seed", &TrainerOptions::seed)
      .def_readwrite("config", &TrainerOptions::config)
      .def_readwrite("eval_split", &TrainerOptions::eval_split);
  py::class_<TrainSummary>(m, "TrainSummary")
      .def_readonly("steps", &TrainSummary::steps)
      .def_readonly("epochs_done", &TrainSummary::epochs_done)
      .def_readonly("interrupted", &TrainSummary::interrupted)
      .def_readonly("stopped_non_finite", &TrainSummary::stopped_non_finite)
      .def_readonly("message", &TrainSummary::message)
      .def_readonly("last_eval", &TrainSummary::last_eval)
      .def_readonly("seconds", &TrainSummary::seconds)
      .def_readonly("losses", &TrainSummary::losses);
  // The trainer keeps references to the model, the data, the loss, the optimizer and the schedule.
  py::class_<Trainer>(m, "Trainer",
                      "Trains `model` (a uwaga.nn.Model) on `data` (a uwaga.data.BatchSource) "
                      "with `loss` (a uwaga.nn.Loss).")
      .def(py::init<nn::Model&, BatchSource&, const nn::Loss&, Optimizer&, const LrSchedule&,
                    TrainerOptions>(),
           py::arg("model"), py::arg("data"), py::arg("loss"), py::arg("optimizer"),
           py::arg("schedule"), py::arg("options") = TrainerOptions(), py::keep_alive<1, 2>(),
           py::keep_alive<1, 3>(), py::keep_alive<1, 4>(), py::keep_alive<1, 5>(),
           py::keep_alive<1, 6>())
      .def(
          "fit",
          [](Trainer& trainer, py::object evaluate) {
            const Evaluate each_epoch = python_evaluate(std::move(evaluate));
            py::gil_scoped_release release;
            return trainer.fit(each_epoch);
          },
          py::arg("evaluate") = py::none(),
          "Trains; evaluate() (a dict name -> number) runs after every epoch. Python data and "
          "losses take the GIL back in each of their methods.")
      .def("checkpoint_path", &Trainer::checkpoint_path)
      .def("log_path", &Trainer::log_path);
}

}  // namespace

void bind_optim(py::module_& m) {
  bind_optimizers(m);
  bind_schedules(m);
  bind_checkpoints(m);
  bind_trainer(m);
}

}  // namespace uwaga::python
