"""partita-build.json: what a run's manifest records of the build."""

import re
from pathlib import Path


def test_build_names_the_libfabric_it_loads(build):
    raw = build.raw
    if not build.fabric_transport:
        assert raw["libfabric"] == "" and raw["libfabric_version"] == ""
        return
    assert Path(raw["libfabric"]).is_file(), raw["libfabric"]
    assert re.fullmatch(r"[12]\.\d+", raw["libfabric_version"]), raw["libfabric_version"]
