"""``python -m icmlgym.cli``."""

from icmlgym.cli import main

main()
