"""Training from Python: a job followed through its events to its end, its policy promoted,
downloaded, asked for actions and evaluated on Gymnasium's own env."""

import json

import pytest

import rlsolver
from rlsolver import InvalidInput


def test_a_training_job_streams_its_curve_and_its_policy_acts(client, tmp_path):
    job = rlsolver.train("ppo_discrete", "CartPole-v1", 4000, eval_every=2000, seed=0, client=client)
    events = list(job.events())
    assert events[0].event == "state"
    assert events[-1].event == "state" and events[-1].data["state"] == "succeeded", events[-1]
    evaluations = [e.data for e in events if e.event == "evaluation"]
    assert len(evaluations) >= 1
    assert len(job.metrics()) >= len(evaluations)
    progress = [e.data["steps"] for e in events if e.event == "progress"]
    assert progress == sorted(progress)

    policy = job.policy("cartpole-python", directory=tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["env"] == "CartPole-v1"
    assert any(p.suffix == ".safetensors" for p in tmp_path.iterdir())
    assert client.model("cartpole-python")["problem"] == "drl"
    actions = policy.predict([[0.0, 0.0, 0.0, 0.0], [0.1, 0.5, -0.1, -0.5], [0.0, -1.0, 0.2, 1.0]])
    assert len(actions) == 3 and all(len(a) == 1 and a[0] in (0.0, 1.0) for a in actions)
    assert job.policy("cartpole-python").name == "cartpole-python"  # already promoted: reused
    with pytest.raises(InvalidInput) as error:
        policy.predict([[0.0, 0.0]])
    assert error.value.field == "observations" and "4" in error.value.detail
    with pytest.raises(InvalidInput) as error:
        client.predict(next(m["name"] for m in client.models() if m["problem"] != "drl"), [[0.0]])
    assert error.value.field == "name"

    mean, std = rlsolver.evaluate(policy, "CartPole-v1", episodes=3, seed=0)
    assert 1 <= mean <= 500 and std >= 0


def test_a_population_runs_to_its_end_and_its_leader_acts(client):
    population = client.population(
        algorithm="ppo_discrete",
        env="CartPole-v1",
        size=2,
        total_steps=4000,
        interval_steps=1000,
        scheme="tournament",
        explore={"learning_rate": {"min": 1e-4, "max": 1e-3, "log": True}},
        seed=0,
    )
    states = [e.data["state"] for e in population.events()]
    assert states[0] in ("running", "succeeded") and states[-1] == "succeeded", states
    board = population.info["leaderboard"]
    assert board and all(a["score"] >= b["score"] for a, b in zip(board, board[1:]))
    leader = population.promote("cartpole-leader")
    ensemble = population.promote("cartpole-ensemble", method="weighted", members=2)
    assert len(ensemble.predict([[0.0, 0.0, 0.0, 0.0], [0.1, 0.0, 0.0, 0.0]])) == 2
    assert client.model("cartpole-leader")["problem"] == "drl"
    assert len(leader.predict([[0.0, 0.0, 0.0, 0.0]])) == 1
