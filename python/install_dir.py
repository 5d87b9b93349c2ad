"""Where this python reads pure-Python packages installed under a prefix.

    python3 install_dir.py PREFIX

Prints two lines: "own" when PREFIX is an install prefix of one of this interpreter's
sysconfig schemes (the default one, and Debian's deb_system), so that packages there are
on its sys.path, else "other"; then the package directory relative to PREFIX.

    Debian's /usr/bin/python3, prefix /usr/local: own, lib/python3.11/dist-packages
      (its default scheme is posix_local: {base}/local/lib/python3.X/dist-packages)
    Debian's /usr/bin/python3, prefix /usr: own, lib/python3/dist-packages (deb_system)
    a python built with prefix P (pyenv, a venv), prefix P: own, lib/python3.X/site-packages
    any python, another prefix: other, the default scheme's purelib with base = PREFIX,
      relative to that scheme's data directory (its install prefix)

python/CMakeLists.txt runs it at configure time for CMAKE_INSTALL_PREFIX (the default of
IC_PYTHON_INSTALL_DIR); tests/python/check_install.py checks the answer against the
interpreter's own site directories.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from typing import Dict, List, Optional, Tuple


def _default_scheme() -> str:
    get = getattr(sysconfig, "get_default_scheme", None)
    if get is not None:
        return str(get())
    return str(sysconfig._get_default_scheme())  # type: ignore[attr-defined]  # python < 3.10


def _relative(paths: Dict[str, str]) -> Optional[str]:
    data = os.path.normpath(paths["data"])
    purelib = os.path.normpath(paths["purelib"])
    if os.path.commonpath([data, purelib]) != data or data == purelib:
        return None
    return os.path.relpath(purelib, data)


def install_dir(prefix: str) -> Tuple[bool, str]:
    """(whether prefix is one of this interpreter's, the package dir relative to it)."""
    prefix = os.path.normpath(os.path.abspath(prefix))
    default = _default_scheme()
    schemes: List[str] = [default]
    if "deb_system" in sysconfig.get_scheme_names() and default != "deb_system":
        schemes.append("deb_system")
    for scheme in schemes:
        paths = sysconfig.get_paths(scheme)
        rel = _relative(paths)
        if rel is not None and os.path.normpath(paths["data"]) == prefix:
            return True, rel
    base = {"base": prefix, "platbase": prefix, "installed_base": prefix, "installed_platbase": prefix}
    paths = sysconfig.get_paths(default, vars=base)
    rel = _relative(paths)
    if rel is None:
        v = sys.version_info
        rel = os.path.join("lib", f"python{v[0]}.{v[1]}", "site-packages")
    return False, rel


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print("usage: install_dir.py PREFIX", file=sys.stderr)
        return 2
    own, rel = install_dir(argv[0])
    print("own" if own else "other")
    print(rel.replace(os.sep, "/"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
