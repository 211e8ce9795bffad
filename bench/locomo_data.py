"""LoCoMo questions, evidence cleaning, recall metrics and the README's BM25 reference.

Shared by ``locomo_recall.py``; the data set itself is never stored in the project (license).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
RECALL_AT = (5, 10, 20)
SESSION_AT = (1, 3, 5)
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


@dataclass
class Question:
    sample: str
    text: str
    category: int
    evidence: list[str]


@dataclass
class Turn:
    sample: str
    session: int
    dia_id: str
    speaker: str
    text: str
    at: datetime


def clean_evidence(raw: Iterable[object], valid: set[str]) -> list[str]:
    """Split "D8:6; D9:17" and space-separated lists, fix "D:11:26" and "D30:05", drop unknowns."""
    found: list[str] = []
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            match = _EVIDENCE.fullmatch(part.strip())
            if match:
                dia = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia in valid and dia not in found:
                    found.append(dia)
    return found


def load(path: Path) -> tuple[list[Turn], list[Question]]:
    """Every turn and every question that keeps evidence after cleaning."""
    turns: list[Turn] = []
    questions: list[Question] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv, sid = sample["conversation"], sample["sample_id"]
        valid: set[str] = set()
        n = 1
        while f"session_{n}" in conv:
            at = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y")
            for t in conv[f"session_{n}"]:
                caption = t.get("blip_caption")
                text = f"{t['text']} [image: {caption}]" if caption else t["text"]
                turns.append(Turn(sid, n, t["dia_id"], t["speaker"], text, at.replace(tzinfo=UTC)))
                valid.add(t["dia_id"])
            n += 1
        for qa in sample["qa"]:
            evidence = clean_evidence(qa.get("evidence", []), valid)
            if evidence:
                questions.append(Question(sid, qa["question"], int(qa["category"]), evidence))
    return turns, questions


@dataclass
class Scores:
    """Per-category lists of per-question metric values."""

    values: dict[int, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )

    def add(self, q: Question, ranked: Sequence[str]) -> None:
        """Score one question from its ranked dia_ids (best first)."""
        evidence = set(q.evidence)
        for k in RECALL_AT:
            found = len(evidence & set(ranked[:k]))
            self.values[q.category][f"R@{k}"].append(found / len(evidence))
        sessions: list[str] = []
        for dia in ranked:
            s = dia.split(":")[0]
            if s not in sessions:
                sessions.append(s)
        wanted = {e.split(":")[0] for e in evidence}
        for k in SESSION_AT:
            self.values[q.category][f"S@{k}"].append(float(bool(wanted & set(sessions[:k]))))

    def mean(self, categories: Iterable[int], metric: str) -> float:
        pool = [v for c in categories for v in self.values[c][metric]]
        return sum(pool) / len(pool) if pool else float("nan")

    def count(self, categories: Iterable[int]) -> int:
        return sum(len(self.values[c]["R@5"]) for c in categories)


STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me
    more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom
    why will with you your yours yourself yourselves
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def indexed_text(t: Turn) -> str:
    """The README's indexed form of a turn."""
    return f'({t.at.day} {t.at:%B %Y}) {t.speaker} said, "{t.text}"'


def _tokens(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS]


def bm25_reference(turns: list[Turn], questions: list[Question]) -> Scores:
    """The README's BM25 (k1 1.5, b .75, lowercase alphanumeric tokens, no stop words)."""
    scores = Scores()
    by_sample: dict[str, list[Turn]] = defaultdict(list)
    for t in turns:
        by_sample[t.sample].append(t)
    index = {}
    for sample, docs in by_sample.items():
        tfs = [Counter(_tokens(indexed_text(t))) for t in docs]
        df = Counter(w for tf in tfs for w in tf)
        avg = sum(sum(tf.values()) for tf in tfs) / len(tfs)
        index[sample] = (docs, tfs, df, avg)
    for q in questions:
        docs, tfs, df, avg = index[q.sample]
        n = len(docs)
        ranked = []
        for t, tf in zip(docs, tfs, strict=True):
            length = sum(tf.values())
            s = 0.0
            for w in set(_tokens(q.text)):
                if w in tf:
                    idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                    s += idf * tf[w] * 2.5 / (tf[w] + 1.5 * (0.25 + 0.75 * length / avg))
            ranked.append((s, t.dia_id))
        ranked.sort(key=lambda x: -x[0])
        scores.add(q, [d for _, d in ranked])
    return scores
