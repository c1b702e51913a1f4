"""``robot-dynamics identify [RECORDING...] [--validate RECORDING...]``: base parameters and
friction of a real arm from its recorded joint states (Gautier's IDIM-WLS, Khalil 7.5).

RECORDING is a rosbag2 folder (MCAP or sqlite3) with /joint_states, or a CSV (t, q_<joint>,
tau_<joint>). With no recording the whole loop runs on a simulated arm whose true parameters
differ from the URDF's (tens of percent, friction added), recorded with noise through the
project's rosbag2 writer, and the identified values are printed beside the true ones.

Writes ``identified.yaml`` (friction, armature, limits: the --drivetrain file), with the
physically consistent estimate ``identified.urdf`` (the --urdf file), and
``identification.png`` (measured against predicted efforts).
"""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

import numpy as np

from ._common import CommonOptions, emit, format_table, load_model, output_dir


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "identify",
        parents=parents,
        help="identify base inertial parameters and friction from recorded joint states (rosbag2 or CSV)",
        description="Dynamic identification (Khalil 7.5, Gautier's IDIM-WLS): filtered and decimated "
        "recordings, weighted least squares on the base parameters, friction and effort offsets with "
        "their %sigma, a physically consistent estimate, and files the loaders take. No RECORDING: "
        "a complete example on a simulated arm.",
    )
    p.add_argument("recordings", nargs="*", metavar="RECORDING", help="rosbag2 folder(s) or CSV file(s) of /joint_states")
    p.add_argument("--validate", action="append", default=[], metavar="RECORDING",
                   help="a second recording to check the predicted efforts on (repeatable)")
    p.add_argument("--cutoff", type=float, help="position filter cut-off [Hz] (default 20 x the measured bandwidth)")
    p.add_argument("--essential", type=float, metavar="PCT",
                   help="keep only the essential parameters: drop the largest %%sigma while above PCT")
    p.add_argument("--stribeck", action="store_true",
                   help="also identify static friction and its Stribeck decay (Khalil [7.26]), B chosen per joint "
                   "among 5, 10, 20, 40, 80 s/rad")
    p.add_argument("--no-consistent", dest="consistent", action="store_false",
                   help="skip the physically consistent estimate (and so the URDF)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated example (default 0)")
    p.set_defaults(func=run)


#: Widest line of the text report: it fits a 100-column terminal.
WIDTH = 100


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def report_text(data: dict[str, Any]) -> str:
    """The text report of ``identify`` from its JSON document, no line over :data:`WIDTH`
    columns (but a file path longer than that): the parameter table, the grouping of each
    regrouped base parameter below it, then the effort residuals per joint."""
    lines = _wrap(f"identified {data['robot']} from {', '.join(data['recordings'])}: {data['rows']} decimated samples "
                  f"(decimation {data['decimation']}), position filter {data['cutoff_hz']:.2f} Hz, "
                  f"condition number {data['condition_number']:.1f}", "  ")
    rows = data["parameters"]
    has_true = any("true" in r for r in rows)
    has_consistent = data["consistent"] is not None
    headers = ["parameter", "estimate", "%sigma", "nominal"] + (["true"] if has_true else []) + \
        (["consistent"] if has_consistent else [])
    table = []
    for r in rows:
        line = [r["name"], r["value"], r["rel_sigma"] if r["kept"] else "removed", r.get("nominal", "")]
        if has_true:
            line.append(r.get("true", ""))
        if has_consistent:
            line.append(r.get("consistent", ""))
        table.append(line)
    lines.append(format_table(headers, table))
    offsets = [r["name"] for r in rows if r["grouping"].endswith(" = effort offset")]
    groupings = [r["grouping"] for r in rows
                 if r["name"] not in offsets and r["grouping"] != f"{r['name']} = {r['name']}"]
    if groupings:
        lines.append("regrouped base parameters (the others are standard parameters alone):")
        for g in groupings:
            name = g.split(" = ", 1)[0]
            lines += _wrap("  " + g, " " * (len(name) + 5))
    if offsets:
        lines += _wrap(f"effort offsets: {', '.join(offsets)}", "  ")
    rms = data["validation_rms"]
    names = {"true parameters": "true"}
    lines += _wrap("effort rms per joint [N m or N]: sigma_j (the weights), residual of the fit, and on the "
                   + ("validation" if data["validation"] else "identification") + " recording predicted with the "
                   + ", ".join(names.get(k, k) for k in rms) + " parameters")
    lines.append(format_table(["joint", "sigma_j", "residual"] + [names.get(k, k) for k in rms],
                              [[name, data["joint_sigma"][j], data["residual_rms"][j]] + [rms[k][j] for k in rms]
                               for j, name in enumerate(data["joint_names"])]))
    tracking = data["tracking_rms_error"]
    if tracking is not None:
        lines += _wrap(f"computed torque on the true arm, validation motion: rms tracking error {tracking['identified']:.3g} rad "
                       f"with the identified model, {tracking['nominal']:.3g} rad with the nominal one")
    lines += _wrap("wrote " + ", ".join(data["files"]), "  ")
    return "\n".join(lines)


def _example(model: Any, out: Any, seed: int, quiet: bool) -> tuple[list[str], list[str], Any, Any]:
    """Simulate the true arm on an optimised excitation (identification) and on a random,
    unoptimised Fourier motion at another frequency (validation)."""
    from .._progress import stderr_is_a_terminal
    from ..identification import FourierExcitation, design_excitation
    from ..identification.example import perturbed_arm, record_simulated

    true = perturbed_arm(model, seed=seed)
    one = design_excitation(model, seed=seed, maxiter=30, progress=not quiet and stderr_is_a_terminal()).trajectory
    excitation = FourierExcitation(one.q0, one.frequency, one.a, one.b, periods=4)
    other = design_excitation(model, seed=seed + 1, frequency=0.27, maxiter=0).trajectory
    validation = FourierExcitation(other.q0, other.frequency, other.a, other.b, periods=2)
    a = record_simulated(true, model, excitation, out / "example_recording", seed=seed)
    b = record_simulated(true, model, validation, out / "example_validation", seed=seed + 7)
    return [str(a)], [str(b)], true, validation


def run(args: argparse.Namespace) -> int:
    from ..dynamics.regressor import standard_parameters
    from ..errors import InputError
    from ..identification import concatenate, identify, prepare, read_recording, standard_from_base
    from ..identification.consistency import consistent_parameters
    from ..identification.output import write_identified
    from ..identification.report import effort_rms, parameter_rows, plot_efforts

    _check_options(args)
    model = load_model(args)
    out = output_dir(args)
    true = None
    recordings, validation = list(args.recordings), list(args.validate)
    if not recordings:
        if validation:
            raise InputError("--validate needs the RECORDING(s) to identify from")
        recordings, validation, true, motion = _example(model, out, args.seed, args.json)
    grid = (5.0, 10.0, 20.0, 40.0, 80.0) if args.stribeck else ()
    data = prepare(model, concatenate([read_recording(r, model) for r in recordings]), cutoff=args.cutoff, stribeck=grid)
    est = identify(model, data, essential=args.essential, stribeck=args.stribeck)
    prior = standard_parameters(model)
    fit = consistent_parameters(model, est) if args.consistent else None
    pi = fit.pi if fit is not None else standard_from_base(est.base, est.base_values(), prior)
    excess = None if est.stribeck_speed is None else (fit.static_excess if fit is not None else est.static_excess())
    files = write_identified(model, pi, out / "identified.yaml", out / "identified.urdf" if fit is not None else None,
                             static_excess=excess, stribeck=est.stribeck_speed)
    nominal_beta = est.base.base_values(prior)
    true_beta = None if true is None else est.base.base_values(standard_parameters(true))
    rows = parameter_rows(est, nominal=nominal_beta, true=true_beta,
                          consistent=None if fit is None else est.base.base_values(fit.pi))

    # Validation: predicted efforts on the other recording(s), identified vs nominal (vs true).
    check = data
    if validation:
        check = prepare(model, concatenate([read_recording(r, model) for r in validation]), cutoff=data.cutoff,
                        stribeck=grid)
    predicted = _predicted_efforts(check, est, fit, prior, true)
    rms = {k: effort_rms(check.tau - v, check.valid) for k, v in predicted.items()}
    files.append(plot_efforts(check.t - check.t[0], check.tau, predicted, model.joint_names, out / "identification.png",
                              title=("validation recording" if validation else "identification recording")
                              + f": filtered at {data.cutoff:.2f} Hz", valid=check.valid))

    tracking = None if true is None else _tracking_rms_error(model, true, pi, est, excess, motion)

    data_out = {
        "robot": model.name,
        "joint_names": list(model.joint_names),
        "recordings": recordings,
        "validation": validation,
        "cutoff_hz": data.cutoff,
        "decimation": data.decimation,
        "rows": est.rows,
        "condition_number": est.condition,
        "parameters": rows,
        "removed_as_not_essential": list(est.removed),
        "joint_sigma": est.joint_sigma.tolist(),
        "residual_rms": est.residual_rms.tolist(),
        "validation_rms": {k: v.tolist() for k, v in rms.items()},
        "consistent": None if fit is None else {"min_eigenvalue": fit.min_eigenvalue.tolist(), "mahalanobis": fit.mahalanobis},
        "tracking_rms_error": tracking,
        "stribeck": None if est.stribeck_speed is None else list(est.stribeck_speed),
        "files": [str(f) for f in files],
    }

    emit(args, data_out, lambda: report_text(data_out))
    return 0


def _check_options(args: argparse.Namespace) -> None:
    """InputError for a --cutoff or --essential that is not a positive number."""
    from ..errors import InputError

    if args.cutoff is not None and not (np.isfinite(args.cutoff) and args.cutoff > 0):
        raise InputError(f"--cutoff: expected a positive frequency [Hz], got {args.cutoff!r}")
    if args.essential is not None and not (np.isfinite(args.essential) and args.essential > 0):
        raise InputError(f"--essential: expected a positive %sigma threshold, got {args.essential!r}")


def _predicted_efforts(check: Any, est: Any, fit: Any, prior: np.ndarray, true: Any) -> dict[str, np.ndarray]:
    """Efforts predicted on the ``check`` recording, shape (m, nj) [N m or N], by the identified
    parameters, the consistent estimate (without Stribeck friction), the nominal ones and,
    when known, the true ones."""
    from ..dynamics.regressor import standard_parameters

    predicted = {"identified": est.predict(check.W, check.stribeck)}
    if fit is not None and est.stribeck_speed is None:
        predicted["consistent"] = np.einsum("mjp,p->mj", check.W, fit.pi) + fit.offsets
    predicted["nominal"] = np.einsum("mjp,p->mj", check.W, prior)
    if true is not None:
        predicted["true parameters"] = np.einsum("mjp,p->mj", check.W, standard_parameters(true))
    return predicted


def _tracking_rms_error(model: Any, true: Any, pi: np.ndarray, est: Any, excess: Any, motion: Any) -> dict[str, float]:
    """Computed torque on the identified model against the nominal one, plant = the true arm,
    on the validation motion: the rms tracking error of each [rad]."""
    from ..control import ComputedTorque
    from ..identification import model_from_standard
    from ..simulation import simulate

    ident = model_from_standard(model, pi)
    if est.stribeck_speed is not None and excess is not None:
        ident = ident.replace(static_friction=ident.coulomb + np.maximum(excess, 0.0),
                              stribeck=np.asarray(est.stribeck_speed))
    tracking = {}
    for label, m in (("identified", ident), ("nominal", model)):
        res = simulate(true, ComputedTorque(m, omega=20.0, friction_velocity="desired"), motion, settle=0.0,
                       coulomb_smoothing=0.001, progress=False)
        tracking[label] = float(np.sqrt(np.mean(res.metrics.rms_error**2)))
    return tracking
