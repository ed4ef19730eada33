"""Protocol v1 of the race server: every message as a typed dataclass, and the one encoder/decoder of frames.

Both the server and the client library import this package; nothing else in the project knows the wire format.
It is pure (no I/O) and imports only the engine's error codes. docs/PROTOCOL.md is its human-readable form.

A frame is one binary WebSocket message holding one MessagePack map with a ``type`` field. Requests carry a
client-chosen ``id`` that the reply echoes; race events carry the race id and a per-race sequence number ``seq``.

Modules: :mod:`.codes` (version, limits, error and close codes), :mod:`.states` (race status, attempt state, reasons), :mod:`.base` (message bases), :mod:`.records`
(nested records), :mod:`.requests`, :mod:`.replies`, :mod:`.events` (race events), :mod:`.lobby` (lobby entries
and events), :mod:`.codec` (encoding and decoding). The package is every public name those modules define: a new
message is written in its module only (for mypy a name a module imports is not one of them).
"""

from shared.protocol.base import *
from shared.protocol.codec import *
from shared.protocol.codes import *
from shared.protocol.events import *
from shared.protocol.lobby import *
from shared.protocol.records import *
from shared.protocol.replies import *
from shared.protocol.requests import *
from shared.protocol.states import *
