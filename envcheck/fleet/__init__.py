"""Many machines, one truth: compare two environments (diff) and merge many nodes' reports (fleet).

  node.py     Node, read_node, read_nodes: a doctor JSON report or a pylock.toml, as diff and fleet read them
  diff.py     diff: what changed from A (the one that works) to B, most important first; regressions
  merge.py    merge: groups of nodes with the same outcome, per-check counts, outliers, smoke results
  render.py   render_diff, render_fleet: table, json, markdown
  command.py  run_diff, run_fleet: `envcheck diff` and `envcheck fleet`
"""

from .command import run_diff, run_fleet
from .diff import Change, Diff, diff
from .merge import Fleet, Group, Outlier, merge
from .node import Node, read_node, read_nodes

__all__ = ["Node", "read_node", "read_nodes", "Change", "Diff", "diff", "Fleet", "Group", "Outlier", "merge", "run_diff", "run_fleet"]
