"""The CLI root: one line for a user's mistake, exit statuses pass through."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from hfcprov import cli as cli_package
from hfcprov.cli import root as cli_root
from hfcprov.errors import HfcprovError


def run(*args):
    return subprocess.run([sys.executable, "-m", "hfcprov", *args], capture_output=True, text=True)


def test_help_lists_every_domain():
    out = run("--help").stdout
    for name in ("config", "build", "buffer", "tftp", "snmp", "sim", "emu", "probe", "campaign"):
        assert f"  {name} " in out


def test_user_error_is_one_line_without_traceback(tmp_path):
    res = run("config", "decode", str(tmp_path / "missing.cm"))
    assert res.returncode != 0
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.fixture
def extra_command(monkeypatch):
    @click.command()
    @click.option("--status", type=int, default=0)
    @click.option("--fail", is_flag=True)
    def probe_exit(status, fail):
        if fail:
            raise HfcprovError("modem 10.0.0.1: timeout")
        return status

    monkeypatch.setitem(cli_root.COMMANDS, "probe-exit", ("tests.cli.test_root:_unused", ""))
    monkeypatch.setattr(cli_root.LazyGroup, "get_command",
                        lambda self, ctx, name: probe_exit if name == "probe-exit" else None)


@pytest.mark.parametrize("status", [0, 2, 3])
def test_command_return_value_is_the_exit_status(extra_command, status):
    with pytest.raises(SystemExit) as exc:
        cli_package.main(["probe-exit", "--status", str(status)])
    assert exc.value.code == status


def test_library_error_exits_1_with_message(extra_command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli_package.main(["probe-exit", "--fail"])
    assert exc.value.code == 1
    assert capsys.readouterr().err.strip() == "hfcprov: error: modem 10.0.0.1: timeout"


def test_help_documents_the_exit_statuses_and_global_options():
    out = run("--help").stdout
    assert "Exit status:" in out
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "130 "):
        assert f"\n    {code}" in out
    assert "-q, --quiet" in out and "-v, --verbose" in out


def test_shell_completion_lists_the_lazy_commands():
    import os

    env = dict(os.environ, COMP_WORDS="hfcprov campaign st", COMP_CWORD="2", _HFCPROV_COMPLETE="bash_complete")
    r = subprocess.run([sys.executable, "-m", "hfcprov"], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["plain,status"]
    env.update(_HFCPROV_COMPLETE="bash_source")
    r = subprocess.run([sys.executable, "-m", "hfcprov"], env=env, capture_output=True, text=True)
    assert "_hfcprov_completion()" in r.stdout
