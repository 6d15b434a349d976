"""What a worker process of ``serve(workers=N)`` needs to serve: where its ``Server`` is
defined, where to listen and with which options, handed over as one pickle on its stdin."""

from __future__ import annotations

import importlib
import os
import pickle
import runpy
import sys
import types
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from hypercorn.config import Config

    from ..._server._server import Server
    from ._http11_parse import Http11Limits

__all__ = ["ServerRef", "WorkerSpec", "load_main_script", "server_ref"]


@attrs.frozen
class ServerRef:
    """Where a worker finds its ``Server``: attribute ``attribute`` of module ``module``
    (``"__main__"``: the program's script, which the worker runs first the way
    :mod:`multiprocessing` does, as ``__mp_main__``, so that its
    ``if __name__ == "__main__":`` block stays out). The attribute is a ``Server``, or a
    function of no arguments that returns one."""

    module: str
    attribute: str

    def load(self) -> Server:
        """Import the module and return its ``Server`` (calling a factory).

        Raises:
            TypeError: the attribute is neither a ``Server`` nor a factory of one.
        """
        from ..._server._server import Server

        found = getattr(importlib.import_module(self.module), self.attribute, None)
        if callable(found) and not isinstance(found, Server):
            found = found()
        if not isinstance(found, Server):
            raise TypeError(
                f"{self.module}:{self.attribute} is {type(found).__name__}, not a Server "
                "(or a function of no arguments returning one)"
            )
        return found


def load_main_script(path: str) -> None:
    """Run the parent's script as ``__mp_main__`` and make it this process's ``__main__``
    too, so that what was pickled from the parent's ``__main__`` is found here."""
    namespace = runpy.run_path(path, run_name="__mp_main__")
    module = types.ModuleType("__mp_main__")
    module.__dict__.update(namespace)
    sys.modules["__mp_main__"] = sys.modules["__main__"] = module


def server_ref(server: Server | str) -> ServerRef:
    """How a worker process finds ``server``: ``"module:attribute"`` as given, or the
    module-level variable that holds the ``Server`` object.

    Raises:
        ValueError: a string that is not ``"module:attribute"``.
        TypeError: a ``Server`` that no module holds at its top level (a worker process
            could not build it again).
    """
    if isinstance(server, str):
        module_name, colon, attribute = server.partition(":")
        if not colon or not module_name or not attribute.isidentifier():
            raise ValueError(
                f"serve(workers=N) takes a Server or 'module:attribute', not {server!r}"
            )
        return ServerRef(module_name, attribute)
    main = sys.modules.get("__main__")
    for name, module in list(sys.modules.items()):
        namespace = getattr(module, "__dict__", None)
        if module is main or name == "__mp_main__" or not isinstance(namespace, dict):
            continue
        for attribute, value in list(namespace.items()):
            if value is server and attribute.isidentifier():
                return ServerRef(name, attribute)
    if main is not None and getattr(main, "__file__", None) is not None:
        for attribute, value in list(vars(main).items()):
            if value is server and attribute.isidentifier():
                return ServerRef("__main__", attribute)
    raise TypeError(
        "serve(workers=N) starts each worker from a module: define the Server at the top "
        "level of a module or script, or pass 'module:attribute' naming it (or a function "
        "returning it)"
    )


@attrs.frozen
class WorkerSpec:
    """Everything one worker process is told. Pickled: the options must pickle."""

    server: ServerRef
    host: str
    port: int
    graceful_timeout: float
    backlog: int
    config: Config | None
    app_options: dict[str, Any]
    sys_path: list[str]
    log_level: int
    front_end: str = "hypercorn"
    http11_limits: Http11Limits | None = None
    #: The ``requestState`` key of every worker whose Server was given none.
    secret: bytes = attrs.field(factory=lambda: os.urandom(32), repr=False)
    ready_fd: int = -1

    def dumps(self) -> bytes:
        """The spec as its worker reads it: an 8-byte length, then a pickle of the import
        path, the script to run first (when the server lives in ``__main__``) and the
        spec's own pickle, which is loaded once those are in place.

        Raises:
            TypeError: an option that does not pickle, named.
        """
        for key, value in self.app_options.items():
            try:
                pickle.dumps(value)
            except Exception as exc:
                raise TypeError(
                    f"serve(workers=N): option {key}={value!r} cannot be sent to a worker "
                    f"process ({exc}): each worker gets a copy of every option, so options "
                    "must pickle"
                ) from exc
        script = None
        if self.server.module == "__main__":
            script = getattr(sys.modules["__main__"], "__file__", None)
        blob = pickle.dumps((self.sys_path, script, pickle.dumps(self)))
        return len(blob).to_bytes(8, "big") + blob

    @staticmethod
    def loads(blob: bytes) -> WorkerSpec:
        """The spec :meth:`dumps` wrote (after its length), in the worker: sets
        ``sys.path`` and runs the parent's script first where the server lives there."""
        sys_path, script, inner = pickle.loads(blob)
        sys.path[:] = sys_path
        if script is not None:
            load_main_script(script)
        spec = pickle.loads(inner)
        assert isinstance(spec, WorkerSpec)
        return spec
