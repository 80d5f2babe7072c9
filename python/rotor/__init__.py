"""rotor from Python: the documents `rotor plan|compile|simulate|schedule|explore --json`
prints, as dicts, computed by librotor.so through ctypes (standard library
only; docs/python.md).

    >>> import rotor
    >>> d = rotor.plan("C[m,n] += A[m,k] * B[k,n]", dim="m=32,k=5120,n=15360", chip="ipu-mk2")
    >>> d["time"]["total_s"]

Each function takes the command's long options as keyword arguments, '-'
written '_' (pareto_within=1.5, cost_model="v1"), a flag as True, --set as
a string or a list of strings.  A failure raises RotorError with rotor's
one-line message.  The documents are the library's, the same the CLI
prints: equal to `--json` byte for byte before they are parsed."""

import json

from ._lib import RotorError, doc

__all__ = ["RotorError", "plan", "compile", "simulate", "schedule", "explore", "document", "__version__"]


def document(command, **options):
    """The text of `rotor COMMAND --json` for options (as the functions below)."""
    return doc(command, options)


def plan(expr, dim=None, chip=None, **options):
    """`rotor plan --expr EXPR --dim DIM --json`: the fastest plan of one
    operator ("rotor-plan", docs/plan-format.md); pareto=True adds the frontier."""
    return json.loads(doc("plan", dict(options, expr=expr, dim=dim, chip=chip)))


def compile(model, chip=None, batch=None, **options):  # noqa: A001 (the command's name)
    """`rotor compile MODEL --json`: the T10 program ("rotor-program",
    docs/program-format.md) with its energy; compare=True adds the VGM comparison."""
    return json.loads(doc("compile", dict(options, model=model, chip=chip, batch=batch)))


def simulate(model, chip=None, batch=None, **options):
    """`rotor simulate MODEL --json`: the model's program replayed on the
    simulator ("rotor-simulation", docs/simulator.md)."""
    return json.loads(doc("simulate", dict(options, model=model, chip=chip, batch=batch)))


def schedule(model, chip=None, batch=None, **options):
    """`rotor schedule MODEL --json`: Elk's HBM preload schedule under each
    design ("rotor-schedule", docs/schedule.md); design="full,ideal" picks
    designs, hbm_bw the package's bandwidth in TB/s."""
    return json.loads(doc("schedule", dict(options, model=model, chip=chip, batch=batch)))


def _sweeps(sweep):
    """--sweep as rotor_doc reads it: a list of "KEY=VALUES" strings, from
    one such string, a list of them, or a dict {key: values} whose values
    are a list (of numbers or strings) or a string ("4:32:x2")."""
    if isinstance(sweep, str):
        return [sweep]
    if isinstance(sweep, dict):
        return [
            "%s=%s" % (k, v if isinstance(v, str) else ",".join(str(x) for x in v))
            for k, v in sweep.items()
        ]
    return list(sweep)


def explore(model, sweep, chip=None, **options):
    """`rotor explore MODEL --sweep ... --json`: the model scheduled at every
    point of a design-space grid ("rotor-explore", docs/explore.md).  sweep:
    ["hbm-bw=4,8", "noc-bw=2.75,5.5"] or {"hbm-bw": [4, 8], "noc-bw": [2.75, 5.5]};
    zip=True pairs the lists.  No file is written, so the document has no
    "csv" nor "svg" key; everything else is the CLI's."""
    return json.loads(doc("explore", dict(options, model=model, sweep=_sweeps(sweep), chip=chip)))


def _version():
    from ._lib import version

    return version()


def __getattr__(name):
    # __version__ asks the library, loaded at first use (PEP 562)
    if name == "__version__":
        return _version()
    raise AttributeError(name)
