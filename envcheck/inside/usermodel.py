"""The user's model for `envcheck bench --model FILE.py[:FUNCTION]`: its file loaded, its function called, what it
returned checked and put on a device. Child side, shared by model_record.py and model_time.py.

The file is code the user named to run: it runs here, in the target interpreter, in a child envcheck started for
`--model` alone, never in envcheck's own process and never because a profile or any other data named it.

    def model():                     # FUNCTION, "model" by default; called without arguments
        m = MLP().to(torch.bfloat16)
        x = torch.randn(16, 4096, dtype=torch.bfloat16)
        return m, x                  # the module and its example inputs: a tensor, a tuple or list of positional
                                     # arguments, or a dict of keyword arguments

It is called inside `with torch.device(DEVICE)`, so what it makes without naming a device lands on the device the
child works on (the meta device to record, CUDA to time: nothing is allocated to record); what it put elsewhere is
moved there. The file's folder is on sys.path (after the run folder), so that it can import its neighbours.

Standard library only at module level, Python 3.8 syntax (copied into the run folder as envcheck_usermodel.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types

try:  # imported as envcheck.inside.usermodel by envcheck's own process (tests)
    from . import protocol
except ImportError:  # run in its run folder, beside the envcheck_*.py copies (envcheck/runner.py)
    import envcheck_protocol as protocol

DEFAULT_FUNCTION = "model"
FLAG = "--model"


def load(path, name):
    """The function `name` of the file at `path`, run as a module of its own (its `if __name__ == "__main__"` part
    does not run). ModelUnusable when the file has no such callable; the file's own errors pass through."""
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(1, folder)
    spec = importlib.util.spec_from_file_location("envcheck_user_model", path)
    if spec is None or spec.loader is None:
        raise protocol.ModelUnusable("%s %s: not a Python file Python can load" % (FLAG, path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    function = getattr(module, name, None)
    if function is None:
        defined = sorted(k for k, v in vars(module).items() if isinstance(v, types.FunctionType)
                         and not k.startswith("_") and v.__module__ == spec.name)
        raise protocol.ModelUnusable("%s %s:%s: the file defines no %r (its functions: %s)" % (
            FLAG, path, name, name, ", ".join(defined) or "none"))
    if not callable(function):
        raise protocol.ModelUnusable("%s %s:%s: %r is %s, not a function" % (FLAG, path, name, name, _kind(function)))
    return function


def build(torch, function, device, where):
    """(module, args, kwargs) from function(), called under `with torch.device(device)`, everything moved to
    `device`; the module in eval mode (the run is inference: torch.no_grad around each call). `where` names the
    function in errors ("--model mlp.py:model")."""
    with torch.device(device):
        returned = function()
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        raise protocol.ModelUnusable("%s: expected it to return (module, example inputs), got %s" % (
            where, _kind(returned)))
    module, inputs = returned
    if not isinstance(module, torch.nn.Module):
        raise protocol.ModelUnusable("%s: expected a torch.nn.Module first in what it returns, got %s" % (
            where, _kind(module)))
    if isinstance(inputs, torch.Tensor):
        args, kwargs = (inputs,), {}
    elif isinstance(inputs, (tuple, list)):
        args, kwargs = tuple(inputs), {}
    elif isinstance(inputs, dict):
        args, kwargs = (), dict(inputs)
    else:
        raise protocol.ModelUnusable("%s: expected its example inputs to be a tensor, a tuple or list of arguments or "
                                     "a dict of keyword arguments, got %s" % (where, _kind(inputs)))
    module = module.to(device).eval()

    def moved(value):
        return value.to(device) if isinstance(value, torch.Tensor) else value

    return module, tuple(moved(a) for a in args), {k: moved(v) for k, v in kwargs.items()}


def describe_inputs(torch, args, kwargs):
    """[{"name", "shape", "dtype"}] of the tensor inputs (the others by type)."""
    found = []
    for name, value in [(str(i), a) for i, a in enumerate(args)] + sorted(kwargs.items()):
        if isinstance(value, torch.Tensor):
            found.append({"name": name, "shape": list(value.shape), "dtype": str(value.dtype).replace("torch.", "")})
        else:
            found.append({"name": name, "shape": None, "dtype": type(value).__name__})
    return found


def _kind(value):
    """"a tuple of 3", "an int", "None"."""
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    if isinstance(value, (tuple, list)):
        return "%s %s of %d" % (article, name, len(value))
    return "None" if value is None else "%s %s" % (article, name)
