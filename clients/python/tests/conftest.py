"""Starts an rlsolver server before collection (dimod's generated tests build their samplers
then): the binary at `RLSOLVER_BIN`, else the repository's `target/release/rlsolver`, on a free
port with a fresh data folder and the shipped models, with `RLSOLVER_URL` pointing at it. With
`RLSOLVER_URL` already set, the tests use that server instead."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
_started: dict = {}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pytest_configure(config):
    if os.environ.get("RLSOLVER_URL"):
        return
    binary = Path(os.environ.get("RLSOLVER_BIN") or ROOT / "target/release/rlsolver")
    if not binary.exists():
        raise pytest.UsageError(f"no server binary at {binary}: build it (cargo build --release) or set RLSOLVER_BIN")
    data = Path(tempfile.mkdtemp(prefix="rlsolver-pytest-"))
    port = _free_port()
    log = open(data / "server.log", "wb")
    command = [str(binary), "serve", "--port", str(port), "--data-dir", str(data), "--models-dir", str(ROOT / "models")]
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"the server did not start: {(data / 'server.log').read_text()[-2000:]}")
        time.sleep(0.2)
    os.environ["RLSOLVER_URL"] = url
    _started.update(process=process, log=log, data=data)


def pytest_unconfigure(config):
    process = _started.pop("process", None)
    if process is None:
        return
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    _started.pop("log").close()
    os.environ.pop("RLSOLVER_URL", None)


@pytest.fixture(scope="session")
def server():
    return os.environ["RLSOLVER_URL"]


@pytest.fixture
def client(server):
    from rlsolver import Client

    with Client(server) as c:
        yield c
