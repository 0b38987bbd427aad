"""The engine's records, on its ground floor: what Stage 1 found (``stage1``), what
was read and found in a post's images (``images``) and what was heard in its voice note
(``audio``). :mod:`zofia_engine.report` and
:mod:`zofia_engine.post` build on them; everything else in the engine imports them
from here and nothing here imports the rest of the engine."""
