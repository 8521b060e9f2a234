"""PostgreSQL row-level security: who may read and write which rows (docs/privacy-postgres.md).

Every private table gets ``ENABLE`` + ``FORCE ROW LEVEL SECURITY`` (so the role that owns the
tables — BigMind's own — is bound too) and a policy keyed on ``bigmind.user_id``, the setting
:class:`~bigmind.storage.pg.PostgresBackend` puts in force on every connection it hands a
user's store. A session that has not set it sees no private row and can write none. Shared
rows are readable by policy: people, the users table (its directory fields), approved company
knowledge (pending entries: their proposer, curators and admins), vectors whose owner is ''.

Roles are checked here as well as in the application: a trigger refuses a role change, or a
user added with a role other than member, unless the session's user is an admin (or the
database has no admin yet: the first one must be makeable); another refuses approving,
deprecating or rejecting company knowledge unless the session's user is a curator or admin.

``bigmind.maintenance = 'on'`` opens every row to a session of a role that owns the tables
(migrations, the SQLite → PostgreSQL copier, the background embedder and usage flusher, which
work across users): a role that merely uses the tables gets nothing from it.

Which of these rules a table gets is its registry entry's ``privacy``
(:mod:`bigmind.storage.schema`); a table that does not exist (yet) is skipped, so the registry
may name tables later migrations add.
"""

from __future__ import annotations

from bigmind.storage import schema
from bigmind.storage.db import Tx

USER_SETTING = "bigmind.user_id"
MAINTENANCE_SETTING = "bigmind.maintenance"

# Tables an import may ask about ids of (bigmind_taken): the private ones and every one it
# writes to.
IDENTIFIED = tuple(
    t.name
    for t in schema.TABLES
    if t.privacy in ("owned", "belonging") or isinstance(t.export, schema.Export)
)

_ME = "bigmind_uid()"
_MINE = f"(user_id = {_ME} OR bigmind_maintenance())"
_ACTING = f"({_ME} IS NOT NULL OR bigmind_maintenance())"


def _functions(current: str) -> str:
    """The helpers the policies call. ``bigmind_role`` and ``bigmind_has_admin`` are SECURITY
    DEFINER (fixed search_path) so a policy on ``users`` may ask about ``users``;
    ``bigmind_taken`` tells an import which ids of a private table exist at all (whoever
    owns them), so a row is renamed rather than collide — existence only, no content."""
    path = f'pg_catalog, "{current}"'
    return f"""
CREATE OR REPLACE FUNCTION bigmind_uid() RETURNS text LANGUAGE sql STABLE AS
$$ SELECT nullif(current_setting('{USER_SETTING}', true), '') $$;
CREATE OR REPLACE FUNCTION bigmind_maintenance() RETURNS boolean LANGUAGE sql STABLE AS
$$ SELECT coalesce(current_setting('{MAINTENANCE_SETTING}', true), '') = 'on'
   AND pg_has_role(current_user, (SELECT relowner FROM pg_class
                                  WHERE oid = to_regclass('"{current}".users')), 'MEMBER') $$;
CREATE OR REPLACE FUNCTION bigmind_role() RETURNS text LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = {path} AS
$$ SELECT coalesce((SELECT coalesce(role, 'member') FROM users
                    WHERE id = nullif(current_setting('{USER_SETTING}', true), '')), '') $$;
CREATE OR REPLACE FUNCTION bigmind_has_admin() RETURNS boolean LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = {path} AS
$$ SELECT EXISTS (SELECT 1 FROM users WHERE role = 'admin') $$;
CREATE OR REPLACE FUNCTION bigmind_taken(tbl text, ids text[]) RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = {path} AS $$
DECLARE t text; was text := current_setting('{MAINTENANCE_SETTING}', true);
BEGIN
  IF NOT tbl = ANY(ARRAY[{", ".join(f"'{t}'" for t in IDENTIFIED)}]) THEN
    RAISE EXCEPTION 'bigmind_taken: % is not a BigMind table with ids', tbl;
  END IF;
  SELECT format_type(a.atttypid, a.atttypmod) INTO t FROM pg_attribute a
   WHERE a.attrelid = to_regclass(tbl) AND a.attname = 'id';
  PERFORM set_config('{MAINTENANCE_SETTING}', 'on', true);  -- as the owner, for this query
  RETURN QUERY EXECUTE format('SELECT CAST(id AS text) FROM %I WHERE id = ANY(CAST($1 AS %s[]))',
                              tbl, t) USING ids;
  PERFORM set_config('{MAINTENANCE_SETTING}', coalesce(was, ''), true);
END $$;
CREATE OR REPLACE FUNCTION bigmind_guard_roles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND coalesce(NEW.role, 'member') = 'member' THEN RETURN NEW; END IF;
  IF TG_OP = 'UPDATE' AND NEW.role IS NOT DISTINCT FROM OLD.role THEN RETURN NEW; END IF;
  IF bigmind_maintenance() OR bigmind_role() = 'admin' OR NOT bigmind_has_admin() THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'Only an admin can change users or give a role other than member.'
    USING ERRCODE = '42501';
END $$;
CREATE OR REPLACE FUNCTION bigmind_guard_review() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' AND coalesce(NEW.status, 'pending') = 'pending'
     AND NEW.approved_by IS NULL AND NEW.reviewed_by IS NULL THEN RETURN NEW; END IF;
  IF TG_OP = 'UPDATE' AND NEW.status IS NOT DISTINCT FROM OLD.status
     AND NEW.approved_by IS NOT DISTINCT FROM OLD.approved_by
     AND NEW.reviewed_by IS NOT DISTINCT FROM OLD.reviewed_by THEN RETURN NEW; END IF;
  IF bigmind_maintenance() OR bigmind_role() IN ('curator', 'admin') THEN RETURN NEW; END IF;
  RAISE EXCEPTION 'Only a curator or admin can approve, deprecate or reject company knowledge.'
    USING ERRCODE = '42501';
END $$;
"""


def _guard(table: str, *policies: tuple[str, str]) -> str:
    """ENABLE + FORCE on ``table`` and its policies (name, clause), made afresh."""
    out = [
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY;",
    ]
    for name, clause in policies:
        out.append(f"DROP POLICY IF EXISTS {name} ON {table};")
        out.append(f"CREATE POLICY {name} ON {table} {clause};")
    return "\n".join(out)


def owned_ddl(table: str) -> str:
    return _guard(table, ("bigmind_owner", f"USING {_MINE} WITH CHECK {_MINE}"))


def vector_policy_ddl(table: str) -> str:
    """A table of vectors or of their bookkeeping: owner '' shared, others private."""
    write = f"({_MINE} OR (user_id = '' AND {_ME} IS NOT NULL))"
    return _guard(
        table,
        ("bigmind_read", f"FOR SELECT USING (user_id = '' OR {_MINE})"),
        ("bigmind_write", f"USING {write} WITH CHECK {write}"),
    )


def _belonging_ddl(table: str) -> str:
    """A row without an owner column: visible exactly when the row it belongs to is."""
    parent = schema.entry(table).parent
    if parent is None:
        raise ValueError(f"{table!r} names no parent row in the registry")
    mine = f"(EXISTS (SELECT 1 FROM {parent[0]} s WHERE s.id = {table}.{parent[1]}))"
    return _guard(table, ("bigmind_owner", f"USING {mine} WITH CHECK {mine}"))


def directory_ddl(table: str) -> str:
    return _guard(
        table,
        ("bigmind_read", "FOR SELECT USING (true)"),
        ("bigmind_write", f"USING {_MINE} WITH CHECK {_MINE}"),
    )


def shared_ddl(table: str) -> str:
    return _guard(
        table,
        ("bigmind_read", "FOR SELECT USING (true)"),
        ("bigmind_write", f"USING {_ACTING} WITH CHECK {_ACTING}"),
    )


def _users_ddl(table: str) -> str:
    mine = f"(id = {_ME} OR bigmind_role() = 'admin' OR NOT bigmind_has_admin()"
    mine += " OR bigmind_maintenance())"
    return _guard(
        table,
        ("bigmind_read", "FOR SELECT USING (true)"),
        ("bigmind_insert", "FOR INSERT WITH CHECK (true)"),  # the role: bigmind_guard_roles
        ("bigmind_update", f"FOR UPDATE USING {mine} WITH CHECK {mine}"),
        ("bigmind_delete", "FOR DELETE USING (bigmind_maintenance())"),
    ) + (
        f"\nDROP TRIGGER IF EXISTS bigmind_guard_roles ON {table};"
        f"\nCREATE TRIGGER bigmind_guard_roles BEFORE INSERT OR UPDATE ON {table}"
        " FOR EACH ROW EXECUTE FUNCTION bigmind_guard_roles();"
    )


def _knowledge_ddl(table: str) -> str:
    curator = "bigmind_role() IN ('curator', 'admin')"
    seen = f"(status = 'approved' OR promoted_by = {_ME} OR {curator} OR bigmind_maintenance())"
    return _guard(
        table,
        ("bigmind_read", f"FOR SELECT USING {seen}"),
        ("bigmind_insert", f"FOR INSERT WITH CHECK {_ACTING}"),  # status: guard_review
        ("bigmind_update", f"FOR UPDATE USING {seen} WITH CHECK {_ACTING}"),
        (
            "bigmind_delete",
            f"FOR DELETE USING (promoted_by = {_ME} OR {curator} OR bigmind_maintenance())",
        ),
    ) + (
        f"\nDROP TRIGGER IF EXISTS bigmind_guard_review ON {table};"
        f"\nCREATE TRIGGER bigmind_guard_review BEFORE INSERT OR UPDATE ON {table}"
        " FOR EACH ROW EXECUTE FUNCTION bigmind_guard_review();"
    )


def guard_all(tx: Tx) -> list[str]:
    """Row-level security on every BigMind table that exists (PostgreSQL). Returns the tables
    guarded; run again after a migration adds a table to the registry."""
    current = tx.execute("SELECT current_schema() AS s")[0]["s"]
    tx.script(_functions(current))
    done: list[str] = []
    wanted: list[tuple[str, str]] = [(t, owned_ddl(t)) for t in schema.names("owned")]
    wanted += [(t, _belonging_ddl(t)) for t in schema.names("belonging")]
    wanted += [(t, shared_ddl(t)) for t in schema.names("shared")]
    wanted += [(t, directory_ddl(t)) for t in schema.names("directory")]
    wanted += [(t, _users_ddl(t)) for t in schema.names("users")]
    wanted += [(t, _knowledge_ddl(t)) for t in schema.names("knowledge")]
    vectors = tx.execute(
        "SELECT tablename AS t FROM pg_tables WHERE schemaname = current_schema()"
        " AND tablename LIKE 'vec\\_%' ORDER BY tablename"
    )
    vector_like = (*schema.names("vectors"), *(r["t"] for r in vectors))
    wanted += [(t, vector_policy_ddl(t)) for t in vector_like]
    for table, ddl in wanted:
        if tx.table_exists(table):
            tx.script(ddl)
            done.append(table)
    return done


TAKEN = "SELECT bigmind_taken AS id FROM bigmind_taken(?, ?)"  # (table, [ids as text])


def unguarded(tx: Tx) -> list[str]:
    """Tables of this schema without row-level security that the registry does not leave out
    on purpose (doctor: a table a migration added without a policy)."""
    rows = tx.execute(
        "SELECT c.relname AS t FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relkind = 'r'"
        " AND NOT (c.relrowsecurity AND c.relforcerowsecurity) ORDER BY c.relname"
    )
    return [r["t"] for r in rows if r["t"] not in schema.names("unguarded")]
