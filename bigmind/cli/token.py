"""``bigmind token``: the HTTP gateway's bearer tokens — create (shown once), list, revoke.

Like ``bigmind user``, the command acts as ``BIGMIND_USER``: anyone may make, list and revoke
their own tokens; another user's need an admin (until the database has one, anyone).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bigmind.cli.commands import actions, emit
from bigmind.cli.main import load_settings
from bigmind.models import now_ts

if TYPE_CHECKING:
    from bigmind.service.accounts import TokenRow


def token_arguments(sp: argparse.ArgumentParser) -> None:
    action = actions(sp)
    create = action(
        "create",
        "Make a token for USER (added as a member if new) and print it once.",
        "bigmind token create alice --expires 90",
    )
    create.add_argument("user", help="whose token: the gateway acts as this user")
    create.add_argument("--expires", type=int, metavar="DAYS", help="valid for DAYS days")
    create.add_argument("--label", help="a note to tell tokens apart (e.g. 'laptop')")
    listing = action("list", "List tokens (never their secrets).", "bigmind token list alice")
    listing.add_argument("user", nargs="?", help="only this user's")
    revoke = action(
        "revoke", "Revoke one token by id, or every token of a user.", "bigmind token revoke bob"
    )
    revoke.add_argument("who", metavar="USER|ID")


def cmd_token(args: argparse.Namespace) -> int:
    from bigmind.service import accounts

    settings = load_settings()
    if args.action == "create":
        made = accounts.create_token(settings, args.user, days=args.expires, label=args.label)
        t = made.token
        until = f"until {t.expires_at[:10]}" if t.expires_at else "without expiry"
        human = (
            f"{made.secret}\n\nToken {t.id} for {t.username}, valid {until}. It is shown "
            "only now: store it in the client's environment (e.g. BIGMIND_TOKEN)."
        )
        emit(args, {"token": made.secret, **t.as_dict()}, human)
    elif args.action == "list":
        found = accounts.list_tokens(settings, args.user)
        emit(args, {"tokens": [t.as_dict() for t in found]}, _table(found))
    else:
        gone = accounts.revoke_tokens(settings, args.who)
        ids = ", ".join(t.id for t in gone)
        human = f"Revoked {len(gone)} token(s): {ids}." if gone else "Already revoked."
        emit(args, {"revoked": [t.id for t in gone]}, human)
    return 0


def _table(found: Sequence[TokenRow]) -> str:
    if not found:
        return "No tokens yet: `bigmind token create USER` makes one."
    width = max(len("USER"), *(len(t.username) for t in found))
    now = now_ts()
    lines = [f"{'ID':<36}  {'USER':<{width}}  {'STATE':<8}  CREATED     EXPIRES     LAST USED"]
    for t in found:
        state = "revoked" if t.revoked_at else "live"
        if state == "live" and t.expires_at is not None and t.expires_at <= now:
            state = "expired"
        lines.append(
            f"{t.id:<36}  {t.username:<{width}}  {state:<8}  {t.created_at[:10]}  "
            f"{(t.expires_at or '—')[:10]:<10}  {(t.last_used_at or '—')[:16]}"
        )
    return "\n".join(lines)
