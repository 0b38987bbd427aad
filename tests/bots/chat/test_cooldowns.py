"""One check per cooldown per chat, claimed at once and given back when refused."""

from __future__ import annotations

from bots.chat.cooldowns import Cooldowns


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_chat_gets_one_check_per_cooldown() -> None:
    clock = Clock()
    cooldowns = Cooldowns(clock=clock)
    assert cooldowns.claim("a", 10) == (0.0, 1000.0)
    left, _ = cooldowns.claim("a", 10)
    assert left == 10.0
    assert cooldowns.claim("b", 10)[0] == 0.0  # other chats are not held up
    clock.now += 10
    assert cooldowns.claim("a", 10)[0] == 0.0


def test_a_refused_request_gives_its_claim_back_but_not_a_later_one() -> None:
    clock = Clock()
    cooldowns = Cooldowns(clock=clock)
    _, first = cooldowns.claim("a", 10)
    cooldowns.release("a", first)
    _, second = cooldowns.claim("a", 10)
    assert second == first  # free again at once
    clock.now += 1
    _, third = cooldowns.claim("a", 0.5)  # a shorter cooldown let one through
    cooldowns.release("a", second)  # an old claim cannot undo the newer one
    assert cooldowns.claim("a", 10)[0] > 0 and third == 1001.0


def test_old_claims_are_forgotten() -> None:
    clock = Clock()
    cooldowns = Cooldowns(longest_s=60, clock=clock)
    for n in range(1025):
        cooldowns.claim(f"chat-{n}", 60)
    clock.now += 61
    cooldowns.claim("new", 60)
    assert len(cooldowns) == 1


def test_once_says_a_thing_once_per_wait_and_leaves_the_chats_check_alone() -> None:
    clock = Clock()
    cooldowns = Cooldowns(clock=clock)
    assert cooldowns.once("a follow-up sentence x", 60)
    assert not cooldowns.once("a follow-up sentence x", 60)
    assert cooldowns.once("a follow-up sentence y", 60)  # another sentence
    assert cooldowns.claim("a", 60)[0] == 0.0  # the chat's check is not held up
    clock.now += 60
    assert cooldowns.once("a follow-up sentence x", 60)
