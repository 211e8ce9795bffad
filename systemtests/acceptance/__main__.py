"""``python -m systemtests.acceptance``: the week, as :mod:`systemtests.acceptance.run` says."""

from systemtests.acceptance.run import main

main()
