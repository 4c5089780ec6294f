"""Judging new values: against the history of their workload (drift) or the references, the
verdict of one acceptance session, and the interval statistics of both."""
