"""Many machines, one truth: compare two environments (diff) and merge many nodes' reports (fleet).

  node.py     Node, read_node, read_nodes: a doctor JSON report or a pylock.toml, as diff and fleet read them
  diff.py     diff: what changed from A (the one that works) to B, most important first; regressions
  merge.py    merge: groups of nodes with the same outcome, per-check counts, outliers, smoke results

Their texts are render/fleet.py's; the commands are commands/diff.py and commands/fleet.py.
"""

from .diff import Change, Diff, diff
from .merge import Fleet, Group, Outlier, merge
from .node import Node, read_node, read_nodes

__all__ = ["Node", "read_node", "read_nodes", "Change", "Diff", "diff", "Fleet", "Group", "Outlier", "merge"]
