"""The values of one session (or one ``drift``) judged together, not one by one.

Judged one by one at 99%, a session of 50 unchanged values flags one of them by chance in
2 sessions of 5 (1 - 0.99^50). Here (judge/family.py):

- each variable's session-to-session spread, on the logarithms, is **pooled** over the
  system's test cases (tests, partitions, variants, models, scales) where Bartlett's test does not
  reject that they share it: a short history (fewer than ``POOL_BELOW`` earlier values)
  then borrows the degrees of freedom of the others, and the verdict's note says so. A
  longer one judges by its own spread: pooling spreads that differ costs false alarms;
- the p-values of all the values judged against history (a rate with the time it follows,
  not on its own) are taken together through **Benjamini-Hochberg** at 1 - confidence:
  when nothing changed, the chance that anything in the session is flagged is at most
  1 - confidence; a slowdown that moves several values (LR&FS and HR&VS, the time to
  accuracy) is found at a lower cost than one value alone;
- each value's interval is shown at the per-value level that decided, so a flagged value is
  outside its interval and an unflagged one inside; the practical floor still applies.
"""
import collections

from ssb_references.judge import drift, family
from ssb_references.reffile import rule
from ssb_references.runs.run import meta_key

POOL_BELOW = 10            # a history this long judges by its own spread
SLOWDOWN = 0.20            # the slowdown the report says a short history cannot catch
SLOWDOWN_VARIABLE = 'steady_epoch_time'


def judge(verdicts, confidence):
    """Re-judge drift's verdicts as one family; returns them."""
    judged = [v for v in verdicts if v.basis == 'history']
    groups = collections.defaultdict(list)
    for v in judged:
        if v.prediction.log:
            groups[(v.run.system, v.variable)].append(v)
    for group in groups.values():
        spread = family.pooled_log_spread([v.past for v in group]) if len(group) > 1 else None
        for v in group:
            if spread is not None and len(v.past) < POOL_BELOW:
                v.prediction = family.log_prediction(v.value, v.past, spread)
                v.note = '; '.join(filter(None, [spread.text(), v.note]))
    # A rate of a judged time is that time seen the other way up: it follows its verdict and
    # is no extra member of the family (it would only make every value's bar higher).
    sources = {(id(v.run), v.variable): v for v in judged}
    family_members = [v for v in judged if _source(v, sources) is None]
    found, level = family.benjamini_hochberg([v.prediction.pvalue for v in family_members],
                                             1 - confidence)
    discovered = {id(v): f for v, f in zip(family_members, found)}
    for v in judged:
        v.status, v.interval, v.detectable = drift.decide(v.variable, v.value, v.prediction,
                                                         level)
        if not discovered[id(_source(v, sources) or v)]:
            v.status = 'ok'
    return verdicts


def _source(verdict, sources):
    """The verdict on the time this rate follows, in the same run; None for any other."""
    follows = rule.policy(verdict.variable).follows
    return sources.get((id(verdict.run), follows)) if follows else None


def basis_text(verdicts, confidence):
    """How many values were judged as one family, and at what per-value level."""
    judged = [v for v in verdicts if v.basis == 'history']
    if not judged:
        return ''
    pooled = sum('spread pooled' in v.note for v in judged)
    level = 1 - judged[0].interval.confidence
    return (f'{len(judged)} value(s) judged together against their history '
            f'(Benjamini-Hochberg at {1 - confidence:.3g}: each value at p <= {level:.2g}, '
            f'rates with the time they follow; {pooled} with a spread pooled over test cases '
            f'that share it)')


def too_short(verdicts):
    """A plain note when a test case's history cannot catch a 20% slowdown, else ''."""
    slow = [v for v in verdicts
            if v.variable == SLOWDOWN_VARIABLE and v.value is not None]
    short = []
    for v in slow:
        centre = v.interval.centre if v.interval else None
        if v.basis != 'history' or v.detectable is None or not centre:
            short.append(f'{meta_key(v.test, v.key)} ({v.basis}: {drift.detectable_text(v)})')
        elif v.detectable / centre > SLOWDOWN:
            n = v.interval.n
            short.append(f'{meta_key(v.test, v.key)} (needs {drift.detectable_text(v)}, n={n})')
    if not short:
        return ''
    return (f'history too short to catch a {SLOWDOWN:.0%} slowdown ({SLOWDOWN_VARIABLE}) in '
            f'{len(short)} of {len(slow)} test case(s): {"; ".join(short)}; each further '
            f'session narrows it')
