"""bigmind/service/accounts.py: users and the gateway's tokens, handled as BIGMIND_USER: one's
own tokens always, another user's only as an admin (both backends)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bigmind.config import Settings
from bigmind.errors import Forbidden, NoMemoryYet
from bigmind.service import accounts


def test_listing_users_makes_no_database(settings: Settings) -> None:
    if settings.db_url:
        pytest.skip("PostgreSQL's database is made by its administrator")
    with pytest.raises(NoMemoryYet):
        accounts.list_users(settings)
    assert not settings.db_path.exists()


def test_the_first_admin_then_roles_as_an_admin(settings_for: Callable[[str], Settings]) -> None:
    alice = settings_for("alice")
    assert accounts.add_user(alice, "alice", "admin").role == "admin"  # no admin yet: anyone
    bob = accounts.add_user(alice, "bob")
    assert bob.role == "member"
    user, before = accounts.set_role(alice, "bob", "curator")
    assert (user.role, before) == ("curator", "member")
    with pytest.raises(Forbidden):
        accounts.add_user(settings_for("bob"), "carol")
    assert [u.username for u in accounts.list_users(alice)] == ["alice", "bob"]


def test_a_member_handles_their_own_tokens_only(settings_for: Callable[[str], Settings]) -> None:
    alice, bob = settings_for("alice"), settings_for("bob")
    accounts.add_user(alice, "alice", "admin")
    made = accounts.create_token(bob, "bob", days=30, label="laptop")
    assert made.secret.startswith("bm_") and made.token.username == "bob"
    assert [t.id for t in accounts.list_tokens(bob, "bob")] == [made.token.id]
    for act in (
        lambda: accounts.list_tokens(bob),  # everyone's
        lambda: accounts.create_token(bob, "alice"),
        lambda: accounts.revoke_tokens(bob, "alice"),
    ):
        with pytest.raises(Forbidden, match="Only an admin"):
            act()
    assert [t.id for t in accounts.revoke_tokens(alice, "bob")] == [made.token.id]
