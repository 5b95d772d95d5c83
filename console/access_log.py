"""gunicorn's access log without identity numbers (`--logger-class` in scripts/serve.sh).

The access log writes every request line whole, query string included, and a query may carry
a TCKN or VKN (a bookmarked search, an old link, a client of the API that still sends one by
GET). The log store keeps what it is sent for months, so the digits are masked here, before the
line is written, the same way every other log line is (insurehub.masking): the first three
and last two digits stay, enough to tell two customers apart when reading a log.
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

from insurehub.masking import mask_identities_in_text

# The atoms of an access line that carry the URL or its query, request line and referer included.
_URL_ATOMS = ("r", "U", "q", "f", "{raw_uri}e", "{query_string}e", "{path_info}e", "{referer}i")


class MaskedAccessLogger(Logger):
    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict[str, Any]:
        atoms = super().atoms(resp, req, environ, request_time)
        for name in _URL_ATOMS:
            value = atoms.get(name)
            if isinstance(value, str):
                atoms[name] = mask_identities_in_text(value)
        return atoms
