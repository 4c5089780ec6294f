"""Perflog records as ReFrame writes them, and ssb-references run in-process: what the
references tests build on."""
from ssb_references.runs import perflog
from ssb_references.cli import references as cli

T0 = 1_800_000_000.0
SYNTH = 'synthetic-mame images_per_class=2 val_per_class=1 scale=0.05 seed=0'

# steady epoch time per run; the other variables follow from it.
PERF_UNITS = {'steady_epoch_time': 's', 'first_epoch_time': 's', 'first_epoch_overhead': 's',
              'throughput': 'img/s', 'pixel_throughput': 'Mpx/s', 'host_peak_memory': 'MiB',
              'input_wait_fraction': 'fraction', 'distinct_shapes': 'shapes',
              'traced_graphs': 'graphs'}


def perf_values(steady, variant='lrfs', memory=650.0):
    shapes = 2 if variant == 'lrfs' else 58
    return {'steady_epoch_time': steady, 'first_epoch_time': steady + 1.0,
            'first_epoch_overhead': 1.0, 'throughput': 58 / steady,
            'pixel_throughput': 1.5 / steady, 'host_peak_memory': memory,
            'input_wait_fraction': 0.02, 'distinct_shapes': shapes, 'traced_graphs': shapes}


def record(steady, i=0, variant='lrfs', system='generic', partition='default', tf='2.21.0',
           epochs=3, environ='builtin', scale='single', result='pass', precision='float32',
           **perf):
    """One perflog record as ReFrame's builtin filelog format writes it (text fields)."""
    values = perf_values(steady, variant)
    values.update(perf)
    rec = {'result': result, 'job_completion_time': '2027-01-15T08:00:00',
           'batch_size': '16' if variant == 'lrfs' else '1', 'crop_size': '224',
           'dataset': SYNTH, 'device': 'cpu', 'environ': environ, 'epochs': str(epochs),
           'hrvs_batching': 'single', 'image_size': '256',
           'job_completion_time_unix': str(T0 + 60 * i), 'job_nodelist': 'node01',
           'jobid': str(1000 + i), 'model': 'smallcnn', 'partition': partition,
           'pixel_budget': '65k', 'retracing': 'per-shape', 'subset': 'train',
           'precision': precision, 'jit_compile': 'false', 'training_step': 'split',
           'system': system, 'tensorflow_version': tf, 'variant': variant}
    if scale is not None:
        rec['scale'] = scale
    for name, value in values.items():
        rec.update({f'{name}_value': str(value), f'{name}_unit': PERF_UNITS[name],
                    f'{name}_ref': '0', f'{name}_lower_thres': 'None',
                    f'{name}_upper_thres': 'None'})
    return rec


def write_perflog(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines, header = [], None
    for rec in records:
        if list(rec) != header:
            header = list(rec)
            lines.append('|'.join(header))
        lines.append('|'.join(rec[k] for k in header))
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def runs_of(records, tmp_path, name='TrainingTest.log'):
    return perflog.read([write_perflog(tmp_path / name, records)])


STEADY = [0.50, 0.51, 0.49]


def run_cli(capsys, *args):
    status = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def report_markdown(capsys, perflog_dir, tmp_path):
    """`ssb-references report --no-plots` of these perflogs: its status and markdown."""
    status, _, _ = run_cli(capsys, 'report', '--perflog-dir', perflog_dir,
                           '--reference-dir', tmp_path / 'refs', '--out', tmp_path / 'r',
                           '--no-plots')
    return status, (tmp_path / 'r' / 'generic-summary.md').read_text()
