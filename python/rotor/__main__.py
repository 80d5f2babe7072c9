"""python3 -m rotor: a thin command line over the package.

    python3 -m rotor --version
    python3 -m rotor plan --expr 'C[m,n] += A[m,k] * B[k,n]' --dim m=32,k=64,n=16
    python3 -m rotor compile bert-large --batch 8 --set cores_per_chip=736
    python3 -m rotor explore llama2-13b --layers 2 --sweep hbm-bw=4,8 --sweep noc-bw=2.75,5.5

prints the command's document, the text `rotor COMMAND --json` prints.  The
options are the command's long options (docs/python.md): `--name value`, a
flag alone, --set and --sweep repeated; an integer-looking value is passed as a number.
Errors: "rotor COMMAND: message" on stderr, exit status as rotor's (2 bad
input, 1 no plan fits, 3 out of memory)."""

import sys

from . import RotorError, document
from ._lib import version

COMMANDS = ("plan", "compile", "simulate", "schedule", "explore")
USAGE = "usage: python3 -m rotor --version | {%s} [MODEL] [--option value ...]" % ",".join(COMMANDS)
# rotor_status to the CLI's exit status (src/cli/cli.h): input 2, no fit 1, memory 3, I/O 2
EXIT = {1: 2, 2: 1, 3: 3, 4: 2}


def _value(text):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text) if any(c.isdigit() for c in text) and "=" not in text else text
        except ValueError:
            return text


def parse(args):
    """args after the command into the options dict; a first word that is
    not an option is the model."""
    opts = {}
    i = 0
    if args and not args[0].startswith("--"):
        opts["model"] = args[0]
        i = 1
    while i < len(args):
        a = args[i]
        if not a.startswith("--") or len(a) < 3:
            raise RotorError("unexpected argument '%s' (%s)" % (a, USAGE))
        name = a[2:]
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            v, i = _value(args[i + 1]), i + 2
        else:
            v, i = True, i + 1
        if name in ("set", "sweep"):
            opts.setdefault(name, []).append(v)
        elif name in opts:
            raise RotorError("--%s given twice" % name)
        else:
            opts[name] = v
    return opts


def main(argv):
    if argv[:1] == ["--version"]:
        print("rotor %s" % version())
        return 0
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        print(USAGE, file=sys.stdout if argv[:1] in (["-h"], ["--help"]) else sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    cmd = argv[0]
    try:
        print(document(cmd, **parse(argv[1:])))
    except RotorError as e:
        print("rotor %s: %s" % (cmd, e), file=sys.stderr)
        return EXIT.get(e.status, 2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
