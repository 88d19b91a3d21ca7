"""Experiments: policy comparisons and the papers' studies (docs/reproduction.md)."""
