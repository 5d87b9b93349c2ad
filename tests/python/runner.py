"""Runs a Python command under an interpreter that has the modules a test needs.

    runner.py [--need MODULE]... [--want MODULE]... [--block MODULE]... -- ARGS...

ctest's python is whichever CMake found (pyenv, a venv, Debian's), while python3-mypy,
python3-cffi and python3-numpy install into Debian's /usr/bin/python3. So the
interpreter is picked at test time among this one, python3 on PATH and /usr/bin/python3:
the first that has every --need module (none: exit 77, ctest's skip, saying what is
missing), preferring those that have the --want modules. --block makes importing a module
fail (``sys.modules[name] = None``), so the suite runs as if numpy were not installed.
ARGS is ``-m module ...`` or ``script ...``, as for python itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import List

SKIP = 77


def _has(python: str, modules: List[str]) -> bool:
    if not modules:
        return True
    code = "import importlib.util, sys; sys.exit(0 if all(importlib.util.find_spec(m) for m in sys.argv[1:]) else 1)"
    try:
        return subprocess.run([python, "-c", code, *modules], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main(argv: List[str]) -> int:
    need: List[str] = []
    want: List[str] = []
    block: List[str] = []
    i = 0
    while i < len(argv) and argv[i] != "--":
        opt = argv[i]
        if opt not in ("--need", "--want", "--block") or i + 1 >= len(argv):
            print(f"runner.py: bad argument {opt!r}", file=sys.stderr)
            return 2
        {"--need": need, "--want": want, "--block": block}[opt].append(argv[i + 1])
        i += 2
    args = argv[i + 1:]
    if not args:
        print("runner.py: nothing to run (give -- ARGS)", file=sys.stderr)
        return 2

    candidates: List[str] = []
    for p in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if p and os.path.exists(p) and os.path.realpath(p) not in [os.path.realpath(c) for c in candidates]:
            candidates.append(p)
    usable = [p for p in candidates if _has(p, need)]
    if not usable:
        print(f"SKIP: no python3 with {', '.join(need)} (tried {', '.join(candidates)}); "
              f"on Debian: apt install {' '.join('python3-' + m for m in need)}")
        return SKIP
    python = next((p for p in usable if _has(p, want)), usable[0])
    missing = [m for m in want if not _has(python, [m])]
    note = f" (without {', '.join(missing)})" if missing else ""
    print(f"runner.py: {python}{note}{' blocking ' + ', '.join(block) if block else ''}", flush=True)

    if block:
        # Run the command inside a prelude that blocks the modules first.
        prelude = ("import runpy, sys\n"
                   f"sys.modules.update(dict.fromkeys({block!r}))\n"
                   "args = sys.argv[1:]\n"
                   "if args[0] == '-m':\n"
                   "    sys.argv = args[1:]\n"
                   "    runpy.run_module(args[1], run_name='__main__', alter_sys=True)\n"
                   "else:\n"
                   "    sys.argv = args\n"
                   "    runpy.run_path(args[0], run_name='__main__')\n")
        cmd = [python, "-c", prelude, *args]
    else:
        cmd = [python, *args]
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
