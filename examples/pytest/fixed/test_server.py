import sys

import pytest


@pytest.mark.mcpchaos(command=[sys.executable, "server.py"])
def test_server_survives_faults(mcpchaos_report):
    """mcpchaos runs server.py through its fault matrix; an error finding fails this test."""
