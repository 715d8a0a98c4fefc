"""`partita loggp`: a short real measurement, the standard place, bad input."""

from __future__ import annotations

import json

from model_helpers import build_info, run_cli
from partita.model import Params, library


def test_loggp_measures_and_saves_to_the_standard_place(tmp_path):
    r = run_cli("loggp", "-m", "1:1K", "-i", "3", "--passes", "1", env={"XDG_CONFIG_HOME": str(tmp_path),
                                                                          "PARTITA_LOGGP": ""})
    assert r.returncode == 0, r.stderr
    saved = tmp_path / "partita" / "loggp.json"
    assert f"saved {saved}" in r.stdout
    doc = json.loads(saved.read_text())
    assert doc["schema"] == "partita.loggp/1"
    assert [s["bytes"] for s in doc["sizes"]][:3] == [1, 2, 4]
    p = Params.load(saved, library(build_info().lib_dir))
    assert p.segments and all(s.G >= 0 and s.L >= 0 for s in p.segments)
    # `partita model` picks the saved file up by default
    r = run_cli("model", "-m", "1K:2K", "-p", "2", env={"XDG_CONFIG_HOME": str(tmp_path), "PARTITA_LOGGP": ""})
    assert r.returncode == 0 and f"LogGP parameters: {saved}" in r.stdout


def test_loggp_output_option_and_no_save(tmp_path):
    out = tmp_path / "x" / "params.json"
    r = run_cli("loggp", "-m", "1:2", "-i", "3", "--passes", "1", "--quiet", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert Params.load(out, library(build_info().lib_dir)).segments
    r = run_cli("loggp", "-m", "1:2", "-i", "3", "--passes", "1", "--no-save",
                env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert r.returncode == 0 and not (tmp_path / "none").exists()


def test_loggp_bad_input(tmp_path):
    r = run_cli("loggp", "-m", "3:5", "-i", "3", "--no-save")
    assert r.returncode == 2 and "partita loggp: error:" in r.stderr and "powers of two" in r.stderr
    r = run_cli("loggp", "-i", "0")
    assert r.returncode == 2 and "--iterations" in r.stderr
    r = run_cli("loggp", "-m", "1:2", "-o", str(tmp_path))
    assert r.returncode == 2 and "is a directory" in r.stderr
    r = run_cli("loggp", "--quantile", "1.5", "--no-save")
    assert r.returncode == 2 and "--quantile" in r.stderr
    r = run_cli("loggp", "--api", "rdma", "--no-save")
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_loggp_fabric_transport_saves_its_own_file(tmp_path):
    """--transport fabric measures writes with remote CQ data and saves loggp-fabric.json (the planner's
    parameters for fabric requests), leaving the MPI file alone; a build without it says so."""
    env = {"XDG_CONFIG_HOME": str(tmp_path), "PARTITA_LOGGP": "", "PARTITA_LOGGP_FABRIC": "",
           "PARTITA_FABRIC_PROVIDER": "shm"}
    r = run_cli("loggp", "--transport", "fabric", "-m", "1:1K", "-i", "3", "--passes", "1", env=env)
    if not build_info().fabric_transport:
        assert r.returncode == 2 and "no fabric transport" in r.stderr
        return
    assert r.returncode == 0, r.stderr
    saved = tmp_path / "partita" / "loggp-fabric.json"
    assert f"saved {saved}" in r.stdout and "libfabric provider shm" in r.stdout
    doc = json.loads(saved.read_text())
    assert doc["measurement"]["transport"] == "fabric" and doc["measurement"]["provider"] == "shm"
    assert Params.load(saved, library(build_info().lib_dir)).segments
    assert not (tmp_path / "partita" / "loggp.json").exists()
