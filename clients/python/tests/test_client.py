"""The REST client: solves re-scored independently, typed errors naming the field, retries that
honour Retry-After, background solves followed through their events, the package's version."""

import re
from pathlib import Path

import httpx
import pytest

import rlsolver
from rlsolver import Busy, Client, InvalidInput, NotFound, PayloadTooLarge

ROOT = Path(__file__).resolve().parents[3]


def ring(n):
    return {"num_nodes": n, "edges": [[i, (i + 1) % n] for i in range(n)]}


def cut_value(instance, sides):
    return sum(w for u, v, *rest in instance["edges"] for w in [rest[0] if rest else 1] if sides[u] != sides[v])


def test_the_package_version_is_the_servers():
    cargo = (ROOT / "Cargo.toml").read_text()
    assert rlsolver.__version__ == re.search(r'^version = "([^"]+)"', cargo, re.M).group(1)


def test_solve_json_and_text_and_rescore(client):
    instance = ring(10)
    report = client.solve("maxcut", instance, time_limit_s=0.5, seed=1)
    assert report["objective"] == 10
    assert cut_value(instance, report["solution"]) == report["objective"]
    gset = "4 4\n1 2 1\n2 3 1\n3 4 1\n4 1 1\n"
    assert client.solve("maxcut", text=gset, time_limit_s=0.2)["objective"] == 4
    assert rlsolver.solve("maxcut", instance, time_limit_s=0.2)["objective"] == 10


def test_bad_input_is_a_typed_error_naming_the_field(client):
    with pytest.raises(InvalidInput) as error:
        client.solve("tsp", {"coordinates": [[0, 0], [1e308, 1e308], [5, 5]]}, time_limit_s=0.2)
    assert error.value.status == 422 and error.value.field == "coordinates"
    assert "coordinates" in str(error.value)
    with pytest.raises(InvalidInput) as error:
        client.solve("maxcut", ring(4), time_limit_s=-1)
    assert error.value.field and "time_limit_s" in error.value.field
    with pytest.raises(NotFound) as error:
        client.solve("no_such_problem", ring(4))
    assert error.value.status == 404
    with pytest.raises(PayloadTooLarge) as error:
        client.solve("tsp", {"coordinates": [[i, i] for i in range(30_000)]})
    assert error.value.status == 413 and error.value.field == "coordinates"


def test_429_and_503_are_retried_after_retry_after_then_raise_busy():
    calls = []

    def answer(request):
        calls.append(request)
        if len(calls) < 3:
            return httpx.Response(429 if len(calls) == 1 else 503, headers={"retry-after": "0"}, json={"title": "busy", "detail": "full", "status": 429, "type": "about:blank"})
        return httpx.Response(200, json={"objective": 1})

    client = Client("http://test", transport=httpx.MockTransport(answer), retries=3)
    assert client.solve("maxcut", ring(4))["objective"] == 1
    assert len(calls) == 3
    always = Client("http://test", transport=httpx.MockTransport(lambda r: httpx.Response(503, headers={"retry-after": "0"})), retries=2)
    with pytest.raises(Busy):
        always.solve("maxcut", ring(4))


def test_the_api_key_travels_as_a_bearer_token():
    seen = []
    transport = httpx.MockTransport(lambda r: seen.append(r.headers.get("authorization")) or httpx.Response(200, json=[]))
    Client("http://test", api_key="k1", transport=transport).problems()
    assert seen == ["Bearer k1"]


def test_a_background_solve_streams_its_states_and_ends_with_its_report(client):
    import random

    rng = random.Random(3)
    instance = {"num_nodes": 300, "edges": [[u, v] for u in range(300) for v in range(u + 1, 300) if rng.random() < 0.02]}
    job = client.submit("maxcut", instance, time_limit_s=1.0, seed=0)
    events = list(job.events())
    assert events[0].event == "state"
    assert events[-1].event == "state" and events[-1].data["state"] == "succeeded"
    # A job that ends before its stream connects sends only states; the job keeps every incumbent.
    assert all(e.event in ("state", "incumbent") for e in events)
    report = job.result(timeout=60)
    assert report["objective"] == cut_value(instance, report["solution"])
    incumbents = job.incumbents()
    assert incumbents and incumbents[-1]["objective"] == report["objective"]
    assert [i["objective"] for i in incumbents] == sorted(i["objective"] for i in incumbents)
    assert client.solve_job(job.id).state == "succeeded"


def test_models_and_problems_are_listed(client):
    names = {p["name"] for p in client.problems()}
    assert {"maxcut", "qubo", "ising", "tensor_network", "tsp"} <= names
    models = client.models()
    assert models and client.model(models[0]["name"])["sha256"] == models[0]["sha256"]
    with pytest.raises(NotFound) as error:
        client.model("no-such-model")
    assert error.value.field == "name"
