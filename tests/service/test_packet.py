"""bigmind/service/packet.py: the bootstrap packet, with a focus ranked by the runtime's recall
or a ranker given (both backends)."""

from __future__ import annotations

from bigmind.runtime import Runtime
from bigmind.service import embedding, packet


def test_the_packet_puts_what_the_focus_names_first(runtime: Runtime) -> None:
    runtime.store.store_fact("codebase", "The payments service uses Kafka", importance=3)
    runtime.store.store_fact("preference", "The user prefers pytest", importance=6)
    plain = packet.build(runtime)
    assert plain.text.startswith("## 🧠 BigMind Context") and plain.tokens <= plain.budget
    assert plain.text.index("pytest") < plain.text.index("Kafka")  # importance first
    focused = packet.build(runtime, "kafka payments")
    assert focused.text.index("Kafka") < focused.text.index("pytest")
    ranker = embedding.load(runtime).ranker  # a command's own: keyword-only without a model
    assert packet.build(runtime, "kafka payments", ranker=ranker).text == focused.text
