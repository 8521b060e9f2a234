"""The token estimator that enforces every context budget."""

from __future__ import annotations

from bigmind.tokencount import count_tokens, truncate_to_tokens


def test_documented_examples() -> None:
    assert count_tokens("memory_start_session()") == 10
    assert count_tokens("🧠 BigMind") == 4


def test_whitespace_is_free_and_counts_add_up_over_lines() -> None:
    a, b = "- [preference] Prefers pytest", "| 2026-11-21 | Built core | db |"
    assert count_tokens(a + "\n" + b) == count_tokens(a) + count_tokens(b)
    assert count_tokens("   \n\t ") == 0


def test_errs_high_compared_with_bpe_rules_of_thumb() -> None:
    prose = "The quick brown fox jumps over the lazy dog. " * 20
    # cl100k gives 10 tokens per sentence here (200 total); the estimator must not undercount.
    assert count_tokens(prose) >= 200
    assert count_tokens("日本語") >= 3  # each CJK character is at least one BPE token


def test_truncate_stays_within_budget_and_marks_the_cut() -> None:
    text = "word " * 500
    cut = truncate_to_tokens(text, 50)
    assert count_tokens(cut) <= 50
    assert cut.endswith("…")
    assert truncate_to_tokens("short", 50) == "short"
