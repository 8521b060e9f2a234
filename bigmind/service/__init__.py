"""Use cases: what one request does, written once for every surface (the MCP tools, the REST
API, the pages, the gateway, the CLI), with its bookkeeping (the background embedder woken,
uses counted, notices told). Surfaces parse arguments, call one function here, and render what
it returns; they enter by the modules named in ``__all__`` (tests/test_architecture.py), and
import nothing from memory, search or storage (lint-imports). Nothing is imported here, so a
light command loads only the module it uses."""

__all__ = [
    "accounts",  # users, roles, API tokens; the gateway's bearer tokens checked
    "checkup",  # bigmind doctor's checks of the install
    "colleagues",  # people, and the MegaMind directory
    "companykb",  # company knowledge (Tier G)
    "consolidation",  # a full consolidation pass
    "display",  # the renderers the features own: quoted text, rivals, warnings
    "embedding",  # the model fetched, exported, loaded; reindex
    "facts",  # a fact stored, replaced, changed, corrected, deprecated, restored
    "forgetting",  # forget and purge
    "housekeeping",  # stats, health, vacuum, the states health checks read
    "journaling",  # hypotheses, attempts, reminders
    "operations",  # backup, recover, migrate-db, grants, scan-secrets
    "packet",  # the bootstrap packet
    "pages",  # the profile pages' data
    "portability",  # JSON export and import, import-md, the Markdown mirror
    "recall",  # recall for an agent, a page or a person
    "sessionlife",  # sessions started, ended, listed; focus, savings, diffs
]
