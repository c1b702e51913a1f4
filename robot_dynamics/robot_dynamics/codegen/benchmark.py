"""Side-by-side timing of our inverse dynamics paths against Pinocchio's rnea (same URDF).

Used by ``robot-dynamics bench`` and ``bench/bench_codegen.py``. Timings are interleaved
(ours, Pinocchio's, ours, ...) and the best of several rounds is kept, so a busy machine
slows both sides alike; the output is ratios, never absolute claims.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dynamics.rnea import rnea
from ..model.robot_model import RobotModel

if TYPE_CHECKING:
    from .generated import GeneratedModel

__all__ = ["pinocchio_available", "benchmark", "peer_model"]


def pinocchio_available() -> bool:
    """True when Pinocchio (``pip install pin``) can be imported."""
    return importlib.util.find_spec("pinocchio") is not None


def peer_model(model: RobotModel) -> RobotModel:
    """The robot as Pinocchio's rnea sees it: no friction, no rotor inertia."""
    z = np.zeros(model.nq)
    return model.replace(viscous=z, coulomb=z, rotor_inertia=z)


def _best(fn: Callable[[], None], inner: int) -> float:
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def _loop_single(f: Callable[..., Any], q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, k: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(k):
            f(q, qd, qdd)

    return run


_SINGLE_COMPILED = "generated, compiled (numba)"
_WRAPPER = "wrapper: inverse_dynamics_function, checked"


def _our_paths(
    m: RobotModel, gm: GeneratedModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, threads: int
) -> tuple[dict[str, Callable[..., Any]], dict[str, Callable[[], Any]]]:
    """Our single-call paths (each ``f(q, qd, qdd)``, shape (nq,)) and batch paths (no arguments).

    q, qd, qdd: the batch states, shape (N, nq). Sets numba's thread count when the compiled
    batch exists.
    """
    single_paths: dict[str, Callable[..., Any]] = {
        "core rnea (the engine)": lambda a, b, c: rnea(m, a, b, c),
    }
    if gm.single is not None:
        from .fast import inverse_dynamics_function

        single_paths[_SINGLE_COMPILED] = gm.single
        single_paths[_WRAPPER] = inverse_dynamics_function(m)
    batch_paths: dict[str, Callable[[], Any]] = {
        "core rnea (the engine)": lambda: rnea(m, q, qd, qdd),
        "generated, numpy": lambda: gm.numpy_batch(q, qd, qdd),
    }
    if gm.batch_soa is not None:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        qT, qdT, qddT = (np.ascontiguousarray(x.T) for x in (q, qd, qdd))
        outT = np.empty_like(qT)
        batch_paths[f"generated, compiled, {threads} threads, (nq, N) arrays"] = lambda: gm.batch_soa(qT, qdT, qddT, outT)
        batch_paths[f"generated, compiled, {threads} threads, (N, nq) arrays"] = lambda: gm.batch(q, qd, qdd)
    return single_paths, batch_paths


def _pinocchio_peer(
    m: RobotModel,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    threads: int,
    agree: Callable[..., float],
    say: Callable[[str], None],
) -> tuple[Any, Callable[[], None] | None, float]:
    """Pinocchio's rnea on the same states: ``(peer_single, peer_batch, peer_agree)``.

    ``peer_single`` is ``(function, (q, qd, qdd))`` for one state in Pinocchio's joint order,
    ``peer_batch`` runs rneaInParallel over the (nq, N) batch, ``peer_agree`` is its largest
    relative difference to the core's rnea. Missing parts are None (nan for the agreement).
    """
    batch = q.shape[0]
    peer_single = peer_batch = None
    peer_agree = float('nan')
    if pinocchio_available() and m.description:
        import pinocchio as pin

        pm = pin.buildModelFromXML(m.description)
        if pm.nq == m.nq and pm.nv == m.nv:
            data = pm.createData()
            names = list(pm.names)[1:]
            pin_perm = np.array([pm.joints[names.index(n) + 1].idx_q for n in m.joint_names])
            inv = np.argsort(pin_perm)
            pq, pqd, pqdd = (np.asfortranarray(x[:, inv].T) for x in (q, qd, qdd))
            p0, pd0, pdd0 = (np.ascontiguousarray(x[:, 0]) for x in (pq, pqd, pqdd))
            pool = pin.ModelPool(pm, threads) if hasattr(pin, "ModelPool") else None  # Pinocchio >= 3
            tau_p = np.asfortranarray(np.zeros((m.nq, batch)))

            def peer_single_fn(a: Any, b: Any, c: Any) -> Any:
                return pin.rnea(pm, data, a, b, c)

            peer_single = (peer_single_fn, (p0, pd0, pdd0))

            def peer_batch_fn() -> None:
                pin.rneaInParallel(threads, pool, pq, pqd, pqdd, tau_p)

            if pool is not None:
                peer_batch = peer_batch_fn
                peer_batch()
                peer_agree = agree(tau_p.T[:, pin_perm])  # our joint i is Pinocchio's q[pin_perm[i]]
            else:
                say(f"Pinocchio {pin.__version__} has no rneaInParallel; no peer batch timing")
                k = min(batch, 50)
                singles = [pin.rnea(pm, data, *(np.ascontiguousarray(x[:, i]) for x in (pq, pqd, pqdd))) for i in range(k)]
                peer_agree = agree(np.array(singles)[:, pin_perm], k)
        else:
            say("Pinocchio reads this URDF with a different number of coordinates; no peer timing")
    return peer_single, peer_batch, peer_agree


def _our_agreements(
    gm: GeneratedModel,
    single_paths: dict[str, Callable[..., Any]],
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    agree: Callable[..., float],
) -> dict[str, float]:
    """Largest relative difference of each of our paths to the core's rnea (the first 200 states for single calls)."""
    small = min(q.shape[0], 200)
    agreements = {
        "core rnea (the engine)": 0.0,
        "generated, numpy": agree(gm.numpy_batch(q, qd, qdd)),
    }
    if gm.single is not None:
        agreements[_SINGLE_COMPILED] = max(
            agree(np.array([gm.single(q[i], qd[i], qdd[i]) for i in range(small)]), small), 0.0
        )
        agreements["compiled batch"] = agree(gm.batch(q, qd, qdd))
        wrapper = single_paths[_WRAPPER]
        agreements[_WRAPPER] = agree(
            np.array([wrapper(q[i], qd[i], qdd[i]) for i in range(small)]), small
        )
    return agreements


def _time_rounds(
    single_paths: dict[str, Callable[..., Any]],
    batch_paths: dict[str, Callable[[], Any]],
    peer_single: Any,
    peer_batch: Callable[[], None] | None,
    state0: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    rounds: int,
    single_calls: int,
    batch: int,
    threads: int,
) -> dict[tuple[str, str], float]:
    """Best time of each ``(path, kind)`` over interleaved rounds [s per call or per sample].

    state0: (q, qd, qdd) of the first sample, each shape (nq,), for the single-call paths.
    """
    best: dict[tuple[str, str], float] = {}

    def keep(key: tuple[str, str], t: float) -> None:
        best[key] = min(best.get(key, np.inf), t)

    for _ in range(rounds):
        for name, f in single_paths.items():
            k = single_calls
            keep((name, "single"), _best(_loop_single(f, *state0, k), 1) / k)
        if peer_single is not None:
            f, args = peer_single
            keep(("Pinocchio rnea", "single"), _best(_loop_single(f, *args, single_calls), 1) / single_calls)
        for name, fb in batch_paths.items():
            inner = 1 if name == "generated, numpy" else 5
            keep((name, "batch"), _best(fb, inner) / batch)
        if peer_batch is not None:
            keep((f"Pinocchio rneaInParallel, {threads} threads", "batch"), _best(peer_batch, 5) / batch)
    return best


def _rows(
    best: dict[tuple[str, str], float], agreements: dict[str, float], peer_agree: float
) -> list[dict[str, Any]]:
    """One row per timed path: ``{"path", "kind", "us", "agreement"}`` with ``us`` in microseconds."""
    rows: list[dict[str, Any]] = []
    for (name, kind), t in best.items():
        if name.startswith("Pinocchio"):
            ag = peer_agree
        elif kind == "batch" and "compiled" in name:
            ag = agreements.get("compiled batch", np.nan)
        else:
            ag = agreements.get(name, np.nan)
        rows.append({"path": name, "kind": kind, "us": t * 1e6, "agreement": ag})
    return rows


def _ratios(best: dict[tuple[str, str], float], threads: int) -> dict[str, float]:
    """Our best times against Pinocchio's, with the goal of each ratio in its name."""
    ratios: dict[str, float] = {}
    pin_single = best.get(("Pinocchio rnea", "single"))
    pin_batch = best.get((f"Pinocchio rneaInParallel, {threads} threads", "batch"))
    ours_single = best.get((_SINGLE_COMPILED, "single"))
    ours_batch = min(
        (t for (n, k), t in best.items() if k == "batch" and n.startswith("generated, compiled")), default=None
    )
    ours_batch_api = best.get((f"generated, compiled, {threads} threads, (N, nq) arrays", "batch"))
    ours_wrapper = best.get((_WRAPPER, "single"))
    if pin_single and ours_single:
        ratios["single: ours / Pinocchio (goal <= 1.5)"] = ours_single / pin_single
    if pin_single and ours_wrapper:
        ratios["single, checked wrapper: ours / Pinocchio (goal <= 1.5)"] = ours_wrapper / pin_single
    if pin_batch and ours_batch:
        ratios["batch: Pinocchio / ours, (nq, N) arrays (goal >= 4)"] = pin_batch / ours_batch
    if pin_batch and ours_batch_api:
        ratios["batch: Pinocchio / ours, (N, nq) arrays (goal >= 4)"] = pin_batch / ours_batch_api
    return ratios


def benchmark(
    model: RobotModel,
    *,
    batch: int = 10_000,
    rounds: int = 7,
    single_calls: int = 20_000,
    threads: int = 2,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Time our paths and Pinocchio's on the same robot and states.

    Args:
        model: the robot; friction and rotor inertia are removed (Pinocchio's rnea has none).
        batch: samples in the batch test.
        rounds: interleaved rounds; the best of each path is kept.
        single_calls: calls per round in the single-call test.
        threads: threads for the batch paths (the engine's, the generated code's numba and
            Pinocchio's rneaInParallel).

    Returns:
        ``{"robot", "nq", "rows": [{"path", "kind", "us", "agreement"}], "ratios": {...}}``
        with ``us`` in microseconds per call (single) or per sample (batch), ``agreement``
        the largest relative difference to the core's rnea.
    """
    from .generated import generate, numba_available

    say = progress or (lambda msg: None)
    m = peer_model(model)
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (batch, m.nq))
    qd, qdd = rng.normal(size=(2, batch, m.nq))
    ref = rnea(m, q, qd, qdd)
    scale = max(float(np.abs(ref).max()), 1.0)

    def agree(tau: np.ndarray, n: int | None = None) -> float:
        r = ref if n is None else ref[:n]
        return float(np.abs(np.asarray(tau).reshape(r.shape) - r).max() / scale)

    from ..engine import get_num_threads, set_num_threads

    engine_threads = get_num_threads()
    set_num_threads(threads)
    say("generating / loading the customised model")
    gm = generate(m, progress=say)
    q0, qd0, qdd0 = (np.ascontiguousarray(x[0]) for x in (q, qd, qdd))
    single_paths, batch_paths = _our_paths(m, gm, q, qd, qdd, threads)
    peer_single, peer_batch, peer_agree = _pinocchio_peer(m, q, qd, qdd, threads, agree, say)
    agreements = _our_agreements(gm, single_paths, q, qd, qdd, agree)
    say(f"timing ({rounds} interleaved rounds)")
    best = _time_rounds(
        single_paths, batch_paths, peer_single, peer_batch, (q0, qd0, qdd0),
        rounds=rounds, single_calls=single_calls, batch=batch, threads=threads,
    )
    rows = _rows(best, agreements, peer_agree)
    ratios = _ratios(best, threads)
    set_num_threads(engine_threads)
    return {
        "robot": model.name,
        "nq": model.nq,
        "batch": batch,
        "threads": threads,
        "numba": numba_available(),
        "counts": str(gm.counts),
        "rows": rows,
        "ratios": ratios,
    }
