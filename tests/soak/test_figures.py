"""The soak's figures around each fault (``systemtests/soak/report.py``), from a report made
by hand."""

from __future__ import annotations

from schemas.events import ChannelRef, InboundEvent, Speaker
from schemas.ids import new_ulid
from systemtests.soak.checks import Samples
from systemtests.soak.load import Sent
from systemtests.soak.report import fault_figures, render
from systemtests.soak.run import Fault, SoakConfig, SoakReport
from systemtests.soak.stack import FaultKind

BEGAN = 1000.0


def _probe(submitted: float, latency: float) -> Sent:
    event = InboundEvent(
        event_id=new_ulid(),
        text="probe",
        speaker=Speaker(speaker_id="probe"),
        channel=ChannelRef(service="terminal", channel="tty"),
    )
    return Sent(
        agent="soak-probe", event=event, submitted=submitted, done=submitted + latency, probe=True
    )


def test_each_fault_shows_how_busy_the_machine_was_before_it() -> None:
    fault = Fault(kind=FaultKind.WORKER, at=BEGAN + 200.0, pid=1)
    report = SoakReport(
        config=SoakConfig(),
        duration_s=300.0,
        # One second each before the fault; the first after it is slow, the second normal.
        sent=[
            *(_probe(BEGAN + t, 1.0) for t in range(150, 200, 5)),
            _probe(BEGAN + 201.0, 9.0),
            _probe(BEGAN + 212.0, 1.0),
        ],
        faults=[fault],
        violations=[],
        # Busy % since the previous sample, seconds into the run: the first covers nothing,
        # and only those of the minute before the fault count.
        samples=Samples(
            cpu=[
                (20.0, 5.0),
                (120.0, 10.0),
                (150.0, 70.0),
                (170.0, 90.0),
                (190.0, 80.0),
                (220.0, 20.0),
            ]
        ),
        began=BEGAN,
    )
    (figures,) = fault_figures(report)
    assert figures.cpu_before == 80.0
    assert figures.recovery_s == 13.0  # the first answer at normal latency, from the kill
    assert "| worker | 50 | 80% |" in render(report)
