"""The runs a command reads: the options that name them (perflogs, a results database,
sessions, a time window, test variables) and reading them."""
from . import TEST_NAME, compare, options, perflog, reffile, resultsdb
from .options import UsageError
from .runs import TESTS, select

def add_options(p):
    """The options that name the runs to read, and the reference directory."""
    g = p.add_argument_group('runs to read (default: the perflogs under ./perflogs)')
    g.add_argument('--system', help='the system (default: the only one found)')
    g.add_argument('--perflog-dir', default='perflogs', metavar='DIR',
                   help=f'ReFrame perflog directory: DIR/<system>/<partition>/{TEST_NAME}.log')
    g.add_argument('--perflog', action='append', metavar='FILE',
                   help='a perflog file (repeatable) instead of --perflog-dir')
    g.add_argument('--db', metavar='FILE',
                   help="ReFrame's results database (storage/sqlite_db_file) instead of perflogs")
    g.add_argument('--session', action='append', metavar='UUID',
                   help='with --db: only these stored sessions (repeatable)')
    g.add_argument('--environ', help='only runs in this programming environment')
    g.add_argument('--since', type=options.past_time,
                   help='only runs completed at or after this ISO date/time (UTC)')
    g.add_argument('--until', type=options.any_time,
                   help='only runs completed at or before this ISO date/time (UTC)')
    g.add_argument('--where', action='append', metavar='NAME=VALUE', default=[],
                   help='only runs whose logged test variable NAME is VALUE (repeatable), '
                   'e.g. epochs=3')
    g.add_argument('--ignore-other-systems', action='store_true',
                   help='drop runs of other systems instead of refusing')
    p.add_argument('--reference-dir', metavar='DIR',
                   help=f'where <system>.yaml lives (default: <ReFrame reference prefix>/'
                        f'{reffile.SUBDIR}: ${reffile.PREFIX_ENV}, else {reffile.TESTS_DIR}/ '
                        f'of the checkout this runs in)')


def load_runs(args, every_system=False):
    """(system, the runs selected; other systems' runs stay in for propose's check).
    ``every_system``: without --system, the runs of every system (system None)."""
    if args.session and not args.db:
        raise UsageError('--session needs --db')
    if args.since is not None and args.until is not None and args.since > args.until:
        raise UsageError('--since is after --until: no run can be in between')
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
            raise UsageError(f'no perflogs {where}: run the suite first, or pass --perflog or --db')
        source = args.perflog_dir
    systems = sorted({r.system for r in runs})
    system = args.system
    if system is None and not (every_system and systems):
        if len(systems) != 1:
            raise UsageError(f'{source}: runs of {len(systems)} systems ({", ".join(systems)}): '
                             f'pass --system' if systems else f'{source}: no {TEST_NAME} runs')
        system = systems[0]
    if system is not None and (args.db or args.ignore_other_systems or every_system):
        runs = [r for r in runs if r.system == system]    # a results DB holds every system
    where = {}
    for item in args.where:
        name, sep, value = item.partition('=')
        if not sep or not name:
            raise UsageError(f'--where {item!r}: expected NAME=VALUE')
        where[name] = value
    keep = select(runs, environ=args.environ, since=args.since, until=args.until, where=where)
    return system, keep


def read_all(perflog_dirs=(), perflogs=(), dbs=()):
    """The runs of the compared tests in every source, each run once."""
    runs = []
    for d in perflog_dirs:
        for test in compare.TESTS:
            runs += perflog.read(perflog.files(d, None, test), test)
    for path in perflogs:
        test = perflog.test_of(path)
        runs += perflog.read([path], test) if test in compare.TESTS else []
    for db in dbs:
        runs += resultsdb.read(db, compare.TESTS)
    seen, unique = set(), []
    for r in sorted(runs, key=lambda r: r.time):
        ident = (r.partition, r.test, r.get('name'), round(r.time, 3), compare.signature(r))
        if ident not in seen:        # a run in a perflog and in the results DB
            seen.add(ident)
            unique.append(r)
    return unique
