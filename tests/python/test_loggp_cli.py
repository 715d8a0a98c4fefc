"""`partita loggp`: a short real measurement, the standard place, bad input."""

from __future__ import annotations

import json

import pytest

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
    out = tmp_path / "params.json"
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


@pytest.fixture
def measurements(monkeypatch):
    """partita loggp in-process with its measurement replaced: every call is recorded and none runs."""
    from partita.commands import loggp as loggp_command
    from partita.launch import LaunchError

    recorded = []

    def fake_measure(build, cmd, launcher=None):
        recorded.append(cmd)
        raise LaunchError("stopped by the test instead of measuring")

    monkeypatch.setattr(loggp_command, "measure", fake_measure)
    return recorded


def loggp_in_process(capsys, *args):
    from partita import cli

    rc = cli.main(["loggp", *args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("where", ["a-file/params.json", "a-file/deeper/params.json"])
def test_loggp_output_whose_folder_cannot_be_made_is_refused_before_measuring(tmp_path, measurements, capsys, where):
    """A file where the folder of --output should be was only found when the parameters were saved,
    after the whole measurement (minutes at the default sizes)."""
    (tmp_path / "a-file").write_text("")
    target = tmp_path / where
    rc, out, err = loggp_in_process(capsys, "-m", "1:2", "-o", str(target))
    assert rc == 2 and measurements == [] and out == "", (out, err)
    assert err == f"partita loggp: error: --output {target}: {tmp_path / 'a-file'} is not a folder\n", err


def test_loggp_standard_place_that_cannot_be_made_is_refused_before_measuring(tmp_path, measurements, capsys,
                                                                               monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "a-file"))
    monkeypatch.setenv("PARTITA_LOGGP", "")
    rc, out, err = loggp_in_process(capsys, "-m", "1:2")
    target = tmp_path / "a-file" / "partita" / "loggp.json"
    assert rc == 2 and measurements == [] and out == "", (out, err)
    assert err == f"partita loggp: error: cannot save to {target}: {tmp_path / 'a-file'} is not a folder\n", err


def test_loggp_no_save_with_output_is_refused_before_measuring(tmp_path, measurements, capsys):
    """--no-save beside --output saved all the same, after the measurement."""
    target = tmp_path / "params.json"
    rc, out, err = loggp_in_process(capsys, "-m", "1:2", "--no-save", "-o", str(target))
    assert rc == 2 and measurements == [] and out == "", (out, err)
    assert err == (f"partita loggp: error: --no-save and --output {target} exclude each other: --output saves "
                   "there\n"), err


def test_loggp_output_in_a_folder_that_does_not_exist_is_refused_before_measuring(tmp_path, measurements, capsys):
    # the folder of a file named by -o is never made, as in every command (a mistyped one was made
    # silently); the standard place's folder is
    target = tmp_path / "new" / "deeper" / "params.json"
    rc, out, err = loggp_in_process(capsys, "-m", "1:2", "-o", str(target))
    assert rc == 2 and measurements == [] and out == "", (out, err)
    assert err == f"partita loggp: error: --output {target}: the folder {target.parent} does not exist\n", err
    assert not (tmp_path / "new").exists()
