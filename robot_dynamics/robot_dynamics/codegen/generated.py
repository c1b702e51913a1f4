"""Generate, cache and load the customised inverse dynamic model of a robot.

``generate(model)`` returns a :class:`GeneratedModel`: the base parameters, the operation
counts, a numpy batch function and, when numba is installed, compiled single-call and
threaded batch paths. The generated module is written to a cache folder keyed by a hash of
everything in the model that the torques depend on (and of the generator version), so a
changed model gets a new module and an unchanged one is loaded, compiled code included
(numba's on-disk cache beside the module).

Cache folder: ``$ROBOT_DYNAMICS_CACHE`` if set, else ``$XDG_CACHE_HOME/robot_dynamics``
(``~/.cache/robot_dynamics``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._batch import kernel_array
from ..errors import InputError
from ..model.robot_model import RobotModel
from .emit import GENERATOR_VERSION, emit_module
from .tape import OpCount

__all__ = [
    "CACHE_ENV",
    "cache_dir",
    "model_key",
    "numba_available",
    "GeneratedModel",
    "generate",
    "operation_counts",
]

Array = NDArray[np.float64]
CACHE_ENV = "ROBOT_DYNAMICS_CACHE"
Progress = Callable[[str], None]


def cache_dir() -> Path:
    """The folder of generated models (not created here)."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return root / "robot_dynamics"


def numba_available() -> bool:
    """True when numba can be imported (the compiled paths are optional: extra ``fast``)."""
    return importlib.util.find_spec("numba") is not None


def model_key(model: RobotModel, **options: Any) -> str:
    """Hash of the model's dynamic content, the generator version and the options."""
    h = hashlib.sha256()
    h.update(f"robot_dynamics-codegen-{GENERATOR_VERSION}".encode())
    h.update(repr(sorted(options.items())).encode())
    h.update(repr((model.joint_type, model.nq, model.nb)).encode())
    for name in (
        "parent", "axis", "E_tree", "r_tree", "mass", "com", "inertia_com", "mimic_matrix",
        "mimic_offset", "rotor_inertia", "viscous", "coulomb", "gravity",
    ):
        arr = np.ascontiguousarray(getattr(model, name))
        h.update(name.encode())
        h.update(str(arr.dtype).encode() + str(arr.shape).encode())
        h.update(arr.tobytes())
    return h.hexdigest()[:20]


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _import_file(path: Path, key: str) -> ModuleType:
    name = f"robot_dynamics_generated_{key}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class GeneratedModel:
    """A robot's generated inverse dynamics.

    Attributes:
        model: the robot it was generated for.
        key: cache key (hash of the model and options).
        path: the generated module on disk.
        counts: operation counts of the generated model.
        counts_standard: counts of the same model with the standard parameters (Table 7.6's
            first row), or None when loaded from the cache without it.
        n_base: number of base parameters used.
        generation_seconds: time to generate (0 when loaded from the cache).
        load_seconds: time to load (import and, for numba, read the compiled code).
        from_cache: loaded from the cache.
        numpy_batch: ``f(q, qd, qdd)``, arrays (N, nq) -> (N, nq).
        single: compiled ``f(q, qd, qdd)``, (nq,) arrays -> (nq,), or None without numba;
            compiled on its first call, then cached on disk.
        into: compiled ``f(q, qd, qdd, out)`` writing (nq,) into ``out`` (no allocation), or
            None (compiled by :func:`generate`).
        batch_soa: compiled ``f(qT, qdT, qddT, outT)`` on (nq, N) arrays, threads, or None;
            compiled on its first call, then cached on disk.
    """

    model: RobotModel
    key: str
    path: Path
    counts: OpCount
    counts_standard: OpCount | None
    n_base: int
    generation_seconds: float
    load_seconds: float
    from_cache: bool
    numpy_batch: Callable[..., Array]
    single: Callable[..., Array] | None = None
    into: Callable[..., None] | None = None
    batch_soa: Callable[..., None] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def compiled(self) -> bool:
        """True when the compiled (numba) paths are available."""
        return self.single is not None

    def warm_up(self) -> None:
        """Compile (or load) the lazily compiled paths now: ``single`` and the batch."""
        if self.batch_soa is not None and self.single is not None:
            z = np.zeros(self.model.nq)
            self.single(z, z, z)
            self.batch(np.zeros((2, self.model.nq)), np.zeros((2, self.model.nq)), np.zeros((2, self.model.nq)))

    def batch(self, q: Array, qd: Array, qdd: Array) -> Array:
        """Torques for a batch (N, nq) of states: compiled threads if available, else numpy."""
        if self.batch_soa is None:
            return self.numpy_batch(q, qd, qdd)
        qT, qdT, qddT = (kernel_array(np.asarray(x, dtype=float).T) for x in (q, qd, qdd))
        out = np.empty_like(qT)
        self.batch_soa(qT, qdT, qddT, out)
        return out.T


def operation_counts(
    model: RobotModel, *, base: bool = True, friction: bool = True
) -> tuple[OpCount, int]:
    """Counts of the customised Newton-Euler model (no code written): (counts, n parameters)."""
    from .newton_euler import build_cheapest

    pi, n = counted_parameters(model, base=base, friction=friction)
    return build_cheapest(model, pi, friction=friction).count(), n


def counted_parameters(model: RobotModel, *, base: bool = True, friction: bool = True) -> tuple[Array, int]:
    """The parameter vector a customised model is recorded with, and how many it has: the
    standard parameters or the base ones embedded (Khalil 7.5.3), friction zeroed when off."""
    from ..dynamics.base_parameters import base_parameters
    from ..dynamics.regressor import standard_parameters

    pi = standard_parameters(model)
    n = pi.size
    if base:
        bp = base_parameters(model, friction=friction)
        pi, n = bp.embedded(pi), bp.n_base
    if not friction:
        pi = pi.copy()
        nb = model.nb
        pi[10 * nb + 1 :: 3] = 0.0
        pi[10 * nb + 2 :: 3] = 0.0
    return pi, n


def _say(progress: Progress | None, msg: str) -> None:
    if progress is not None:
        progress(msg)


def _customised_source(
    model: RobotModel, key: str, *, base: bool, want_numba: bool, progress: Progress | None
) -> tuple[str, OpCount, OpCount | None, int]:
    """Steps 1-3 of :func:`generate`: the module's source, its counts, the standard
    parameters' counts (None without ``base``) and the number of parameters used."""
    from ..dynamics.base_parameters import base_parameters
    from ..dynamics.regressor import standard_parameters
    from .newton_euler import build_cheapest

    _say(progress, "[1/4] base inertial parameters (QR of the regressor over random states)")
    pi = standard_parameters(model)
    n_base = pi.size
    counts_standard = None
    if base:
        bp = base_parameters(model)
        counts_standard = build_cheapest(model, pi).count()
        pi, n_base = bp.embedded(pi), bp.n_base
    _say(progress, f"[2/4] customised Newton-Euler model ({model.nb} bodies)")
    prog = build_cheapest(model, pi)
    counts = prog.count()
    _say(progress, f"      {counts} with {n_base} parameters")
    _say(progress, "[3/4] writing code" + (" (numpy + numba)" if want_numba else " (numpy)"))
    header = (
        f"Inverse dynamics of {model.name!r} generated by robot_dynamics.codegen "
        f"(customised Newton-Euler, Khalil 7.5). Key {key}. {counts}."
    )
    src = emit_module(prog.tape, prog.outputs, model.nq, header=header, numba=want_numba)
    return src, counts, counts_standard, n_base


def _meta(
    model: RobotModel,
    key: str,
    *,
    base: bool,
    want_numba: bool,
    n_base: int,
    counts: OpCount,
    counts_standard: OpCount | None,
    gen_seconds: float,
) -> dict[str, Any]:
    """The ``meta.json`` record written beside a generated module."""
    return {
        "robot": model.name,
        "key": key,
        "nq": model.nq,
        "base": base,
        "numba": want_numba,
        "n_parameters": int(n_base),
        "counts": [counts.multiplications, counts.additions, counts.functions],
        "counts_standard": None
        if counts_standard is None
        else [counts_standard.multiplications, counts_standard.additions, counts_standard.functions],
        "generation_seconds": gen_seconds,
    }


def _write_module(path: Path, meta_path: Path, src: str, meta: dict[str, Any], cache: bool) -> Path:
    """Write the module (and its meta, in the cache) and return its path: ``path`` in the
    cache, else a fresh temporary folder's."""
    if cache:
        _write_atomic(path, src)
        _write_atomic(meta_path, json.dumps(meta, indent=2))
    else:
        folder = Path(tempfile.mkdtemp(prefix="robot_dynamics_codegen_"))
        path = folder / "rnea_generated.py"
        _write_atomic(path, src)
    return path


def generate(
    model: RobotModel,
    *,
    compiled: bool | None = None,
    base: bool = True,
    cache: bool = True,
    progress: Progress | None = None,
    read_cache: bool | None = None,
) -> GeneratedModel:
    """Generate (or load from the cache) the customised inverse dynamic model of ``model``.

    Args:
        model: the robot; its gravity, friction and rotor inertia are baked in.
        compiled: build the numba paths (default: when numba is installed).
        base: use the base inertial parameters (fewer operations); else the standard ones.
        cache: use the on-disk cache (write the generated module there).
        read_cache: load an existing cached module (default: ``cache``); False regenerates
            and overwrites it.
        progress: called with a one-line message at each stage.

    Raises:
        InputError: ``compiled=True`` without numba.
        ModelError: a coupled gear train (not covered by the generated model).
    """
    from ..dynamics.regressor import require_rigid_tree

    require_rigid_tree(model)  # coupled gear trains: ModelError (the caller falls back to rnea)
    want_numba = numba_available() if compiled is None else bool(compiled)
    if want_numba and not numba_available():
        raise InputError("compiled=True needs numba (from a clone: pip install './robot_dynamics[fast]')")
    key = model_key(model, base=base, numba=want_numba)
    read_cache = cache if read_cache is None else (read_cache and cache)
    folder = cache_dir() / f"{_safe(model.name)}-{key}"
    path = folder / "rnea_generated.py"
    meta_path = folder / "meta.json"
    t0 = time.perf_counter()
    if read_cache and path.exists() and meta_path.exists():
        _say(progress, f"loading cached model from {folder}")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        gm = _load(model, key, path, meta, want_numba, from_cache=True, progress=progress)
        gm.load_seconds = time.perf_counter() - t0
        return gm

    src, counts, counts_standard, n_base = _customised_source(
        model, key, base=base, want_numba=want_numba, progress=progress
    )
    gen_seconds = time.perf_counter() - t0
    meta = _meta(
        model, key, base=base, want_numba=want_numba, n_base=n_base,
        counts=counts, counts_standard=counts_standard, gen_seconds=gen_seconds,
    )
    path = _write_module(path, meta_path, src, meta, cache)
    gm = _load(model, key, path, meta, want_numba, from_cache=False, progress=progress)
    gm.generation_seconds = time.perf_counter() - t0
    gm.load_seconds = 0.0
    if cache:
        meta["generation_seconds"] = gm.generation_seconds
        _write_atomic(meta_path, json.dumps(meta, indent=2))
    return gm


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "robot"


def _load(
    model: RobotModel,
    key: str,
    path: Path,
    meta: dict[str, Any],
    want_numba: bool,
    *,
    from_cache: bool,
    progress: Progress | None,
) -> GeneratedModel:
    module = _import_file(path, key)
    c = meta["counts"]
    cs = meta.get("counts_standard")
    gm = GeneratedModel(
        model=model,
        key=key,
        path=path,
        counts=OpCount(*c),
        counts_standard=None if cs is None else OpCount(*cs),
        n_base=int(meta["n_parameters"]),
        generation_seconds=0.0 if from_cache else float(meta["generation_seconds"]),
        load_seconds=0.0,
        from_cache=from_cache,
        numpy_batch=module.rnea_numpy,
        meta=meta,
    )
    if want_numba and hasattr(module, "rnea_single"):
        # The single-call path ``into`` is compiled (or read from numba's cache) now, not in a
        # control loop; ``single`` and the threaded batch compile on first call (then cached).
        _say(progress, "[4/4] compiling the single-call path (numba; cached beside the module)" if not from_cache else "loading compiled code")
        if not from_cache:
            # the only compilation at run time in the package (the core's engine is compiled at
            # install): say so, and how long it took
            print(f"robot_dynamics: numba compiles the generated model of {model.name!r} (first use only; "
                  f"later runs load it from {path.parent})...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        z = np.zeros(model.nq)
        module.rnea_into(z, z, z, np.empty(model.nq))
        if not from_cache:
            print(f"robot_dynamics: compiled in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        gm.single, gm.into, gm.batch_soa = module.rnea_single, module.rnea_into, module.rnea_batch_soa
    return gm
