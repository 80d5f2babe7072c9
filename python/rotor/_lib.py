"""librotor.so through ctypes: where it is found, and the two calls the
package makes (rotor_doc, rotor_version; include/rotor/pipeline/doc.h).

The library is found, in order: the file $ROTOR_LIB names; the build/ of
the repository this package sits in (python/rotor -> ../../build); the
system's librotor.so.0 (after `make install`)."""

import ctypes
import os

ERROR_MAX = 512  # ROTOR_ERROR_MAX, include/rotor/base/error.h: rotor_error is char[512]


class RotorError(Exception):
    """A failure of rotor, with its one-line message (str(e)) and its status
    (e.status: 1 input, 2 no plan fits, 3 out of memory, 4 I/O, as
    rotor_status in include/rotor/base/error.h)."""

    __module__ = "rotor"  # raised as rotor.RotorError

    def __init__(self, message, status=1):
        super().__init__(message)
        self.status = status


def _candidates():
    env = os.environ.get("ROTOR_LIB")
    if env:
        return [env]  # named: no other is tried, so a wrong path is not hidden
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(os.path.dirname(os.path.dirname(here)), "build")
    return [os.path.join(build, "librotor.so.0"), os.path.join(build, "librotor.so"), "librotor.so.0"]


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        lib.rotor_doc.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
        lib.rotor_doc.restype = ctypes.c_int
        lib.rotor_free.argtypes = [ctypes.c_void_p]
        lib.rotor_free.restype = None
        lib.rotor_version.argtypes = []
        lib.rotor_version.restype = ctypes.c_char_p
        return lib
    raise ImportError("rotor: librotor not found (build it with `make build/librotor.so`, or set ROTOR_LIB): "
                      + "; ".join(tried))


_LIB = None


def lib():
    """The loaded library (loaded at the first call)."""
    global _LIB
    if _LIB is None:
        _LIB = _load()
    return _LIB


def doc(command, options):
    """The document of `rotor COMMAND --json` as text: options is a dict of
    the command's long options (docs/python.md)."""
    l = lib()
    out = ctypes.c_void_p()
    err = ctypes.create_string_buffer(ERROR_MAX)
    text = json_options(options)
    st = l.rotor_doc(command.encode(), text.encode(), ctypes.byref(out), err)
    if st != 0:
        raise RotorError(err.value.decode("utf-8", "replace"), st)
    try:
        return ctypes.string_at(out.value).decode("utf-8")
    finally:
        l.rotor_free(out)


def json_options(options):
    """The options object rotor_doc reads: None values dropped, False flags
    dropped (a flag is given or not), a list or tuple of --set as a list."""
    import json

    kept = {}
    for k, v in options.items():
        if v is None or v is False:
            continue
        kept[k] = list(v) if isinstance(v, tuple) else v
    return json.dumps(kept)


def version():
    return lib().rotor_version().decode()
