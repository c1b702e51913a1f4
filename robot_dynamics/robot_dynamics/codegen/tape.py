"""A scalar expression tape for customised symbolic models (Khalil 7.5.2).

Every value is either a number (a constant of the robot) or a signed reference to an
intermediate variable. Operations fold constants as they are recorded, which is Khalil's
customisation: multiplications by 0, 1 and -1 and additions of 0 never reach the tape, a sign
change costs nothing (it is carried on the reference), and an element that holds an operation
becomes an intermediate variable. Identical operations are recorded once (common
subexpressions), and :meth:`Tape.live` scans the tape from the outputs back to the inputs to
drop intermediates that have no effect on them (Khalil's backward scan).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

__all__ = ["Ref", "Value", "Node", "Tape", "OpCount"]


@dataclass(frozen=True)
class Ref:
    """Signed reference to intermediate ``index``: the value is ``sign * t[index]``."""

    index: int
    sign: int = 1

    def __neg__(self) -> Ref:
        return Ref(self.index, -self.sign)


Value = Union[float, Ref]


@dataclass(frozen=True)
class Node:
    """One recorded operation: ``op`` in {'in', 'add', 'sub', 'mul', 'div', 'sin', 'cos', 'sign'}.

    ``args`` are unsigned operands (indices) or float constants; ``name`` names an input.
    """

    op: str
    args: tuple[int | float, ...] = ()
    name: str = ""


@dataclass(frozen=True)
class OpCount:
    """Operation counts of a generated model (Khalil's Table 7.5/7.6 units)."""

    multiplications: int
    additions: int
    functions: int  # sin, cos, sign

    def __str__(self) -> str:
        return f"{self.multiplications} mult, {self.additions} add, {self.functions} sin/cos/sign"


def _is_zero(v: Value) -> bool:
    return isinstance(v, float) and v == 0.0


@dataclass
class Tape:
    """An append-only list of operations with constant folding and common subexpressions."""

    nodes: list[Node] = field(default_factory=list)
    _memo: dict[tuple[object, ...], int] = field(default_factory=dict)

    # -- recording -----------------------------------------------------------------------
    def _record(self, node: Node) -> int:
        key = (node.op, node.args, node.name)
        idx = self._memo.get(key)
        if idx is None:
            idx = len(self.nodes)
            self.nodes.append(node)
            self._memo[key] = idx
        return idx

    def input(self, name: str) -> Ref:
        """A named scalar input (``q[0]``...)."""
        return Ref(self._record(Node("in", (), name)))

    def add(self, a: Value, b: Value) -> Value:
        """``a + b`` with 0 folded and signs absorbed into add/sub."""
        if isinstance(a, float) and isinstance(b, float):
            return a + b
        if _is_zero(a):
            return b
        if _is_zero(b):
            return a
        if isinstance(a, float):
            a, b = b, a  # constant last
        assert isinstance(a, Ref)
        if isinstance(b, float):
            # a + c: record with the constant as the second operand (sign folded into c)
            if a.sign > 0:
                return Ref(self._record(Node("add", (a.index, b))))
            return -Ref(self._record(Node("add", (a.index, -b))))
        if a.index == b.index:
            if a.sign != b.sign:
                return 0.0
            return self.mul(a, 2.0)
        if a.sign > 0 and b.sign > 0:
            i, j = sorted((a.index, b.index))
            return Ref(self._record(Node("add", (i, j))))
        if a.sign < 0 and b.sign < 0:
            i, j = sorted((a.index, b.index))
            return -Ref(self._record(Node("add", (i, j))))
        pos, neg = (a, b) if a.sign > 0 else (b, a)
        return Ref(self._record(Node("sub", (pos.index, neg.index))))

    def sub(self, a: Value, b: Value) -> Value:
        """``a - b``."""
        return self.add(a, self.neg(b))

    @staticmethod
    def neg(a: Value) -> Value:
        """``-a`` (free: carried on the reference)."""
        return -a

    def mul(self, a: Value, b: Value) -> Value:
        """``a * b`` with 0, 1 and -1 folded."""
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(a, float):
            a, b = b, a
        assert isinstance(a, Ref)
        if isinstance(b, float):
            if b == 0.0:
                return 0.0
            if b == 1.0:
                return a
            if b == -1.0:
                return -a
            sign = a.sign * (1 if b > 0 else -1)
            return Ref(self._record(Node("mul", (a.index, abs(b)))), sign)
        i, j = sorted((a.index, b.index))
        return Ref(self._record(Node("mul", (i, j))), a.sign * b.sign)

    def div(self, a: Value, b: Value) -> Value:
        """``a / b`` (the direct dynamic model's ``H_j^-1``); counted as a multiplication.

        A constant divisor folds into a multiplication by its reciprocal; ``b`` must not be 0.
        """
        if isinstance(b, float):
            if b == 0.0:
                raise ZeroDivisionError("division by the constant 0 on the tape")
            return self.mul(a, 1.0 / b)
        if _is_zero(a):
            return 0.0
        sign = b.sign
        if isinstance(a, float):
            return Ref(self._record(Node("div", (abs(a), b.index))), sign * (1 if a > 0 else -1))
        return Ref(self._record(Node("div", (a.index, b.index))), a.sign * sign)

    def func(self, op: str, a: Value) -> Value:
        """``sin``, ``cos`` or ``sign`` of a value."""
        import math

        if isinstance(a, float):
            return {"sin": math.sin, "cos": math.cos, "sign": lambda x: float((x > 0) - (x < 0))}[op](a)
        if op == "cos" or a.sign > 0:
            return Ref(self._record(Node(op, (a.index,))))
        return -Ref(self._record(Node(op, (a.index,))))  # sin and sign are odd

    def dot(self, a: list[Value], b: list[Value]) -> Value:
        """Sum of products, folding as it goes."""
        acc: Value = 0.0
        for x, y in zip(a, b):
            acc = self.add(acc, self.mul(x, y))
        return acc

    # -- analysis ------------------------------------------------------------------------
    def live(self, outputs: list[Value]) -> list[bool]:
        """Which intermediates the outputs depend on (backward scan, Khalil 7.5.2)."""
        alive = [False] * len(self.nodes)
        for v in outputs:
            if isinstance(v, Ref):
                alive[v.index] = True
        for i in range(len(self.nodes) - 1, -1, -1):
            if alive[i]:
                for a in self.nodes[i].args:
                    if isinstance(a, int):
                        alive[a] = True
        return alive

    def count(self, outputs: list[Value]) -> OpCount:
        """Multiplications, additions and function calls needed by the outputs."""
        alive = self.live(outputs)
        mults = adds = funcs = 0
        for node, ok in zip(self.nodes, alive):
            if not ok:
                continue
            if node.op in ("mul", "div"):  # a division counts as a multiplication
                mults += 1
            elif node.op in ("add", "sub"):
                adds += 1
            elif node.op in ("sin", "cos", "sign"):
                funcs += 1
        return OpCount(mults, adds, funcs)

    def evaluate(self, inputs: dict[str, object], outputs: list[Value]) -> list[object]:
        """Run the recorded program: ``inputs`` maps input names to numbers or same-shape
        numpy arrays (a batch); returns the ``outputs``' values (only live nodes are run)."""
        import numpy as np

        alive = self.live(outputs)
        vals: list[object] = [None] * len(self.nodes)

        def arg(a: int | float) -> object:
            return vals[a] if isinstance(a, int) else a

        for i, (node, ok) in enumerate(zip(self.nodes, alive)):
            if not ok:
                continue
            op = node.op
            if op == "in":
                vals[i] = inputs[node.name]
                continue
            x = arg(node.args[0])
            if op == "add":
                vals[i] = x + arg(node.args[1])
            elif op == "sub":
                vals[i] = x - arg(node.args[1])
            elif op == "mul":
                vals[i] = x * arg(node.args[1])
            elif op == "div":
                vals[i] = x / arg(node.args[1])
            elif op == "sin":
                vals[i] = np.sin(x)
            elif op == "cos":
                vals[i] = np.cos(x)
            elif op == "sign":
                vals[i] = np.sign(x)
            else:  # pragma: no cover - every recorded op is listed above
                raise ValueError(op)
        return [v if isinstance(v, float) else v.sign * vals[v.index] for v in outputs]
