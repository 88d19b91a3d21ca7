"""The audit: how Shapley-fair a recorded schedule was (issue #14)."""
