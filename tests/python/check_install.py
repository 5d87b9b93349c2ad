"""The installed Python package, alone: cmake --install into a temp prefix, then a python
with a clean environment (no IC_LIBRARY, not in the source tree, only the installed
package on PYTHONPATH) imports ic, finds the installed libic through _install_paths.py,
reads ic_cdef.h from the package and runs a graph on the ref backend.

    check_install.py CMAKE BUILD_DIR IC_PYTHON_INSTALL_DIR

Run by ctest (python_install); exit 77 (skip) when IC_PYTHON_INSTALL_DIR is absolute
(the package would not land under the temp prefix).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHECK = r'''
import array, os, sys
import ic
prefix = os.path.realpath(sys.argv[1])
lib = os.path.realpath(ic.library_path())
assert lib.startswith(prefix + os.sep), f"libic from {lib}, not from the installed prefix {prefix}"
assert os.path.realpath(ic.__file__).startswith(prefix + os.sep), ic.__file__
assert "ic_program_run" in ic.cdef()
g = ic.Graph()
n = g.symbol("n")
x = g.input("x", ic.f32, (n,))
g.output("y", ic.relu(x * 2.0 - 1.0))
prog = g.compile(backend="ref")
y = prog(array.array("f", [0.0, 1.0, 2.0]))
values = y.tolist() if isinstance(y, ic.Tensor) else [float(v) for v in y]
assert values == [0.0, 1.0, 3.0], values
print(f"installed ic {ic.version()} from {lib}: ok")
'''


def main() -> int:
    cmake, build, pydir = sys.argv[1], sys.argv[2], sys.argv[3]
    if os.path.isabs(pydir):
        print(f"SKIP: IC_PYTHON_INSTALL_DIR={pydir} is absolute: it does not install under a temp prefix")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "prefix"
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
        # A clean environment: nothing of the build or source tree is reachable.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(prefix / pydir),
               "HOME": tmp, "IC_CACHE": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}
        for keep in ("LD_PRELOAD", "ASAN_OPTIONS"):  # sanitizer builds
            if keep in os.environ:
                env[keep] = os.environ[keep]
        r = subprocess.run([sys.executable, "-c", CHECK, str(prefix)], cwd=tmp, env=env, capture_output=True,
                           text=True)
        sys.stdout.write(r.stdout)
        sys.stdout.write(r.stderr)
        if r.returncode:
            print("FAIL: the installed package")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
