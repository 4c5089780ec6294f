"""The runs a command reads, from what its options name (perflogs, a results database,
sessions, a time window, test variables; cli/options.py adds those options)."""
from ssb_references.runs import names, perflog, records, resultsdb
from ssb_references.runs.run import TESTS, TEST_NAME, select


class SelectionError(ValueError):
    """Options that select no runs, or that cannot go together."""


def usable(runs):
    """The runs that may count: their system and partition names are names, never paths
    (runs/names.py), and no record decides a verdict alone (runs/records.py)."""
    return records.checked(names.keep_named(runs))


def load_runs(args, read=None, every_system=False):
    """(system, the runs selected; other systems' runs stay in for propose's check).
    ``read``, a list: gets every run in the order its sources hold them. ``every_system``:
    without --system, the runs of every system (system None)."""
    if args.system is not None:
        names.checked(args.system)              # it names a directory and a file
    if args.session and not args.db:
        raise SelectionError('--session needs --db')
    if args.since is not None and args.until is not None and args.since > args.until:
        raise SelectionError('--since is after --until: no run can be in between')
    if args.db:
        runs = resultsdb.read(args.db, TESTS, sessions=set(args.session or []) or None)
        source = args.db
    elif args.perflog:
        runs = [r for path in args.perflog
                for r in perflog.read([path], perflog.test_of(path))]
        source = ', '.join(args.perflog)
    else:
        runs = [r for test in TESTS
                for r in perflog.read(perflog.files(args.perflog_dir, args.system, test), test)]
        if not runs:
            where = f'{args.perflog_dir}/{args.system or "*"}/*/{TEST_NAME}.log'
            raise SelectionError(f'no perflogs {where}: run the suite first, or pass --perflog '
                                 f'or --db')
        source = args.perflog_dir
    runs = usable(runs)
    if read is not None:
        read += runs
    systems = sorted({r.system for r in runs})
    system = args.system
    if system is None and not (every_system and systems):
        if len(systems) != 1:
            raise SelectionError(f'{source}: runs of {len(systems)} systems '
                                 f'({", ".join(systems)}): pass --system' if systems else
                                 f'{source}: no {TEST_NAME} runs')
        system = systems[0]
    if system is not None and (args.db or args.ignore_other_systems or every_system):
        runs = [r for r in runs if r.system == system]    # a results DB holds every system
    where = {}
    for item in args.where:
        name, sep, value = item.partition('=')
        if not sep or not name:
            raise SelectionError(f'--where {item!r}: expected NAME=VALUE')
        where[name] = value
    keep = select(runs, environ=args.environ, since=args.since, until=args.until, where=where)
    return system, keep


def read_all(tests, signature, perflog_dirs=(), perflogs=(), dbs=()):
    """The runs of ``tests`` in every source, each run once: a run in a perflog and in the
    results database is the same run when its ``signature(run)`` is the same too."""
    runs = []
    for d in perflog_dirs:
        for test in tests:
            runs += perflog.read(perflog.files(d, None, test), test)
    for path in perflogs:
        test = perflog.test_of(path)
        runs += perflog.read([path], test) if test in tests else []
    for db in dbs:
        runs += resultsdb.read(db, tests)
    runs = usable(runs)
    seen, unique, signatures = set(), [], {}
    for r in sorted(runs, key=lambda r: r.time):
        sig = signature(r)
        ident = (r.partition, r.test, r.get('name'), round(r.time, 3),
                 signatures.setdefault(sig, sig))          # one copy of each signature
        if ident not in seen:        # a run in a perflog and in the results DB
            seen.add(ident)
            unique.append(r)
    return unique
