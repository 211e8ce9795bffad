"""``python -m systemtests.soak``: the soak, as :mod:`systemtests.soak.report` says."""

from systemtests.soak.report import main

main()
