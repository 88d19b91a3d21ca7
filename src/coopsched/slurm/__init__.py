"""The real scheduler as ground truth (docs/slurm.md): replay a window on a loopback Slurm
(:mod:`.plan`, :mod:`.replay`), compare coopsched's models with its schedule
(:mod:`.validate`), and search the fair-share settings an operator can apply (:mod:`.tune`)."""
