"""Ending everything a command started when the command ends.

A command can leave work running past its end in many ways: ``cmd &``, ``nohup``, a double
fork, ``setsid`` (which leaves the command's session and process group, so killing the group
misses it). Orphans are all adopted by the container's first process, so ancestry does not
tell them apart either. What does: each command runs under a **group ID of its own**, drawn
for it (``docker exec --user 65534:<gid>``). Every process it starts inherits that group, and
nothing inside can change it: changing a group needs ``CAP_SETGID``, and the container has no
capabilities and no new privileges (no setgid binary helps). So "every process whose real
group is G" is exactly "everything command G started", whatever it did to hide.

The sweep runs in the same exec, right after the command: the wrapper shell waits for the
command, then kills (``SIGKILL``) every live process of its group but itself, scanning
``/proc`` until none is left (a process forking during the scan is caught by the next pass).
Running inside, it costs no extra round trip and still happens if the worker dies mid-command.
The command could kill its wrapper, being the same user; the provider then sweeps the group
from outside with a second exec (:func:`sweep_argv`), which a command cannot stop.

Concurrent commands of one agent draw distinct groups, so one's sweep never touches another's
work; the keep-alive process runs under the sandbox user's own group, which no command gets.
Files a command creates carry its group, which changes nothing: every command runs as the same
user, who owns them all.
"""

from __future__ import annotations

import random
import threading

COMMAND_GROUPS = range(1000, 65534)
"""Group IDs drawn for commands: below 65534 (the sandbox user's own) and within the 65536 IDs
an engine with user-namespace remapping maps."""

_SWEEP = r"""
sweep() {
  while :; do
    left=
    for d in /proc/[0-9]*; do
      pid=${d#/proc/}
      [ "$pid" = "$$" ] && continue
      state= gid=
      while read -r key value rest; do
        case $key in
          State:) state=$value ;;
          Gid:) gid=$value; break ;;
        esac
      done < "$d/status"
      if [ "$gid" = "$1" ] && [ "$state" != Z ]; then kill -9 "$pid"; left=1; fi
    done 2>/dev/null
    [ -z "$left" ] && return
  done
}
"""
"""Kill every live process whose real group is ``$1`` but this shell, until none is left.

Builtins only (``read``, ``kill``, globbing): the sweep forks nothing that it would then find.
Zombies are skipped, as SIGKILL cannot end them (their parent reaps them)."""


def command_argv(command: str, group: int, *, limit_seconds: int | None) -> list[str]:
    """The exec's argv: ``command`` under ``sh -c`` (within ``limit_seconds``), then the sweep.

    The exec's exit code is the command's (``timeout``'s, when limited).
    """
    limit = f"timeout -s KILL {limit_seconds} " if limit_seconds is not None else ""
    script = f'{_SWEEP}\n{limit}sh -c "$2"\nstatus=$?\nsweep "$1"\nexit $status\n'
    return ["sh", "-c", script, "sh", str(group), command]


def sweep_argv(group: int) -> list[str]:
    """An exec that ends every process of ``group`` (after its wrapper was killed)."""
    return ["sh", "-c", f'{_SWEEP}\nsweep "$1"\n', "sh", str(group)]


class CommandGroups:
    """Draws a group ID for each command, none shared by two commands running at once.

    Thread-safe: the provider's commands run on threads. Two workers drawing for one agent at
    once share a group only by chance (one in about 64,000).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken: set[int] = set()

    def take(self) -> int:
        """A group no command of this provider holds now."""
        with self._lock:
            while True:
                group = random.choice(COMMAND_GROUPS)
                if group not in self._taken:
                    self._taken.add(group)
                    return group

    def give_back(self, group: int) -> None:
        """``group``'s command and its sweep are over."""
        with self._lock:
            self._taken.discard(group)
