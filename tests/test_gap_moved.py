"""reframe_tests/gap.py, ``what_moved``: the reason a failed SizeShapeGap gives, from the
performance values ReFrame recorded for it and for both variants' runs, without running
ReFrame."""
from reframe_tests.gap import what_moved

PART = 'cluster:gpu'          # a partition's full name holds a colon too


def values(**variables):
    """perfvalues as ReFrame keeps them: '<partition>:<name>' ->
    [value, reference, lower threshold, upper threshold, unit, result]."""
    return {f'{PART}:{name}': list(entry) for name, entry in variables.items()}


RUNS = {
    'lrfs': values(pixel_throughput=(3.2, 3.3, -0.1, None, 'Mpx/s', 'pass'),
                   host_peak_memory=(812.0, 800.0, None, 0.05, 'MiB', 'pass'),
                   achieved_gflops=(50.0, 0.0, None, None, 'GFLOP/s', 'pass')),
    'hrvs': values(pixel_throughput=(1.6, 2.0, -0.25, None, 'Mpx/s', 'pass'),
                   host_peak_memory=(1530.0, 1500.0, None, 0.05, 'MiB', 'pass'),
                   achieved_gflops=(25.0, 0.0, None, None, 'GFLOP/s', 'pass')),
}


def test_a_slower_hrvs_is_named_with_both_variants_figures():
    gap = values(hrvs_lrfs_time_per_mpx=(2.0, 1.6, None, 0.15, 'ratio', 'fail'),
                 hrvs_lrfs_host_memory=(1.88, 1.87, None, 0.05, 'ratio', 'pass'))
    assert what_moved(PART, gap, RUNS) == (
        'hrvs_lrfs_time_per_mpx 2, reference 1.6 (+25%): HR&VS slowed relative to LR&FS on '
        'cluster:gpu; pixel_throughput: LR&FS 3.2 Mpx/s (reference 3.3), HR&VS 1.6 Mpx/s '
        '(reference 2)')


def test_a_fall_of_a_ratio_says_the_opposite_way():
    gap = values(hrvs_lrfs_gflops=(0.3, 0.5, -0.15, None, 'ratio', 'fail'))
    assert what_moved(PART, gap, RUNS) == (
        'hrvs_lrfs_gflops 0.3, reference 0.5 (-40%): HR&VS computes slower relative to LR&FS '
        'on cluster:gpu; achieved_gflops: LR&FS 50 GFLOP/s (no reference), HR&VS 25 GFLOP/s '
        '(no reference)')
    faster = values(hrvs_lrfs_time_per_mpx=(1.0, 1.6, -0.15, 0.15, 'ratio', 'fail'))
    assert 'HR&VS sped up relative to LR&FS' in what_moved(PART, faster, RUNS)


def test_every_failed_ratio_is_said_in_order_and_only_those():
    gap = values(hrvs_lrfs_host_memory=(2.5, 1.87, None, 0.05, 'ratio', 'fail'),
                 hrvs_lrfs_time_per_mpx=(1.7, 1.6, None, 0.15, 'ratio', 'pass'),
                 hrvs_lrfs_first_epoch_overhead=(0.5, 1.0, -0.25, 0.25, 'ratio', 'fail'),
                 hrvs_lrfs_gflops=(0.3, 0.5, -0.15, None, 'ratio', 'xfail'))
    said = what_moved(PART, gap, RUNS).split('; ')
    assert said[0] == ('hrvs_lrfs_host_memory 2.5, reference 1.87 (+34%): HR&VS needs more '
                       'host memory relative to LR&FS on cluster:gpu')
    assert said[1] == ('host_peak_memory: LR&FS 812 MiB (reference 800), HR&VS 1530 MiB '
                       '(reference 1500)')
    # The variants' runs log no first_epoch_overhead here: the ratio is said alone.
    assert said[2] == ('hrvs_lrfs_first_epoch_overhead 0.5, reference 1 (-50%): HR&VS\'s '
                       'first epoch costs less relative to LR&FS on cluster:gpu')
    assert len(said) == 3


def test_nothing_failed_nothing_said():
    gap = values(hrvs_lrfs_time_per_mpx=(1.7, 1.6, None, 0.15, 'ratio', 'pass'))
    assert what_moved(PART, gap, RUNS) == ''
    assert what_moved(PART, {}, RUNS) == ''


def test_figures_of_another_partition_are_not_these_runs():
    elsewhere = {v: {'other:cpu:pixel_throughput': [9.0, 9.0, None, None, 'Mpx/s', 'pass']}
                 for v in RUNS}
    gap = values(hrvs_lrfs_time_per_mpx=(2.0, 1.6, None, 0.15, 'ratio', 'fail'))
    assert what_moved(PART, gap, elsewhere) == (
        'hrvs_lrfs_time_per_mpx 2, reference 1.6 (+25%): HR&VS slowed relative to LR&FS on '
        'cluster:gpu')


def test_a_ratio_without_a_reference_value_has_no_change():
    gap = values(hrvs_lrfs_host_memory=(2.5, 0, None, None, 'ratio', 'fail'))
    assert what_moved(PART, gap, {'lrfs': {}, 'hrvs': {}}) == (
        'hrvs_lrfs_host_memory 2.5, reference 0: HR&VS needs more host memory relative to '
        'LR&FS on cluster:gpu')


def test_an_interval_bound_moves_as_its_ratio():
    # ssb-references gives the bounds no reference; one written by hand can still fail.
    gap = values(hrvs_lrfs_time_per_mpx_low=(1.9, 1.5, None, 0.15, 'ratio', 'fail'))
    assert what_moved(PART, gap, RUNS) == (
        'hrvs_lrfs_time_per_mpx_low 1.9, reference 1.5 (+27%): HR&VS slowed relative to '
        'LR&FS on cluster:gpu; pixel_throughput: LR&FS 3.2 Mpx/s (reference 3.3), HR&VS '
        '1.6 Mpx/s (reference 2)')
