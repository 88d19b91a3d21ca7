"""Migration and fairness on related machines: the engine, Greedy Migration and non-migrating
policies, and the EF, WPM, ILV checkers (docs/migration.md)."""
