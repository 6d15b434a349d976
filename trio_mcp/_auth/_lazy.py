"""What authorization loads on first use: joserfc (the ``auth`` extra, through
:mod:`._joserfc`), when a key is first imported, a signature first checked or made, or a DPoP
key first made. A program whose flow needs no JOSE (bearer tokens, client secrets) neither
needs the extra nor pays for loading it (see "What importing loads" in
``docs/reference/layout.md``). Code here and in ``_client/`` writes ``_lazy.Name``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import on_first_use

# What __getattr__ below loads on first use: on_first_use reads these statements.
# isort: off
if TYPE_CHECKING:
    from ._client._dpop_proof import DPoPKey
    from ._joserfc import JWSRegistry, JoseError, jwk, jws, jwt
# isort: on

if not TYPE_CHECKING:
    __getattr__ = on_first_use(globals())
