"""Online scheduling (Skowron & Rzadca): the event-driven engine, the policies, REF, Shapley
values, the fairness metric and exports (docs/online.md)."""
