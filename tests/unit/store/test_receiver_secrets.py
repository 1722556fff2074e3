"""Webhook secrets: random, stored as a digest, compared in constant time, absent ones refused."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from herd.store import receivers


def test_secrets_are_long_random_and_url_safe() -> None:
    made = {receivers.new_secret() for _ in range(200)}
    assert len(made) == 200
    for secret in made:
        assert len(secret) >= 43
        assert set(secret) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        )


def test_only_the_digest_is_kept_and_it_matches() -> None:
    row, secret = receivers.new_receiver(
        name="r",
        type_="webhook",
        cluster_id="c",
        action="CLUSTER_SCALE_OUT",
        params={},
        user="u",
        project="p",
        now=1.0,
    )
    assert row.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in repr(vars(row))
    assert receivers.secret_matches(row.secret_hash, secret)
    assert not receivers.secret_matches(row.secret_hash, secret + "x")
    assert not receivers.secret_matches(row.secret_hash, secret[:-1])
    assert not receivers.secret_matches(row.secret_hash, row.secret_hash)  # the digest is no key


@pytest.mark.parametrize("given", [None, ""])
def test_a_missing_secret_never_matches(given: str | None) -> None:
    assert not receivers.secret_matches(receivers.secret_digest(""), given)


def test_an_unknown_receiver_never_matches() -> None:
    assert not receivers.secret_matches(None, "anything")
    assert not receivers.secret_matches(None, None)


def test_rotation_invalidates_the_old_secret() -> None:
    row, old = receivers.new_receiver(
        name="r",
        type_="webhook",
        cluster_id="c",
        action=None,
        params={},
        user="u",
        project="p",
        now=1.0,
    )
    new = receivers.rotate_secret(row)
    assert new != old
    assert receivers.secret_matches(row.secret_hash, new)
    assert not receivers.secret_matches(row.secret_hash, old)


def test_comparison_is_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # Boundary: timing cannot be asserted on a shared machine, so check that the
    # comparison goes through hmac.compare_digest, for a known and an unknown receiver.
    calls: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    digest = receivers.secret_digest("s")
    assert receivers.secret_matches(digest, "s")
    assert not receivers.secret_matches(None, "s")
    assert len(calls) == 2 and all(len(a) == len(b) == 64 for a, b in calls)
