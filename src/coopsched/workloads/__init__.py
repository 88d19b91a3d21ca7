"""Workloads: SWF and Slurm readers, the instance and its JSON format, trace windows, the archive's
logs and generators (docs/formats.md)."""
