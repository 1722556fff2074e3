"""Webhook secrets: derived from the webhook key, stored as digests, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from herd.store import receivers
from herd.store.models import ReceiverRow

KEY = b"k" * 64
URL_SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _receiver(key: bytes = KEY) -> tuple[ReceiverRow, str]:
    return receivers.new_receiver(
        name="r",
        type_="webhook",
        cluster_id="c",
        action="CLUSTER_SCALE_OUT",
        params={},
        user="u",
        project="p",
        now=1.0,
        webhook_base="http://herd.example",
        key=key,
    )


def test_secrets_are_long_distinct_and_url_safe() -> None:
    made = {_receiver()[1] for _ in range(200)}
    assert len(made) == 200
    for secret in made:
        assert len(secret) == 43
        assert set(secret) <= URL_SAFE


def test_only_the_digest_is_kept_and_only_the_secret_matches_it() -> None:
    row, secret = _receiver()
    assert row.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {row.secret_hash, row.secret_salt, row.webhook_base}
    assert receivers.secret_matches(row.secret_hash, secret)
    assert not receivers.secret_matches(row.secret_hash, secret + "x")
    assert not receivers.secret_matches(row.secret_hash, secret[:-1])
    assert not receivers.secret_matches(row.secret_hash, secret.upper())
    assert not receivers.secret_matches(row.secret_hash, "é" + secret[1:])  # any text is hashed


def test_the_secret_is_derived_again_under_the_same_key_only() -> None:
    row, secret = _receiver()
    assert receivers.secret_of(row, KEY) == secret
    assert receivers.secret_of(row, b"another key") is None


def test_a_receiver_without_a_salt_shows_no_secret() -> None:
    row, _ = _receiver()
    row.secret_salt = None
    assert receivers.secret_of(row, KEY) is None


@pytest.mark.parametrize("given", [None, ""])
def test_a_missing_secret_never_matches(given: str | None) -> None:
    assert not receivers.secret_matches(receivers.secret_digest(""), given)
    assert not receivers.secret_matches(receivers.secret_digest("s"), given)


def test_an_unknown_receiver_never_matches() -> None:
    assert not receivers.secret_matches(None, "anything")
    assert not receivers.secret_matches(None, None)


def test_rotation_invalidates_the_old_secret() -> None:
    row, old = _receiver()
    new = receivers.rotate_secret(row, KEY)
    assert new != old
    assert receivers.secret_matches(row.secret_hash, new)
    assert not receivers.secret_matches(row.secret_hash, old)
    assert receivers.secret_of(row, KEY) == new


def test_comparison_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Boundary: timing cannot be asserted on a shared machine, so check that every
    # comparison, for a known and for an unknown receiver and for no secret, goes
    # through hmac.compare_digest over digests rather than ==.
    calls: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr("herd.store.receivers.hmac.compare_digest", spy)
    stored = receivers.secret_digest("s")
    assert receivers.secret_matches(stored, "s")
    assert not receivers.secret_matches(None, "s")
    assert not receivers.secret_matches(stored, None)
    assert [a for a, _ in calls] == [stored, stored, receivers.secret_digest("")]
    assert calls[0][1] == stored and calls[1][1] != stored
