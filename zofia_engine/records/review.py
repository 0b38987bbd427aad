"""A review in force, as a report shows it: the machine's verdict beside the reviewer's."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ReviewInForce"]


class ReviewInForce(BaseModel):
    """The review a report is shown with: the machine's verdict (``machine``, as
    stored), the reviewed one (``verdict``; the same for a confirmation), the note and
    link, and whose it is (``everywhere``: the service's reviewers or the operator, for
    every chat; else the moderators of the chat it is shown in)."""

    model_config = ConfigDict(extra="forbid")

    machine: str
    verdict: str
    note: str = ""
    link: str = ""
    everywhere: bool = True

    @property
    def confirmed(self) -> bool:
        return self.machine == self.verdict
