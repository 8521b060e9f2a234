"""The curation development set's labels, as written (build_pairs.py resolves them to texts).

Each pair names its two memories by (version, fragment): the one changelog entry of that release
whose cleaned text contains the fragment. kind: replaces | conflicts | duplicates | compatible |
unrelated; current: which side answers the question today ("newer", "older" or "both").
Labelled by hand from the two texts (and, where the text is not enough, the pinned sources).
"""

from __future__ import annotations

from typing import Any

import pairs_flask
import pairs_pip_other
import pairs_pip_updates
import pairs_pytest

# One module a project (pip's in two): in this order, which is the order of pairs.json.
PAIRS: list[dict[str, Any]] = [
    *pairs_pip_updates.PAIRS,
    *pairs_pip_other.PAIRS,
    *pairs_pytest.PAIRS,
    *pairs_flask.PAIRS,
]
