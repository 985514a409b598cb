"""Every Python example of the book's Python page runs against the live server."""

from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[3] / "docs/src/python.md"


def examples():
    text = PAGE.read_text()
    return [block.split("```")[0] for block in text.split("```python\n")[1:]]


def test_the_page_has_one_example_per_integration():
    assert len(examples()) == 4
    assert all(len(block.strip().splitlines()) <= 10 for block in examples())


@pytest.mark.parametrize("index", range(4))
def test_each_example_runs(index, tmp_path, monkeypatch, server):
    monkeypatch.chdir(tmp_path)
    exec(compile(examples()[index], f"{PAGE.name} example {index + 1}", "exec"), {})


def test_the_readmes_python_example_runs(tmp_path, monkeypatch, server):
    readme = (PAGE.parents[2] / "README.md").read_text()
    blocks = [block.split("```")[0] for block in readme.split("```python\n")[1:]]
    assert blocks
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block.replace("http://localhost:8080", server), "README.md", "exec"), {})
