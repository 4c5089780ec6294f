"""Helpers that more than one of the suite's packages use (datasets, references)."""
