"""Ahead-of-time compiled BLEU/chrF/TER kernels: the numba kernels of ``_kernels`` and
``_ter_kernels`` built once into a plain extension module, so that a process loads them in
milliseconds without importing numba.

numba's JIT cache still costs a process about half a CPU-second to load (numba itself, its typing
registries, scipy's BLAS bindings); a short ``xleval score`` spends more on that than on scoring.
:func:`load` imports the compiled module from the cache folder when one was built from the current
kernel source (the file name carries a hash of the kernel sources, numba's and Python's versions);
:func:`build` compiles it with ``numba.pycc`` (needs numba and a C compiler; about a minute).
The compiled functions are the same numba code with fixed argument types, so their integer
results are the JIT kernels' (tests compare them).
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import logging
import os
import shutil
import sys
import sysconfig
import tempfile
import warnings
from pathlib import Path
from types import ModuleType

__all__ = ["load", "build", "cache_dir", "module_name", "SIGNATURES"]

logger = logging.getLogger(__name__)

# exported name -> numba signature (argument types as _fast passes them)
SIGNATURES = {
    "tokenize_re": "Tuple((i4[::1], i8[::1], i8[::1]))(i4[::1], i8[::1], i8, b1[::1], b1[::1], b1[::1], "
                   "i4[::1], i8[::1], i4[::1], i8[::1])",
    "strip_space": "Tuple((i4[::1], i8[::1]))(i4[::1], i8[::1], b1[::1])",
    "intern_tokens": "Tuple((i4[::1], i8))(i4[::1], i8[::1])",
    "clipped_matches": "i8[:, ::1](i4[::1], i8[::1], i8[::1], i8[:, :], i8)",
    "clipped_matches_shared": "i8[:, ::1](i4[::1], i8[::1], i8[::1], i8[::1], i8)",
    "gather_lines": "Tuple((i4[::1], i8[::1]))(i4[::1], i8[::1], i8[::1])",
    "utf8_units": "Tuple((i4[::1], i8[::1], b1))(u1[::1], i8[::1])",
    "edit_rates": "Tuple((i8[::1], i1[::1]))(i8[::1], i8[::1], i8[::1], i8[::1])",
}
# exported name -> the module of its numba source, when not _kernels
_SOURCES = {"edit_rates": "_ter_kernels"}


def _kernel_sources() -> list[Path]:
    return [Path(__file__).with_name(f"{name}.py") for name in ("_kernels", *sorted(set(_SOURCES.values())))]


def module_name() -> str:
    """``_xleval_kernels_<hash>``: the hash covers the kernel source, this file, numba and Python."""
    digest = hashlib.sha256()
    for path in (*_kernel_sources(), Path(__file__)):
        digest.update(path.read_bytes())
    from .._base.versions import installed_version

    numba = installed_version("numba")
    if numba:
        digest.update(numba.encode())
    digest.update(sys.version.encode())
    return f"_xleval_kernels_{digest.hexdigest()[:16]}"


def cache_dir() -> Path:
    """``$XLEVAL_CACHE_DIR/kernels``, else ``$XDG_CACHE_HOME/xleval/kernels`` (``~/.cache/...``)."""
    base = os.environ.get("XLEVAL_CACHE_DIR")
    if base:
        return Path(base) / "kernels"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "xleval" / "kernels"


def _path(name: str) -> Path:
    return cache_dir() / (name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))


def load() -> ModuleType | None:
    """The compiled kernels of the current source, or None when they have not been built."""
    name = module_name()
    if name in sys.modules:
        return sys.modules[name]
    path = _path(name)
    if not path.is_file():
        return None
    try:
        spec = importlib.util.spec_from_file_location(name, path,
                                                      loader=importlib.machinery.ExtensionFileLoader(name, str(path)))
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except ImportError as err:  # a broken or foreign build: ignore it, the JIT kernels run
        logger.warning("compiled kernels at %s unusable (%s); using numba's JIT", path, err)
        return None
    sys.modules[name] = module
    return module


def build() -> Path:
    """Compile the kernels into the cache folder (atomically) and return the module's path."""
    name = module_name()
    target = _path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc is "pending deprecation"; it is what builds AOT today
        from numba.pycc import CC

        cc = CC(name)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            cc.output_dir = tmp
            for export, signature in SIGNATURES.items():
                source = importlib.import_module(f"{__package__}.{_SOURCES.get(export, '_kernels')}")
                cc.export(export, signature)(_wrapper(getattr(source, export)))
            with _quiet_build():
                cc.compile()
            built = next(Path(tmp).glob(name + "*"))
            os.replace(built, target)
    for stale in target.parent.glob("_xleval_kernels_*"):
        if stale != target:
            with contextlib.suppress(OSError):
                stale.unlink()
    return target


def _wrapper(kernel):
    """A plain function calling the njit kernel (pycc exports Python functions, compiled with numba)."""
    from numba import njit

    inner = njit(kernel.py_func)
    n_args = kernel.py_func.__code__.co_argcount
    namespace = {"inner": inner}
    args = ", ".join(f"a{i}" for i in range(n_args))
    exec(f"def wrapper({args}):\n    return inner({args})\n", namespace)
    return namespace["wrapper"]


@contextlib.contextmanager
def _quiet_build():
    """distutils/setuptools print compiler commands on stdout: the library never prints."""
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _cleanup_tmp() -> None:  # pragma: no cover - manual maintenance helper
    shutil.rmtree(cache_dir(), ignore_errors=True)


if __name__ == "__main__":  # python -m xleval.metrics._aot : build now
    print(build())  # noqa: T201 - a maintenance entry point, not the library
