"""bundle: a profile's whole stack for a machine with no network, and opening one there.

  manifest.py   Manifest, Platform, BundleFile: what a bundle holds, for which platform, each file's sha256
  parts.py      split and reassemble: parts no larger than a size, every checksum checked
  gitbundle.py  the CUTLASS commit as a sparse git bundle, and a local git source made back from it
  make.py       make_bundle: pip download with hashes for the target platform, the git bundle, the lock, the manifest
  open.py       open_bundle: reassemble, unpack, check every byte and the platform before anything installs
  offline.py    open_for_fix: a bundle for `fix --bundle`: its wheels folder, its CUTLASS as a local git source

`envcheck bundle` itself is commands/bundle.py. Opening a bundle (fix --bundle, on the air-gapped machine) imports
neither make.py nor packaging.pylock.
"""

from .manifest import BundleError, Manifest, Platform
from .open import OpenedBundle, check_platform, open_bundle

__all__ = ["BundleError", "Manifest", "Platform", "OpenedBundle", "open_bundle", "check_platform"]
