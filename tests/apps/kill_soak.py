#!/usr/bin/env python3
"""kill -9 soak: training runs of uwaga-vit, uwaga-translate, uwaga-gpt and of uwaga-vit on two
MPI processes are killed with SIGKILL again and again, in turn at a random moment and while a
checkpoint is being written, and after each kill the run is checked:

  - the checkpoint on disk is whole: it loads (the program's eval succeeds), and its step is at
    least that of the last save finished before the kill (a finished save is never lost);
  - the next run resumes from it (its log's "resume" record names that step), and once it has
    begun no temporary file of an earlier, killed save is left; nor is anything left in the
    programs' temporary directory (TMPDIR, one of the soak's own);
  - log.jsonl is whole lines of JSON (a line cut by a kill must be gone once the run resumes).

A kill "lands in the write" when the killed save's temporary file (checkpoint.safetensors.tmp.
<pid>.<n>) is still there after the process died: the kill came between its creation and the
rename. Kills meant for the write are sent the moment inotify reports the temporary file created,
written or closed (chosen at random, after letting 0 to 2 saves through), to the pid in its name
(process 0 under MPI). Random kills pick any training process (either rank under MPI).

At the end every run is resumed once more for 8 steps and must exit 0, its log must end with the
max_steps stop record, and nothing may be left behind. One line per kill, then a summary.

  python3 tests/apps/kill_soak.py --kills 50               # every program, build/apps/uwaga-*
  python3 tests/apps/kill_soak.py --kills 3 --programs gpt --gpt BUILD/apps/uwaga-gpt
A loss is a kill after which any check failed (or a final resume that did). Exit status 0 when
nothing was lost, 1 otherwise. Needs Linux (inotify) and, for vit and mpi,
MNIST in data/cache/mnist (bash data/fetch.sh mnist).
"""
import argparse
import ctypes
import json
import os
import random
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPORARY = re.compile(r"^checkpoint\.safetensors\.tmp\.(\d+)\.\d+$")

# ---- inotify, through libc --------------------------------------------------------------------
IN_MODIFY, IN_CLOSE_WRITE, IN_CREATE = 0x2, 0x8, 0x100
libc = ctypes.CDLL(None, use_errno=True)


class DirectoryWatch:
    """inotify events (mask, file name) of one directory's files."""

    def __init__(self, path):
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0 or libc.inotify_add_watch(
                self.fd, path.encode(), IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE) < 0:
            raise OSError(ctypes.get_errno(), "inotify on " + path)

    def events(self, timeout):
        if not select.select([self.fd], [], [], timeout)[0]:
            return []
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        out, at = [], 0
        while at + 16 <= len(data):  # struct inotify_event: wd, mask, cookie, len, name[len]
            _, mask, _, length = struct.unpack_from("iIII", data, at)
            out.append((mask, data[at + 16:at + 16 + length].rstrip(b"\0").decode()))
            at += 16 + length
        return out

    def close(self):
        os.close(self.fd)


# ---- files -------------------------------------------------------------------------------------
DAMAGED = -1


def checkpoint_step(path):
    """The step in a checkpoint's metadata; None when there is no file, DAMAGED when its header
    cannot be read."""
    try:
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            return int(json.loads(f.read(n))["__metadata__"]["step"])
    except FileNotFoundError:
        return None
    except (struct.error, ValueError, KeyError, UnicodeDecodeError):
        return DAMAGED


def log_records(path):
    """The complete lines of a log, as JSON (a last line without its newline may still be being
    written, or cut by a kill: left out). Raises ValueError naming a line that is not JSON."""
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except FileNotFoundError:
        return []
    records = []
    for n, line in enumerate(lines[:-1], 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            raise ValueError(f"line {n} is not JSON: {line[:80]!r}") from None
    return records


def temporaries(directory):
    """{pid: [names]} of the save temporaries in `directory`."""
    found = {}
    for name in os.listdir(directory):
        if m := TEMPORARY.match(name):
            found.setdefault(int(m.group(1)), []).append(name)
    return found


# ---- the runs ----------------------------------------------------------------------------------
class Program:
    """How to train, resume and evaluate one kind of run, in its own directory."""

    def __init__(self, name, command, train_args, eval_args, mpirun=None, delay=(0.05, 2.0)):
        self.name, self.command, self.mpirun, self.delay = name, command, mpirun, delay
        self.train_args, self.eval_args = train_args, eval_args
        self.dir = self.output = None
        self.records_seen = 0  # log records of the runs before this one
        self.resumes_checked = self.kills = self.in_write = 0

    @property
    def checkpoint(self):
        return os.path.join(self.dir, "checkpoint.safetensors")

    @property
    def log(self):
        return os.path.join(self.dir, "log.jsonl")

    def start(self, extra=()):
        resume = ["--resume"] if os.path.exists(self.checkpoint) else []
        argv = [self.command, "train", *self.train_args, "--out", self.dir, *resume, *extra]
        if self.mpirun:
            argv = [self.mpirun, "--oversubscribe", "--bind-to", "none", "-np", "2", *argv]
        with open(self.output, "wb") as out:  # progress lines: a pipe would fill and block
            return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def output_tail(self):
        with open(self.output, "rb") as f:
            return f.read().decode(errors="replace").strip()[-300:]

    def trainers(self, launcher):
        """The pids of the training processes (under mpirun: those of both ranks)."""
        if not self.mpirun:
            return [launcher.pid]
        pids = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    argv = f.read().split(b"\0")
            except OSError:
                continue
            if argv[0] == self.command.encode() and self.dir.encode() in argv:
                pids.append(int(entry))
        return pids

    def evaluate(self):
        r = subprocess.run([self.command, "eval", "--checkpoint", self.checkpoint,
                            *self.eval_args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=300)
        return r.returncode, r.stderr.decode(errors="replace").strip()[-300:]


def make_programs(args, work):
    text = os.path.join(work, "verses.txt")
    with open(text, "w") as f:
        f.write("ROMEO: what light breaks there?\nJULIET: it is the east.\n" * 2000)
    mnist = os.path.join(ROOT, "data", "cache", "mnist")
    # Four steps an epoch, and the end of every epoch saves: a checkpoint every fraction of a
    # second, so random kills land in all parts of a run. Models of 0.1 to 0.3 M parameters:
    # checkpoints of 1 to 3 MB take a few milliseconds to write, long enough to be hit.
    vit = ["--data-dir", mnist, "--train-size", "256", "--batch-size", "64", "--dim", "64",
           "--layers", "2", "--heads", "4", "--mlp-dim", "128", "--no-augment",
           "--epochs", "100000", "--threads", "1", "--log-every", "1"]
    made = {
        "gpt": Program("gpt", args.gpt,
                       ["--preset", "smoke", "--text", text, "--steps-per-epoch", "4",
                        "--dim", "128", "--layers", "2", "--heads", "4", "--mlp-dim", "256",
                        "--epochs", "100000", "--threads", "1", "--log-every", "1"],
                       ["--eval-windows", "20"]),
        "translate": Program("translate", args.translate,
                             ["--preset", "tiny", "--dim", "64", "--mlp-dim", "128",
                              "--train-size", "128", "--valid-size", "20",
                              "--test-size", "20", "--eval-size", "10", "--batch-size", "32",
                              "--epochs", "100000", "--threads", "1", "--log-every", "1"],
                             ["--eval-size", "10"]),
        "vit": Program("vit", args.vit, vit, ["--data-dir", mnist]),
        "mpi": Program("mpi", args.vit, vit, ["--data-dir", mnist], mpirun=args.mpirun,
                       delay=(0.5, 4.0)),
    }
    chosen = []
    for name in args.programs.split(","):
        if name not in made:
            sys.exit(f"kill_soak: unknown program {name!r} (vit, translate, gpt, mpi)")
        p = made[name]
        if not p.command or not os.access(p.command, os.X_OK):
            sys.exit(f"kill_soak: {name}: no program at {p.command!r}")
        if name == "mpi" and not (p.mpirun and os.access(p.mpirun, os.X_OK)):
            sys.exit("kill_soak: mpi: no mpirun (--mpirun PATH)")
        if name in ("vit", "mpi") and not os.path.exists(
                os.path.join(mnist, "t10k-labels-idx1-ubyte")):
            sys.exit(f"kill_soak: {name} needs MNIST in {mnist} (bash data/fetch.sh mnist)")
        p.dir = os.path.join(work, name)
        p.output = os.path.join(work, name + ".out")
        os.makedirs(p.dir)
        chosen.append(p)
    return chosen


# ---- the soak ----------------------------------------------------------------------------------
class Soak:
    def __init__(self, rng):
        self.rng = rng
        self.kills = self.in_write = 0
        self.current = None  # "kill 7", "final gpt": what a loss is counted against
        self.lost_in = set()

    @property
    def losses(self):
        return len(self.lost_in)

    def lost(self, program, why):
        self.lost_in.add(self.current)
        print(f"  LOSS ({program.name}): {why}", flush=True)

    def kill_once(self, p, in_write):
        """Starts (or resumes) p's run, kills it, and checks what it left."""
        self.current = f"kill {self.kills + 1}"
        before = checkpoint_step(p.checkpoint)
        watch = DirectoryWatch(p.dir)
        launcher = p.start()
        started = time.monotonic()
        deadline = started + (60 if in_write else self.rng.uniform(*p.delay))
        trigger = self.rng.choice([IN_CREATE, IN_MODIFY, IN_CLOSE_WRITE])
        skip = self.rng.randrange(3)  # saves to let through first
        armed = None  # the temporary whose event `trigger` kills
        victim, running, saved = None, [], None
        while victim is None:
            if launcher.poll() is not None:
                watch.close()
                self.lost(p, f"the run ended by itself ({launcher.returncode}): "
                             f"{p.output_tail()}")
                return
            for mask, name in watch.events(0.05 if in_write else 0.005):
                m = TEMPORARY.match(name)
                if not in_write or not m:
                    continue
                if mask & IN_CREATE:
                    if skip:
                        skip -= 1
                    else:
                        armed = name
                if name == armed and mask & trigger:
                    saved = checkpoint_step(p.checkpoint)  # the last save finished
                    running = p.trainers(launcher)
                    victim = int(m.group(1))
                    os.kill(victim, signal.SIGKILL)
                    break
            now = time.monotonic()
            if victim is None and now >= deadline:
                if in_write:
                    self.lost(p, "no checkpoint was saved within 60 s")
                    os.killpg(launcher.pid, signal.SIGKILL)
                    launcher.wait()
                    watch.close()
                    return
                running = p.trainers(launcher)
                if running:  # (under mpirun, once the ranks exist)
                    saved = checkpoint_step(p.checkpoint)
                    victim = self.rng.choice(running)
                    os.kill(victim, signal.SIGKILL)
        watch.close()
        try:
            launcher.wait(timeout=30)  # under mpirun the other rank must end as well
        except subprocess.TimeoutExpired:
            self.lost(p, "the run did not end within 30 s of the kill")
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        self.kills += 1
        p.kills += 1
        left = temporaries(p.dir)
        landed = victim in left
        self.in_write += landed
        p.in_write += landed
        after = checkpoint_step(p.checkpoint)
        print(f"kill {self.kills:2d}  {p.name:9s} {'in-write' if in_write else 'random':8s} "
              f"after {time.monotonic() - started:5.2f} s, "
              f"{'in the write' if landed else 'outside a write':15s}  checkpoint step "
              f"{before} -> {after}", flush=True)
        self.check_checkpoint(p, saved, after)
        self.check_log(p, before, left, set(running) | {victim})
        if stray := os.listdir(os.environ["TMPDIR"]):
            self.lost(p, f"left in the temporary directory: {stray}")
            for name in stray:
                os.remove(os.path.join(os.environ["TMPDIR"], name))

    def check_checkpoint(self, p, saved, after):
        if saved == DAMAGED:
            self.lost(p, "the checkpoint was damaged while the run went on")
        elif saved is not None and (after is None or after < saved):
            self.lost(p, f"the checkpoint of step {saved} was saved before the kill; now: {after}")
        if after is not None:
            rc, err = p.evaluate()
            if rc != 0:
                self.lost(p, f"the checkpoint does not load (eval exit {rc}): {err}")
                # Counted once: the run starts again rather than fail every kill from now on.
                shutil.rmtree(p.dir)
                os.makedirs(p.dir)
                p.records_seen = 0

    def check_log(self, p, before, left, this_run):
        try:
            records = log_records(p.log)
        except ValueError as e:  # a line cut by an earlier kill, not repaired
            self.lost(p, f"log.jsonl: {e}")
            return
        new = records[p.records_seen:]
        p.records_seen = len(records)
        begun = [r for r in new if r.get("type") in ("start", "resume")]
        if not begun:
            return  # killed before the run had begun (loading its data, say)
        if before is not None:
            if begun[0].get("type") != "resume" or begun[0].get("step") != before:
                self.lost(p, f"the run began with {begun[0]}, not a resume from step {before}")
            else:
                p.resumes_checked += 1
        stale = [name for pid, names in left.items() if pid not in this_run for name in names]
        if stale:
            self.lost(p, f"temporaries of earlier saves left once the run had begun: {stale}")

    def finish(self, p):
        """The run resumed once more for 8 steps: exit 0, a whole log, nothing left behind."""
        self.current = "final " + p.name
        step = checkpoint_step(p.checkpoint) or 0
        launcher = p.start(["--max-steps", str(step + 8)])
        try:
            launcher.wait(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
        if launcher.returncode != 0:
            self.lost(p, f"the last resume exited {launcher.returncode}: {p.output_tail()}")
            return
        left = [n for n in os.listdir(p.dir) if ".tmp." in n]
        if left:
            self.lost(p, f"left behind at the end: {left}")
        try:
            last = log_records(p.log)[-1]
            if last.get("type") != "stop" or last.get("reason") != "max_steps":
                self.lost(p, f"the log's last record is {last}")
        except ValueError as e:
            self.lost(p, f"log.jsonl at the end: {e}")
        if checkpoint_step(p.checkpoint) != step + 8:
            self.lost(p, f"the last resume saved step {checkpoint_step(p.checkpoint)}, "
                         f"not {step + 8}")
        rc, err = p.evaluate()
        if rc != 0:
            self.lost(p, f"the final checkpoint does not load: {err}")
        print(f"{p.name}: {p.kills} kills, {p.in_write} in the write, {p.resumes_checked} resumes "
              f"checked; resumed from step {step} to {step + 8} at the end: exit 0, log whole, "
              f"nothing left behind", flush=True)


def main():
    apps = os.path.join(ROOT, "build", "apps")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--programs", default="vit,translate,gpt,mpi",
                    help="comma-separated, from vit, translate, gpt, mpi (default: all four)")
    ap.add_argument("--gpt", default=os.path.join(apps, "uwaga-gpt"))
    ap.add_argument("--vit", default=os.path.join(apps, "uwaga-vit"))
    ap.add_argument("--translate", default=os.path.join(apps, "uwaga-translate"))
    ap.add_argument("--mpirun", default=shutil.which("mpirun"))
    ap.add_argument("--seed", type=int, default=1, help="of the kill moments")
    ap.add_argument("--keep", action="store_true", help="keep the runs' directories")
    args = ap.parse_args()
    for name, value in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                        ("OMP_WAIT_POLICY", "PASSIVE")):
        os.environ.setdefault(name, value)
    work = tempfile.mkdtemp(prefix="uwaga-kill-soak-")
    os.environ["TMPDIR"] = os.path.join(work, "tmp")  # the programs' (mpirun's too)
    os.makedirs(os.environ["TMPDIR"])
    try:
        runs = make_programs(args, work)
        soak = Soak(random.Random(args.seed))
        start = time.monotonic()
        for i in range(args.kills):  # each program in turn; random, then in-write, and so on
            soak.kill_once(runs[i % len(runs)], in_write=(i // len(runs)) % 2 == 1)
        for p in runs:
            soak.finish(p)
        print(f"{soak.kills} kills, {soak.losses} losses, {soak.in_write} in the write of a "
              f"checkpoint ({time.monotonic() - start:.0f} s)")
        return 1 if soak.losses else 0
    finally:
        if args.keep:
            print("the runs are in", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
