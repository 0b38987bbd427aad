"""Migration m016: raw chat ids sealed at rest (:mod:`storage.sealing`).

A correction or a delivery needs the platform's raw chat id, which the rest of the
store keeps only as a keyed hash; a copy of the database should not give it away.
Where a card was shown keeps its raw chat id and its interaction token sealed (Fernet,
with a key from the store's secret), and ``shown_cards.chat_hash``, the chat's keyed
hash, to be found by; the unique place of a card is keyed by it. A delivery's target
(its raw ids) is sealed too. The rows written before this step are sealed here, which
needs the secret when there are any.
"""

from __future__ import annotations

from ..errors import StorageError
from ..sealing import Sealer
from ..sql import StoreDatabase, first_row

__all__ = ["apply"]

_HAS_RAW_IDS = (
    "SELECT EXISTS (SELECT 1 FROM shown_cards)"
    " OR EXISTS (SELECT 1 FROM deliveries WHERE target_json != '{}')"
)


def apply(db: StoreDatabase, secret: bytes | None) -> None:
    """Seal the stored raw ids with ``secret`` and key the cards by their chat's hash.

    Raises:
        StorageError: the store holds raw ids and no secret was given.
    """
    db.execute("ALTER TABLE shown_cards ADD COLUMN chat_hash TEXT NOT NULL DEFAULT ''")
    db.execute("DROP INDEX idx_shown_cards_place")
    (has_rows,) = first_row(db.execute(_HAS_RAW_IDS))
    if has_rows:
        if secret is None:
            raise StorageError("migration m016 seals stored chat ids with the secret; open with it")
        _seal_rows(db, Sealer(secret))
    db.execute(
        "CREATE UNIQUE INDEX idx_shown_cards_place"
        " ON shown_cards (check_id, platform, chat_hash, message)"
    )


def _seal_rows(db: StoreDatabase, sealer: Sealer) -> None:
    cards = db.execute("SELECT id, platform, chat, token FROM shown_cards").fetchall()
    for card_id, platform, chat, token in cards:
        db.execute(
            "UPDATE shown_cards SET chat = ?, chat_hash = ?, token = ? WHERE id = ?",
            [sealer.seal(chat), sealer.chat_key(platform, chat), sealer.seal(token), card_id],
        )
    targets = db.execute(
        "SELECT check_id, target_json FROM deliveries WHERE target_json != '{}'"
    ).fetchall()
    for check_id, target in targets:
        db.execute(
            "UPDATE deliveries SET target_json = ? WHERE check_id = ?",
            [sealer.seal(target), check_id],
        )
