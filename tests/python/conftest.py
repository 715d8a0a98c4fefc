"""Shared fixtures: the build under test (make test sets PARTITA_BUILD)."""

import pytest

from partita.launch import BuildInfo


@pytest.fixture(scope="session")
def build() -> BuildInfo:
    return BuildInfo.find()
