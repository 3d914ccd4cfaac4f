"""Common English relative dates without dateparser: the grounded windows compared, and the cost.

Every text of several corpora is grounded twice at the time it was said
(``grounded_window(..., common_forms=True)``, the default, and ``common_forms=False``,
which sends every time word to dateparser as before) and the two windows compared.
Differences are counted by kind: dateparser found nothing where the rules read a date
(it loses plain expressions in some sentences: "I told Tom about it last week, he was
glad"), the rules found nothing where dateparser did, or both found different windows;
the first few of each are printed. Then it times the grounding of each corpus's
time-mentioning texts both ways (median and mean per text).

Corpora: generated phrases (each common form alone, in sentences, beside other time
words and numbers) said on days spread over 2022-2024 at a few hours; the latency and
throughput benches' turns and queries; the update bench's statements; with
``--locomo``, every LoCoMo turn at its session's time and every question at the
conversation's end.

    PYTHONPATH=. HF_HUB_OFFLINE=1 python benchmarks/time_words.py \
        [--locomo ../shared/data/locomo/locomo_dev.json]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from dreammem.dates.grounding import grounded_window
from dreammem.dates.parse import mentions_time
from dreammem_bench import latency, throughput
from dreammem_bench.updates import load_suite

Said = tuple[str, datetime]

_FORMS = [
    "yesterday", "today", "tonight", "tomorrow", "last night", "Yesterday", "LAST WEEK",
    *(f"{n} {u}{s} ago" for n in ("a", "an", "one", "two", "3", "five", "10", "ten")
      for u in ("day", "week", "month", "year") for s in ("", "s")),
    *(f"{r} {p}" for r in ("last", "this", "next") for p in ("week", "month", "year")),
    *(f"last {d}" for d in ("Monday", "tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "sunday")),
    "05 March 2024", "March 5, 2024", "31 December 2023", "1 Jan 2022", "30 February 2023",
]  # fmt: skip
_FRAMES = [
    "{}",
    "We went hiking {}.",
    "I bought a new bike {} and it was great",
    "since {} I have been sick",
    "until {}, nothing happened",
    "before {} we lived in Leeds",
    "after {} the shop closed",
    "{} was busy, and {} too",
    "Tom said {}: the kitchen is done. Order #82757 is on its way.",
    "It cost 500 dollars {}",
    "Lena ordered a bike for 48213 USD, order #12345, {}.",
    "I paid 1999 for it {}",
    "room 42 {}",
    "What did I do {}?",
    "when did Ana fix the bike {}?",
    "the trip {} in May",
    "{} morning we ran",
    "the day before {}",
    "{} at 5pm",
    "we met {}, {}, {}, {} and {} again",
    "我{}去了北京",
]


def _phrases() -> Iterator[Said]:
    start = datetime(2022, 1, 1, tzinfo=UTC)
    days = [start + timedelta(days=d) for d in range(0, 3 * 366, 1)]
    hours = (0, 9, 23)
    for n, (form, frame) in enumerate(itertools.product(_FORMS, _FRAMES)):
        text = frame.format(*([form] * frame.count("{}")))
        for day in days[n % 61 :: 61]:
            yield text, day.replace(hour=hours[n % 3], minute=(n * 7) % 60)


def _benches() -> Iterator[Said]:
    now = latency.START + timedelta(days=latency.SPAN_DAYS + 1)
    for turn in latency.synthetic_turns(3000, 5):
        yield turn["content"], turn["event_time"]
    for text in latency.synthetic_queries(400):
        yield text, now
    for text in throughput.synthetic_turns(3000):
        yield text, now


def _updates() -> Iterator[Said]:
    suite = load_suite()
    now = datetime(2026, 10, 1, 9, tzinfo=UTC)
    for case in suite.cases:
        for text in (case.first, case.second, case.question):
            yield text, now
    for _, text, _ in suite.unrelated:
        yield text, now


def _locomo(path: str) -> Iterator[Said]:
    from dreammem_bench.locomo import load_locomo  # noqa: PLC0415 - only with --locomo

    for conversation in load_locomo(path):
        for turn in conversation.turns:
            yield turn.text, turn.event_time
        for question in conversation.questions:
            yield question.question, conversation.reference_time


def _cost_ms(texts: list[Said], *, common: bool) -> tuple[float, float]:
    """Median and mean milliseconds per text."""
    samples = []
    for text, said in texts:
        start = time.perf_counter()
        grounded_window(text, said, common_forms=common)
        samples.append((time.perf_counter() - start) * 1000)
    return (statistics.median(samples), statistics.fmean(samples)) if samples else (0.0, 0.0)


def main() -> int:
    """Compare both ways on every corpus; print the differences by kind and the cost per text."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--locomo", help="a LoCoMo JSON file (its turns and questions join the corpora)")
    args = parser.parse_args()
    corpora = {"phrases": list(_phrases()), "benches": list(_benches()), "updates": list(_updates())}
    if args.locomo:
        corpora["locomo"] = list(_locomo(args.locomo))
    grounded_window("warm up yesterday in May", datetime(2023, 5, 1, tzinfo=UTC), common_forms=False)
    print(
        "corpus | texts | time-mentioning | same | dateparser none, rules a date | rules none | "
        "different windows | dateparser skipped | ms/text before (median, mean) | after"
    )
    for name, texts in corpora.items():
        dated = [(t, s) for t, s in texts if mentions_time(t)]
        kinds: Counter[str] = Counter()
        for text, said in dated:
            fast = grounded_window(text, said)
            slow = grounded_window(text, said, common_forms=False)
            kind = (
                "same"
                if fast == slow
                else "old none"
                if slow is None
                else "new none"
                if fast is None
                else "differ"
            )
            kinds[kind] += 1
            if kind != "same" and kinds[kind] <= 3:
                print(
                    f"  {kind} ({name}): {text[:160]!r} said {said.isoformat()}: "
                    f"rules {fast}, dateparser {slow}"
                )
        skipped = sum(_skips_dateparser(text, said) for text, said in dated)
        before = _cost_ms(dated[:600], common=False)
        after = _cost_ms(dated[:600], common=True)
        counts = " | ".join(str(kinds[k]) for k in ("same", "old none", "new none", "differ"))
        costs = f"{before[0]:.3f}, {before[1]:.3f} | {after[0]:.3f}, {after[1]:.3f}"
        print(f"{name} | {len(texts)} | {len(dated)} | {counts} | {skipped} | {costs}")
    return 0


def _skips_dateparser(text: str, said: datetime) -> int:
    """1 when the common forms answer for this text (dateparser is not asked)."""
    import dreammem.dates.parse as timeparse  # noqa: PLC0415 - count the calls, nothing else

    calls = []
    original = timeparse.dateparser_windows

    def counting(*args: object, **kwargs: object) -> Iterator[object]:
        calls.append(1)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    timeparse.dateparser_windows = counting  # type: ignore[assignment]
    try:
        grounded_window(text, said)
    finally:
        timeparse.dateparser_windows = original
    return 0 if calls else 1


if __name__ == "__main__":
    sys.exit(main())
