// uwaga.optim: parameter groups, SGD / Adam / AdamW, learning-rate schedules, clipping,
// checkpoints, and the Trainer (with the apps' tasks or a task written in Python).
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

// A TrainTask whose methods are written in Python (subclass uwaga.optim.TrainTask). Each method
// checks what the Python one returned and names the method when it is the wrong type (pybind11's
// own cast error names neither). The trainer runs without the GIL; each call takes it back.
class PyTrainTask : public TrainTask {
 public:
  nn::Module& model() override {
    py::gil_scoped_acquire gil;
    py::object m = call("model");
    if (!py::isinstance<nn::Module>(m)) throw wrong_return("model", "a uwaga.nn.Module", m);
    // The trainer gets a reference; a model() that builds a new module on each call would leave
    // it dangling, so the module it returned last is kept alive here.
    model_ = m.cast<std::shared_ptr<nn::Module>>();
    return *model_;
  }
  std::int64_t batches_per_epoch() const override {
    py::gil_scoped_acquire gil;
    py::object n = call("batches_per_epoch");
    if (!PyIndex_Check(n.ptr()) || py::isinstance<py::bool_>(n))
      throw wrong_return("batches_per_epoch", "an int", n);
    return n.cast<std::int64_t>();
  }
  void begin_epoch(std::int64_t epoch) override {
    py::gil_scoped_acquire gil;
    call("begin_epoch", epoch);  // whatever it returns is ignored
  }
  StepResult train_batch(std::int64_t index) override {
    py::gil_scoped_acquire gil;
    py::object r = call("train_batch", index);
    if (!py::isinstance<StepResult>(r))
      throw wrong_return("train_batch", "a uwaga.optim.StepResult(loss, items)", r);
    return r.cast<StepResult>();
  }
  Metrics evaluate() override {
    py::gil_scoped_acquire gil;
    py::object r = call("evaluate");
    const char* expected = "a dict of metric name (str) -> number";
    if (!py::isinstance<py::dict>(r)) throw wrong_return("evaluate", expected, r);
    Metrics metrics;
    for (auto [name, value] : r.cast<py::dict>()) {
      const auto bad = [&](const py::handle& what, const std::string& role) {
        return py::type_error("TrainTask.evaluate() must return " + std::string(expected) + "; " +
                              role + " " + std::string(py::repr(what)) + " is " + type_name(what));
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
  }
  std::string config_json() const override {
    py::gil_scoped_acquire gil;
    py::object r = call("config_json");
    if (!py::isinstance<py::str>(r)) throw wrong_return("config_json", "a str (JSON)", r);
    return r.cast<std::string>();
  }

 private:
  // The Python subclass's method `name`, called; NotImplementedError when it has none.
  template <class... Args>
  py::object call(const char* name, Args... args) const {
    py::function f = py::get_override(static_cast<const TrainTask*>(this), name);
    if (!f) {
      PyErr_Format(PyExc_NotImplementedError, "a TrainTask subclass must define %s()", name);
      throw py::error_already_set();
    }
    return f(args...);
  }
  static py::type_error wrong_return(const char* method, const char* expected,
                                     const py::handle& got) {
    return py::type_error("TrainTask." + std::string(method) + "() must return " + expected +
                          ", got " + type_name(got));
  }

  std::shared_ptr<nn::Module> model_;  // what model() returned last
};

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
      .def("state", &Optimizer::state)
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
  py::class_<StepResult>(m, "StepResult")
      .def(py::init([](Tensor loss, std::int64_t items, std::int64_t correct) {
             return StepResult{std::move(loss), items, correct};
           }),
           py::arg("loss"), py::arg("items"), py::arg("correct") = -1)
      .def_readwrite("loss", &StepResult::loss)
      .def_readwrite("items", &StepResult::items)
      .def_readwrite("correct", &StepResult::correct);
  py::class_<TrainTask, PyTrainTask>(m, "TrainTask",
                                     "What to train: subclass it and define model() (a "
                                     "uwaga.nn.Module), batches_per_epoch() (an int), "
                                     "begin_epoch(e), train_batch(i) (a StepResult), "
                                     "evaluate() (a dict name -> number) and config_json() "
                                     "(a str).")
      .def(py::init<>())
      .def("model", &TrainTask::model, py::return_value_policy::reference_internal)
      .def("batches_per_epoch", &TrainTask::batches_per_epoch)
      .def("begin_epoch", &TrainTask::begin_epoch, py::arg("epoch"))
      .def("train_batch", &TrainTask::train_batch, py::arg("index"))
      .def("evaluate", &TrainTask::evaluate)
      .def("config_json", &TrainTask::config_json);

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
      .def_readwrite("evaluate_each_epoch", &TrainerOptions::evaluate_each_epoch)
      .def_readwrite("quiet", &TrainerOptions::quiet);
  py::class_<TrainSummary>(m, "TrainSummary")
      .def_readonly("steps", &TrainSummary::steps)
      .def_readonly("epochs_done", &TrainSummary::epochs_done)
      .def_readonly("interrupted", &TrainSummary::interrupted)
      .def_readonly("stopped_non_finite", &TrainSummary::stopped_non_finite)
      .def_readonly("message", &TrainSummary::message)
      .def_readonly("last_eval", &TrainSummary::last_eval)
      .def_readonly("seconds", &TrainSummary::seconds)
      .def_readonly("losses", &TrainSummary::losses);
  // The trainer keeps references to the task, the optimizer and the schedule.
  py::class_<Trainer>(m, "Trainer")
      .def(py::init<TrainTask&, Optimizer&, const LrSchedule&, TrainerOptions>(),
           py::arg("task"), py::arg("optimizer"), py::arg("schedule"),
           py::arg("options") = TrainerOptions(), py::keep_alive<1, 2>(), py::keep_alive<1, 3>(),
           py::keep_alive<1, 4>())
      .def("fit", &Trainer::fit, py::call_guard<py::gil_scoped_release>(),
           "Trains; Python tasks take the GIL back in each of their methods.")
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
