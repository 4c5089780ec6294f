"""The per-system reference files: reading and checking them, the threshold rule, proposing
references from runs, the old next to the new, and writing them."""
