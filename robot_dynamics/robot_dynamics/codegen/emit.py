"""Write a recorded model as Python source: a numpy batch function and numba kernels.

The module written for a model holds:

* ``rnea_numpy(q, qd, qdd)``: numpy, vectorised over a batch, arrays (N, nq) -> (N, nq);
* when numba is wanted, ``rnea_single(q, qd, qdd)`` ((nq,) arrays -> (nq,)) and
  ``rnea_batch_soa(qT, qdT, qddT, outT)`` (arrays (nq, N), loop over samples in parallel
  threads). Their sine and cosine are a Cody-Waite reduction and the fdlibm kernels
  (``_sincos``), branch-free, so that the compiler vectorises the sample loop.
"""

from __future__ import annotations

from .tape import Node, Ref, Tape, Value

__all__ = ["emit_module", "GENERATOR_VERSION"]

#: Bump when the generated code changes: it is part of the cache key.
GENERATOR_VERSION = "7"

_SINCOS = '''
_PIO2_1 = 1.57079632673412561417e+00   # first 33 bits of pi/2 (fdlibm)
_PIO2_1T = 6.07710050650619224932e-11  # pi/2 - _PIO2_1
_INV_PIO2 = 6.36619772367581382433e-01
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


@numba.njit(inline="always", fastmath=_FM)
def _sincos(x):
    # Cody-Waite reduction x = k pi/2 + r, |r| <= pi/4 (exact to ~1e-16 for |x| < 1e5 rad)
    k = math.floor(x * _INV_PIO2 + 0.5)
    r = (x - k * _PIO2_1) - k * _PIO2_1T
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    c = 1.0 - 0.5 * z + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    m = k - 4.0 * math.floor(k * 0.25)  # quadrant 0..3
    odd = m == 1.0 or m == 3.0
    sn = c if odd else s
    cs = s if odd else c
    sn = -sn if m >= 2.0 else sn
    cs = -cs if (m == 1.0 or m == 2.0) else cs
    return sn, cs


@numba.njit(inline="always", fastmath=_FM)
def _sign(x):
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)
'''


def _operand(v: int | float) -> str:
    return f"t{v}" if isinstance(v, int) else repr(float(v))


def _value(v: Value) -> str:
    if isinstance(v, Ref):
        return f"t{v.index}" if v.sign > 0 else f"(-t{v.index})"
    return repr(float(v))


def _body(tape: Tape, outputs: list[Value], flavour: str, indent: str) -> list[str]:
    """Assignment lines for the live intermediates; inputs are already bound to names."""
    alive = tape.live(outputs)
    sincos_pair: dict[int, dict[str, int]] = {}
    for i, node in enumerate(tape.nodes):
        if alive[i] and node.op in ("sin", "cos"):
            sincos_pair.setdefault(int(node.args[0]), {})[node.op] = i
    done: set[int] = set()
    lines = []
    for i, node in enumerate(tape.nodes):
        if not alive[i] or node.op == "in":
            continue
        lines.append(indent + _line(i, node, flavour, sincos_pair, done))
    return [ln for ln in lines if ln.strip()]


def _line(i: int, node: Node, flavour: str, pairs: dict[int, dict[str, int]], done: set[int]) -> str:
    a = node.args
    if node.op == "add":
        return f"t{i} = {_operand(a[0])} + {_operand(a[1])}"
    if node.op == "sub":
        return f"t{i} = {_operand(a[0])} - {_operand(a[1])}"
    if node.op == "mul":
        return f"t{i} = {_operand(a[0])} * {_operand(a[1])}"
    if node.op == "sign":
        fn = "np.sign" if flavour == "numpy" else "_sign"
        return f"t{i} = {fn}({_operand(a[0])})"
    if node.op in ("sin", "cos"):
        x = int(a[0])
        if flavour == "numpy":
            return f"t{i} = np.{node.op}(t{x})"
        if x in done:
            return ""
        done.add(x)
        pair = pairs[x]
        s = f"t{pair['sin']}" if "sin" in pair else "_s"
        c = f"t{pair['cos']}" if "cos" in pair else "_c"
        return f"{s}, {c} = _sincos(t{x})"
    raise ValueError(f"unknown op {node.op}")


def _bind_inputs(tape: Tape, outputs: list[Value], pattern: str, indent: str) -> list[str]:
    """Bind the live input nodes: pattern formats (array, index), e.g. '{a}[:, {k}]'."""
    alive = tape.live(outputs)
    lines = []
    for i, node in enumerate(tape.nodes):
        if node.op == "in" and alive[i]:
            name = node.name
            arr = "qdd" if name.startswith("qdd") else ("qd" if name.startswith("qd") else "q")
            k = int(name[len(arr) :])
            lines.append(indent + f"t{i} = " + pattern.format(a=arr, k=k))
    return lines


def emit_module(
    tape: Tape,
    outputs: list[Value],
    nq: int,
    *,
    header: str,
    numba: bool,
    parallel: bool = True,
) -> str:
    """Python source of the generated module (see the module docstring)."""
    src = [f'"""{header}"""', "", "import math", "", "import numpy as np", ""]
    src.append(f"NQ = {nq}")
    src.append("")
    # numpy batch
    src.append("def rnea_numpy(q, qd, qdd):")
    src.append('    """Batch inverse dynamics, arrays (N, nq) -> (N, nq)."""')
    src += _bind_inputs(tape, outputs, "{a}[:, {k}]", "    ")
    src += _body(tape, outputs, "numpy", "    ")
    src.append("    out = np.empty((q.shape[0], NQ))")
    for k, v in enumerate(outputs):
        src.append(f"    out[:, {k}] = {_value(v)}")
    src.append("    return out")
    src.append("")
    if numba:
        src.insert(4, "import numba")
        src.append('_FM = {"nnan", "ninf", "nsz", "arcp", "contract"}')
        src += _SINCOS.splitlines()
        src.append("")
        src.append("@numba.njit(fastmath=_FM, cache=True, nogil=True)")
        src.append("def rnea_single(q, qd, qdd):")
        src += _bind_inputs(tape, outputs, "{a}[{k}]", "    ")
        src += _body(tape, outputs, "numba", "    ")
        src.append("    out = np.empty(NQ)")
        for k, v in enumerate(outputs):
            src.append(f"    out[{k}] = {_value(v)}")
        src.append("    return out")
        src.append("")
        src.append("")
        src.append("@numba.njit(fastmath=_FM, cache=True, nogil=True)")
        src.append("def rnea_into(q, qd, qdd, out):")
        src += _bind_inputs(tape, outputs, "{a}[{k}]", "    ")
        src += _body(tape, outputs, "numba", "    ")
        for k, v in enumerate(outputs):
            src.append(f"    out[{k}] = {_value(v)}")
        src.append("")
        src.append("")
        src.append(f"@numba.njit(fastmath=_FM, cache=True, nogil=True, parallel={bool(parallel)})")
        src.append("def rnea_batch_soa(q, qd, qdd, out):")
        src.append("    for n in numba.prange(q.shape[1]):")
        src += _bind_inputs(tape, outputs, "{a}[{k}, n]", "        ")
        src += _body(tape, outputs, "numba", "        ")
        for k, v in enumerate(outputs):
            src.append(f"        out[{k}, n] = {_value(v)}")
        src.append("")
    return "\n".join(src) + "\n"
