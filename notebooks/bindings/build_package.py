"""pip install . -- the `uwaga` package as the project's CMake build makes it (pyproject.toml).

setuptools compiles nothing: build_py runs CMake on one build directory, builds the target
uwaga_python there (nothing to do when it is up to date) and copies the package CMake wrote,
<build>/notebooks/uwaga/, into the wheel -- the very files the notebooks import from a build tree.

The build directory: $UWAGA_BUILD_DIR, else build/ at the repository root (the one apps/setup.sh
makes), so a tree already built is not compiled again; one that does not exist yet is configured
here, for the Python that runs pip. setuptools' own files go under it too (python-wheel/,
uwaga.egg-info/), not into the source tree.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools.command.build import build
from setuptools.command.build_py import build_py
from setuptools.command.egg_info import egg_info
from wheel.bdist_wheel import bdist_wheel

ROOT = pathlib.Path(__file__).resolve().parents[2]


def project_version():
    """The version in CMakeLists.txt's project(uwaga VERSION x.y.z): one number for both."""
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(uwaga\s+VERSION\s+([0-9.]+)", text)
    if not match:
        raise SystemExit("uwaga: CMakeLists.txt has no project(uwaga VERSION ...)")
    return match.group(1)


VERSION = project_version()


def build_dir():
    given = os.environ.get("UWAGA_BUILD_DIR")
    return pathlib.Path(given).resolve() if given else ROOT / "build"


def cache_value(cache, key):
    """KEY:TYPE=VALUE in a CMakeCache.txt; None when absent."""
    for line in cache.read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and name.split(":")[0] == key:
            return value
    return None


def run(command):
    print("uwaga:", " ".join(str(c) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True)


def build_module():
    """Builds uwaga_python in build_dir(); returns the package directory CMake wrote."""
    build_path = build_dir()
    cache = build_path / "CMakeCache.txt"
    if not cache.exists():
        run(["cmake", "-S", ROOT, "-B", build_path, "-DCMAKE_BUILD_TYPE=Release",
             "-DUWAGA_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"])
    elif (cache_value(cache, "UWAGA_PYTHON") or "OFF").upper() not in ("ON", "1", "TRUE", "YES"):
        raise SystemExit(f"uwaga: {build_path} is configured without the Python bindings "
                         "(UWAGA_PYTHON is off: python3-dev and pybind11-dev missing, or a "
                         "sanitizer build); install them and reconfigure, or set "
                         "UWAGA_BUILD_DIR to a new directory")
    run(["cmake", "--build", build_path, "--target", "uwaga_python", "-j", str(os.cpu_count() or 1)])
    package = build_path / "notebooks" / "uwaga"
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if not (package / f"_uwaga{suffix}").exists():
        built = sorted(p.name for p in package.glob("_uwaga*"))
        raise SystemExit(f"uwaga: {package} holds {built or 'no module'}, not _uwaga{suffix} for "
                         f"this Python ({sys.executable}); set UWAGA_BUILD_DIR to a new "
                         "directory to build one for it")
    return package, suffix


class Build(build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = str(build_dir() / "python-wheel")


class EggInfo(egg_info):
    def initialize_options(self):
        super().initialize_options()
        self.egg_base = os.path.relpath(build_dir(), os.getcwd())


class BuildPy(build_py):
    def run(self):
        package, suffix = build_module()
        target = pathlib.Path(self.build_lib) / "uwaga"
        target.mkdir(parents=True, exist_ok=True)
        for path in [*sorted(package.glob("*.py")), package / f"_uwaga{suffix}"]:
            shutil.copy2(path, target / path.name)


class BdistWheel(bdist_wheel):
    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False  # a compiled module: the wheel is for this Python and platform
