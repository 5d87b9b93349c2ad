"""The installed Python package, with the interpreter whose install scheme placed it (the
one running this script; python/CMakeLists.txt picks it):

1. The configured place is one it reads: when the interpreter reads packages under
   CMAKE_INSTALL_PREFIX at all (one of its site directories lies there: /usr/local for
   Debian's /usr/bin/python3), PREFIX/IC_PYTHON_INSTALL_DIR must be one of them, so that
   ``cmake --install build --prefix PREFIX`` gives a package this python imports as it is.
2. cmake --install into a temp prefix that is the interpreter's own (a venv made from
   it, ``python -m venv --without-pip``; its site directories are found as the base
   interpreter's are, from its prefix); then that python, isolated (-I: no PYTHONPATH,
   no user site, not in the source tree) and without IC_LIBRARY, imports ic from the
   prefix, finds the installed libic through _install_paths.py, reads ic_cdef.h from the
   package and runs a graph on the ref backend. Where the venv does not read the
   configured directory (IC_PYTHON_INSTALL_DIR set to another layout) or no venv can be
   made, the package is put on sys.path by hand instead, and the script says so.

    check_install.py CMAKE BUILD_DIR IC_PYTHON_INSTALL_DIR CMAKE_INSTALL_PREFIX

Run by ctest (python_install); exit 77 (skip) when IC_PYTHON_INSTALL_DIR is absolute
(the package would not land under the temp prefix).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

CHECK = r'''
import array, os, sys
import ic
prefix = os.path.realpath(sys.argv[1])
lib = os.path.realpath(ic.library_path())
assert lib.startswith(prefix + os.sep), f"libic from {lib}, not from the installed prefix {prefix}"
assert os.path.realpath(ic.__file__).startswith(prefix + os.sep), ic.__file__
assert "ic_program_run" in ic.cdef()
assert ic.ShapeMismatchError.__module__ == "ic"
g = ic.Graph()
n = g.symbol("n")
x = g.input("x", ic.f32, (n,))
g.output("y", ic.relu(x * 2.0 - 1.0))
prog = g.compile(backend="ref")
y = prog(array.array("f", [0.0, 1.0, 2.0]))
values = y.tolist() if isinstance(y, ic.Tensor) else [float(v) for v in y]
assert values == [0.0, 1.0, 3.0], values
print(f"installed ic {ic.version()} from {lib}, imported by {sys.executable} from {ic.__file__}: ok")
'''

# The directories an interpreter reads packages from (whether they exist yet or not).
SITE_DIRS = "import json, site, sys; print(json.dumps(site.getsitepackages() + sys.path))"


def clean_env(home: str) -> Dict[str, str]:
    """Nothing of the build or source tree: no IC_LIBRARY, no PYTHONPATH."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "IC_CACHE": "0",
           "PYTHONDONTWRITEBYTECODE": "1"}
    for keep in ("LD_PRELOAD", "ASAN_OPTIONS"):  # sanitizer builds
        if keep in os.environ:
            env[keep] = os.environ[keep]
    return env


def site_dirs(python: str, home: str) -> List[str]:
    r = subprocess.run([python, "-I", "-c", SITE_DIRS], env=clean_env(home), cwd=home, capture_output=True,
                       text=True)
    if r.returncode:
        raise RuntimeError(f"{python}: {r.stderr}")
    return list(dict.fromkeys(os.path.normpath(p) for p in json.loads(r.stdout) if p))


def under(path: str, prefix: str) -> bool:
    return os.path.commonpath([path, prefix]) == prefix and path != prefix


def check_configured_place(pydir: str, install_prefix: str, home: str) -> bool:
    prefix = os.path.normpath(os.path.abspath(install_prefix))
    want = os.path.normpath(os.path.join(prefix, pydir))
    dirs = site_dirs(sys.executable, home)
    there = [d for d in dirs if under(d, prefix) and d.endswith(("site-packages", "dist-packages"))]
    if not there:
        print(f"note: {sys.executable} reads no packages under {prefix}: a package installed there "
              f"needs PYTHONPATH={want}")
        return True
    if want not in dirs:
        print(f"FAIL: cmake --install puts the package in {want}, which {sys.executable} does not read; "
              f"under {prefix} it reads {', '.join(there)}")
        return False
    print(f"{sys.executable} reads {want}: ok")
    return True


def make_venv(where: Path, home: str) -> Optional[Path]:
    r = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], env=clean_env(home), cwd=home,
                       capture_output=True, text=True)
    python = where / "bin" / "python"
    if r.returncode or not python.exists():
        print(f"note: no venv from {sys.executable} ({r.stderr.strip() or r.stdout.strip()})")
        return None
    return python


def main() -> int:
    cmake, build, pydir, install_prefix = sys.argv[1:5]
    if os.path.isabs(pydir):
        print(f"SKIP: IC_PYTHON_INSTALL_DIR={pydir} is absolute: it does not install under a temp prefix")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        if not check_configured_place(pydir, install_prefix, tmp):
            return 1
        prefix = Path(tmp) / "prefix"
        python = make_venv(prefix, tmp)
        r = subprocess.run([cmake, "--install", build, "--prefix", str(prefix)], capture_output=True, text=True)
        if r.returncode:
            print(r.stdout, r.stderr)
            print("FAIL: cmake --install")
            return 1
        pkg = prefix / pydir / "ic"
        for f in ("__init__.py", "py.typed", "ic_cdef.h", "_install_paths.py", "_lib.py"):
            if not (pkg / f).is_file():
                print(f"FAIL: {pkg / f} not installed")
                return 1
        if not list(prefix.glob("include/ic/ic_cdef.h")):
            print("FAIL: include/ic/ic_cdef.h not installed")
            return 1
        code = CHECK
        if python is not None and os.path.normpath(prefix / pydir) in site_dirs(str(python), tmp):
            print(f"the venv's python reads {prefix / pydir} by itself")
        else:
            print(f"note: {prefix / pydir} is not a directory a python with the prefix {prefix} reads; "
                  f"put on sys.path by hand")
            python = Path(sys.executable)
            code = f"import sys; sys.path.insert(0, {str(prefix / pydir)!r})\n" + CHECK
        r = subprocess.run([str(python), "-I", "-c", code, str(prefix)], cwd=tmp, env=clean_env(tmp),
                           capture_output=True, text=True)
        sys.stdout.write(r.stdout)
        sys.stdout.write(r.stderr)
        if r.returncode:
            print("FAIL: the installed package")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
