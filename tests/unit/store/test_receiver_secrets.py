"""Webhook secrets: random, kept for the URLs, compared in constant time, absent ones refused."""

from __future__ import annotations

import hmac

import pytest

from herd.store import receivers
from herd.store.models import ReceiverRow


def _receiver() -> tuple[ReceiverRow, str]:
    return receivers.new_receiver(
        name="r",
        type_="webhook",
        cluster_id="c",
        action="CLUSTER_SCALE_OUT",
        params={},
        user="u",
        project="p",
        now=1.0,
    )


def test_secrets_are_long_random_and_url_safe() -> None:
    made = {receivers.new_secret() for _ in range(200)}
    assert len(made) == 200
    for secret in made:
        assert len(secret) >= 43
        assert set(secret) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        )


def test_the_secret_is_kept_and_only_it_matches() -> None:
    row, secret = _receiver()
    assert row.secret == secret
    assert receivers.secret_matches(row.secret, secret)
    assert not receivers.secret_matches(row.secret, secret + "x")
    assert not receivers.secret_matches(row.secret, secret[:-1])
    assert not receivers.secret_matches(row.secret, secret.upper())
    assert not receivers.secret_matches(row.secret, "é" + secret[1:])  # any text is compared


@pytest.mark.parametrize("given", [None, ""])
def test_a_missing_secret_never_matches(given: str | None) -> None:
    assert not receivers.secret_matches("", given)
    assert not receivers.secret_matches("s", given)


def test_an_unknown_receiver_never_matches() -> None:
    assert not receivers.secret_matches(None, "anything")
    assert not receivers.secret_matches(None, None)


def test_rotation_invalidates_the_old_secret() -> None:
    row, old = _receiver()
    new = receivers.rotate_secret(row)
    assert new != old
    assert receivers.secret_matches(row.secret, new)
    assert not receivers.secret_matches(row.secret, old)


def test_comparison_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Boundary: timing cannot be asserted on a shared machine, so check that every
    # comparison, for a known and for an unknown receiver, goes through
    # hmac.compare_digest rather than ==.
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert receivers.secret_matches("s", "s")
    assert not receivers.secret_matches(None, "s")
    assert not receivers.secret_matches("s", None)
    assert [a for a, _ in calls] == [b"s", b"s", b""]
    assert calls[0][1] == b"s" and calls[1][1] != b"s"
