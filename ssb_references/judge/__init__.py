"""Judging new values: against the history of their workload (drift, a session's values
together) or the references, the verdict of one acceptance session, the change points of a
whole history, and the statistics of all three."""
