"""One run of a test (a perflog record or a stored test case), read from ReFrame's perflogs
or results database, and how runs are selected, grouped and shown."""
