"""bench/gpu_smoke.py: without a GPU it says so and exits 0; with ``--device cpu`` it runs its checks on the CPU
against the CPU (the script's own test); with a GPU (``cuda`` marker) the whole check must hold."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from conftest import REPO

SCRIPT = str(REPO / "bench" / "gpu_smoke.py")


def run(*args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_without_a_gpu_it_says_so_and_exits_0(tmp_path):
    out = run("--out", str(tmp_path / "report.txt"))
    assert out.returncode == 0 and "No CUDA GPU is present" in out.stdout, out.stderr
    shell = subprocess.run(["bash", str(REPO / "bench" / "gpu_smoke.sh")], capture_output=True, text=True, timeout=300)
    assert shell.returncode == 0 and "No CUDA GPU is present" in shell.stdout, shell.stderr


@pytest.mark.slow
def test_cpu_against_cpu_agrees_and_writes_its_report(tmp_path):
    report = tmp_path / "report.txt"
    out = run("--device", "cpu", "--skip", "training", "solvers", "go", "--out", str(report))
    assert out.returncode == 0, out.stdout + out.stderr
    text = report.read_text()
    for name in ("2x2", "3x3", "go5"):
        assert f"network {name}: largest |cpu - cpu| over 4,096 inputs 0.00e+00  ok" in text
    assert "speed: the 3x3 network reads" in text and "every check holds" in text


@pytest.mark.cuda
@pytest.mark.slow
def test_the_whole_check_holds_on_the_gpu(tmp_path):
    out = run("--out", str(tmp_path / "report.txt"), timeout=1200)
    assert out.returncode == 0 and "every check holds" in out.stdout, out.stdout + out.stderr
