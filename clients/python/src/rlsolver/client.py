"""`Client`: the REST API over httpx, with the server's error answers as typed exceptions and
retries on 429/503 that wait as `Retry-After` says."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

import httpx

from .errors import Busy, RLSolverError
from .events import Event, parse

DEFAULT_URL = "http://127.0.0.1:8080"
FINISHED = ("succeeded", "failed", "cancelled")


class Client:
    """A connection to one rlsolver server.

    `url` and `api_key` default to `RLSOLVER_URL` and `RLSOLVER_API_KEY` (no key: an open
    server). `timeout` is seconds per request (solves wait up to it); a 429 or 503 is retried up
    to `retries` times, each after the answer's `Retry-After` seconds (at most `max_wait`).
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 330.0,
        retries: int = 5,
        max_wait: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self.url = (url or os.environ.get("RLSOLVER_URL") or DEFAULT_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("RLSOLVER_API_KEY")
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self.retries, self.max_wait = retries, max_wait
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The one request path: retries, then errors as exceptions.
    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Sends a request; returns a 2xx response or raises the answer's `RLSolverError`."""
        for attempt in range(self.retries + 1):
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as error:
                raise RLSolverError(0, "Unreachable", f"{self.url}: {error}") from error
            if response.status_code in (429, 503) and attempt < self.retries:
                time.sleep(self._wait(response, attempt))
                continue
            if response.is_success:
                return response
            raise _error(response)
        raise Busy(503, "Service Unavailable", "retries exhausted")

    def _wait(self, response: httpx.Response, attempt: int) -> float:
        try:
            seconds = float(response.headers.get("retry-after", ""))
        except ValueError:
            seconds = 2.0**attempt
        return min(max(seconds, 0.0), self.max_wait)

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.request(method, path, **kwargs).json()

    # Problems and solves.
    def health(self) -> dict:
        return self._json("GET", "/health")

    def problems(self) -> list[dict]:
        """Every registered problem with its instance and option schemas."""
        return self._json("GET", "/v1/problems")

    def solve(self, problem: str, instance: Any = None, *, text: str | None = None, **options: Any) -> dict:
        """Solves an instance (JSON `instance`, or the problem's native `text`) and returns the
        report: `objective`, `solution`, `status`, `bound`/`gap` where proven, `history`.
        `options` are the solve options (`time_limit_s`, `seed`, `chains`, `max_rounds`,
        `method`, `model`, `target`, ...)."""
        options = {k: v for k, v in options.items() if v is not None}
        if text is not None:
            return self._json(
                "POST",
                f"/v1/problems/{problem}/solve",
                content=text.encode(),
                params=options,
                headers={"content-type": "text/plain"},
            )
        return self._json("POST", f"/v1/problems/{problem}/solve", json={"instance": instance, "options": options})

    def submit(self, problem: str, instance: Any = None, *, text: str | None = None, **options: Any) -> "SolveJob":
        """Queues a solve in the background; the job streams its incumbents."""
        body: dict[str, Any] = {"problem": problem, "options": {k: v for k, v in options.items() if v is not None}}
        if text is not None:
            body["instance_text"] = text
        else:
            body["instance"] = instance
        return SolveJob(self, self._json("POST", "/v1/solve/jobs", json=body))

    def solve_job(self, job_id: str) -> "SolveJob":
        return SolveJob(self, self._json("GET", f"/v1/solve/jobs/{job_id}"))

    # Training, populations, models.
    def train(
        self,
        algorithm: str,
        env: str,
        total_steps: int,
        *,
        seed: int = 0,
        hyperparameters: Mapping[str, Any] | None = None,
        env_config: Mapping[str, Any] | None = None,
        eval_every: int | None = None,
        eval_episodes: int | None = None,
        target_return: float | None = None,
    ) -> "TrainingJob":
        """Queues a training job (`GET /v1/algorithms` and `/v1/envs` list the choices; an env
        may be `gymnasium:<id>`)."""
        body: dict[str, Any] = {"algorithm": algorithm, "env": env, "total_steps": total_steps, "seed": seed}
        extra = {
            "hyperparameters": hyperparameters,
            "env_config": env_config,
            "eval_every": eval_every,
            "eval_episodes": eval_episodes,
            "target_return": target_return,
        }
        body.update({k: v for k, v in extra.items() if v is not None})
        return TrainingJob(self, self._json("POST", "/v1/training/jobs", json=body))

    def training_job(self, job_id: str) -> "TrainingJob":
        return TrainingJob(self, self._json("GET", f"/v1/training/jobs/{job_id}"))

    def population(self, **request: Any) -> "Population":
        """Starts a population (PBT, tournament or ensemble; the fields of `POST /v1/populations`)."""
        return Population(self, self._json("POST", "/v1/populations", json=request))

    def algorithms(self) -> list[dict]:
        return self._json("GET", "/v1/algorithms")

    def envs(self) -> list[dict]:
        return self._json("GET", "/v1/envs")

    def models(self) -> list[dict]:
        """Every model this key sees (shipped and promoted)."""
        return self._json("GET", "/v1/models")["models"]

    def model(self, name: str) -> dict:
        return self._json("GET", f"/v1/models/{name}")

    def promote(self, job_id: str, name: str) -> dict:
        """Promotes a finished training job's policy into the registry as `name`; its manifest."""
        return self._json("POST", "/v1/models", json={"job_id": job_id, "name": name})

    def predict(self, model: str, observations: Any) -> list[list[float]]:
        """A promoted deep-RL policy's deterministic actions for a batch of observations (rows as
        wide as its env's observations; a single row is a batch of one)."""
        rows = [list(map(float, row)) for row in _rows(observations)]
        return self._json("POST", f"/v1/models/{model}/actions", json={"observations": rows})["actions"]

    def events(self, path: str) -> Iterator[Event]:
        """The server-sent events at `path` until the server ends the stream."""
        for attempt in range(self.retries + 1):
            with self._http.stream("GET", path, timeout=httpx.Timeout(30.0, read=None)) as response:
                if response.status_code in (429, 503) and attempt < self.retries:
                    response.read()
                    time.sleep(self._wait(response, attempt))
                    continue
                if not response.is_success:
                    response.read()
                    raise _error(response)
                yield from parse(response.iter_lines())
                return


def _rows(observations: Any) -> list:
    rows = observations.tolist() if hasattr(observations, "tolist") else list(observations)
    # A single observation (a row of numbers) is a batch of one.
    return [rows] if rows and not hasattr(rows[0], "__len__") else rows


def _error(response: httpx.Response) -> RLSolverError:
    try:
        body = response.json()
    except ValueError:
        body = None
    return RLSolverError.from_problem(response.status_code, body, response.text[:500])


class _Job:
    """A background job of the server: its row (`info`) refreshed on demand."""

    base = ""

    def __init__(self, client: Client, info: dict):
        self.client, self.info = client, info
        self.id: str = info["id"]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r}, state={self.state!r})"

    @property
    def state(self) -> str:
        return self.info["state"]

    def refresh(self) -> dict:
        self.info = self.client._json("GET", f"{self.base}/{self.id}")
        return self.info

    def events(self) -> Iterator[Event]:
        """The job's events: `state` first, then progress until it ends (`state` each change);
        the row is kept current from the `state` events."""
        for event in self.client.events(f"{self.base}/{self.id}/events"):
            if event.event == "state" and isinstance(event.data, dict) and "state" in event.data:
                self.info = {**self.info, **event.data}
            yield event

    def wait(self, timeout: float | None = None, poll: float = 0.5) -> dict:
        """Polls until the job has ended; its final row. `TimeoutError` after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.refresh()["state"] not in FINISHED:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"{self!r} still {self.state} after {timeout} s")
            time.sleep(poll)
        return self.info

    def cancel(self) -> dict:
        self.client.request("DELETE", f"{self.base}/{self.id}")
        return self.refresh()


class SolveJob(_Job):
    """A background solve: `incumbent` events, then the report as `result()`."""

    base = "/v1/solve/jobs"

    def incumbents(self) -> list[dict]:
        """Every incumbent so far: `{elapsed_ms, objective}` in order."""
        return self.client._json("GET", f"{self.base}/{self.id}/incumbents")

    def result(self, timeout: float | None = None) -> dict:
        """The solve's report once the job has ended (raises when it failed)."""
        info = self.wait(timeout)
        if info["state"] == "failed" or info.get("result") is None:
            raise RLSolverError(0, "Job failed", str(info.get("error") or info["state"]))
        return info["result"]


class TrainingJob(_Job):
    """A training job: `progress` and `evaluation` events (the learning curve), artifacts, and
    its policy once it has ended."""

    base = "/v1/training/jobs"

    def metrics(self) -> list[dict]:
        """The evaluation curve: one object per evaluation."""
        return self.client._json("GET", f"{self.base}/{self.id}/metrics")

    @property
    def artifacts(self) -> list[str]:
        return self.refresh().get("artifacts", [])

    def download(self, name: str, path: str | os.PathLike) -> Path:
        """Writes the artifact `name` (weights, config.json, metrics.jsonl, ...) to `path`."""
        target = Path(path)
        target.write_bytes(self.client.request("GET", f"{self.base}/{self.id}/artifacts/{name}").content)
        return target

    def policy(self, name: str | None = None, directory: str | os.PathLike | None = None) -> "Policy":
        """The final policy: promoted into the server's registry as `name` (default
        `<algorithm>-<job id>`) unless a model of that name exists, its files (weights,
        config.json, observation statistics) downloaded into `directory` when given."""
        info = self.wait()
        if info["state"] == "failed":
            raise RLSolverError(0, "Job failed", str(info.get("error")))
        name = name or f"{info['request']['algorithm']}-{self.id}"
        try:
            manifest = self.client.model(name)
        except RLSolverError as error:
            if error.status != 404:
                raise
            manifest = self.client.promote(self.id, name)
        if directory is not None:
            folder = Path(directory)
            folder.mkdir(parents=True, exist_ok=True)
            for artifact in info.get("artifacts", []):
                if artifact.endswith(".safetensors") or artifact in ("config.json", "observation_norm.json"):
                    self.download(artifact, folder / artifact)
        return Policy(self.client, manifest)


class Population(_Job):
    """A population of training runs (PBT, tournament or ensemble) with its leaderboard."""

    base = "/v1/populations"

    def events(self) -> Iterator[Event]:  # populations have no stream: state changes by polling
        last = None
        while True:
            info = self.refresh()
            if info["state"] != last:
                last = info["state"]
                yield Event("state", info)
            if last in FINISHED:
                return
            time.sleep(0.5)

    def promote(self, name: str, method: str = "leader", members: int | None = None) -> "Policy":
        """Promotes the leaderboard's best checkpoint (`leader`), the parameter average of the
        best members (`fusion`) or their weighted ensemble (`weighted`) as `name`."""
        body: dict[str, Any] = {"name": name, "method": method}
        if members is not None:
            body["members"] = members
        manifest = self.client._json("POST", f"{self.base}/{self.id}/models", json=body)
        return Policy(self.client, manifest)


class Policy:
    """A model in the server's registry; `predict` asks the server for its actions."""

    def __init__(self, client: Client, manifest: dict):
        self.client, self.manifest = client, manifest
        self.name: str = manifest["name"]

    def __repr__(self) -> str:
        return f"Policy({self.name!r})"

    def predict(self, observations: Any) -> list[list[float]]:
        return self.client.predict(self.name, observations)
