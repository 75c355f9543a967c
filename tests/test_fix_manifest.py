"""envcheck.fix.manifest: undo removes a folder fix created (the toolkit prefix) only while it holds nothing else.

Real folders, real files: each case fills a prefix the way the toolkit step does, records it, lets a user touch
it, and checks what undo does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envcheck.fix import manifest
from envcheck.fix.apply import apply
from envcheck.fix.steps import Plan, PlannedStep


def filled(tmp_path: Path) -> Path:
    prefix = tmp_path / "cuda-13.1"
    (prefix / "nvidia" / "cu13" / "bin").mkdir(parents=True)
    (prefix / "nvidia" / "cu13" / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (prefix / "nvidia" / "__init__.py").write_text("")
    (prefix / "env.sh").write_text("export CUDA_HOME=x\n")
    os.symlink("cu13", prefix / "nvidia" / "cuda")
    manifest.write(prefix)
    return prefix


def add(prefix: Path, name: str, text: str = "results\n") -> None:
    (prefix / name).parent.mkdir(parents=True, exist_ok=True)
    (prefix / name).write_text(text)


def same_size_later(prefix: Path) -> None:
    nvcc = prefix / "nvidia" / "cu13" / "bin" / "nvcc"
    nvcc.write_text("#!/bin/bash")  # as many bytes as before
    os.utime(nvcc, ns=(nvcc.stat().st_atime_ns, nvcc.stat().st_mtime_ns + 10**9))


@pytest.mark.parametrize("touch, removed, named", [
    (lambda p: None, True, None),
    (lambda p: add(p, "nvidia/__pycache__/__init__.cpython-312.pyc"), True, None),  # Python's byproduct only
    (lambda p: add(p, "my-notes.txt"), False, "my-notes.txt"),
    (lambda p: add(p, "__pycache__/notes.txt"), False, "__pycache__/notes.txt"),  # not a bytecode cache
    (lambda p: add(p, "env.sh", "export CUDA_HOME=/elsewhere\n"), False, "env.sh"),  # edited
    (same_size_later, False, "nvidia/cu13/bin/nvcc"),  # same size, rewritten later
    (lambda p: os.symlink("/etc", p / "nvidia" / "etc"), False, "nvidia/etc"),  # a link is listed, not followed
    (lambda p: (p / manifest.MANIFEST).unlink(), False, manifest.MANIFEST),
    (lambda p: (p / manifest.MANIFEST).write_text("{not json"), False, manifest.MANIFEST),
])
def test_undo_removes_the_prefix_only_if_nothing_in_it_is_new_or_changed(tmp_path, touch, removed, named):
    prefix = filled(tmp_path)
    touch(prefix)
    message = manifest.remove_if_untouched(prefix)
    assert prefix.exists() is not removed, message
    if removed:
        assert "removed" in message
    else:
        assert "kept" in message and named in message
        assert (prefix / "nvidia" / "cu13" / "bin" / "nvcc").exists()  # nothing of it was deleted either


def test_a_folder_replaced_by_a_link_or_a_file_is_not_followed(tmp_path):
    prefix = filled(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    prefix.rename(elsewhere)
    os.symlink(elsewhere, prefix)
    assert "kept" in manifest.remove_if_untouched(prefix) and (elsewhere / "env.sh").exists()
    prefix.unlink()
    prefix.write_text("a file now")
    assert "kept" in manifest.remove_if_untouched(prefix) and prefix.read_text() == "a file now"
    prefix.unlink()
    assert manifest.remove_if_untouched(prefix).endswith("already absent")


def test_undo_step_goes_through_the_manifest(tmp_path):
    prefix = filled(tmp_path)
    add(prefix, "bin/my-tool")
    step = PlannedStep("remove-path", f"remove {prefix}", "envcheck fix created it", params=(("path", str(prefix)),))
    with open(tmp_path / "log", "w") as log:
        outcome = apply(Plan(str(tmp_path / "python"), (step,)), log)
    assert outcome.ok and "kept" in outcome.results[0].message and (prefix / "bin" / "my-tool").exists()
