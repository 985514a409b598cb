"""CPU seconds of `perf record -F <hz>` profiles split into the components of the simulators
report's one-thread profile: MKL's sgemm, libtorch's other kernels, the Python interpreter, the
operating-system kernel, and everything else.

    python benches/perf_split.py --hz 499 ours-0.perf ours-1.perf ours-2.perf

prints each file's seconds per component (samples / hz) and the median and most over the files.
The rules: sgemm is every `mkl_blas_def_sgemm*` symbol; other libtorch is the rest of every
`libtorch*`/`libc10*` shared object; Python is `libpython*` (and a statically linked `python*`
binary); kernel is `[kernel.kallsyms]`; other is what is left (libc's malloc and memmove, MuJoCo,
our own code, the dynamic loader).
"""

import argparse
import re
import statistics
import subprocess
import sys

COMPONENTS = ["total", "sgemm", "other libtorch", "python", "kernel", "other"]

# `perf report --stdio -n` rows: "  55.63%   11894  libtorch_cpu.so   [.] symbol"
ROW = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[[.kgu]\]\s+(.*)$")


def component(dso: str, symbol: str) -> str:
    if dso == "[kernel.kallsyms]":
        return "kernel"
    if symbol.startswith("mkl_blas_def_sgemm"):
        return "sgemm"
    if dso.startswith(("libtorch", "libc10")):
        return "other libtorch"
    if dso.startswith("libpython") or re.fullmatch(r"python[\d.]*", dso):
        return "python"
    return "other"


def split(rows, hz: float) -> dict:
    seconds = dict.fromkeys(COMPONENTS, 0.0)
    for samples, dso, symbol in rows:
        seconds[component(dso, symbol)] += samples / hz
        seconds["total"] += samples / hz
    return seconds


def report_rows(path: str):
    text = subprocess.run(
        ["perf", "report", "-i", path, "--stdio", "-n", "--no-children", "-g", "none", "--sort", "dso,sym"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for line in text.splitlines():
        match = ROW.match(line)
        if match:
            yield int(match.group(1)), match.group(2), match.group(3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hz", type=float, default=499.0, help="the -F of perf record")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    splits = [split(report_rows(path), args.hz) for path in args.files]
    width = max(len(path) for path in args.files)
    print(" " * width + "".join(f"{name:>16}" for name in COMPONENTS))
    for path, seconds in zip(args.files, splits):
        print(f"{path:<{width}}" + "".join(f"{seconds[name]:>16.1f}" for name in COMPONENTS))
    median = {name: statistics.median(s[name] for s in splits) for name in COMPONENTS}
    most = {name: max(s[name] for s in splits) for name in COMPONENTS}
    print(f"{'median (most)':<{width}}" + "".join(f"{f'{median[n]:.1f} ({most[n]:.1f})':>16}" for n in COMPONENTS))


if __name__ == "__main__":
    sys.exit(main())
