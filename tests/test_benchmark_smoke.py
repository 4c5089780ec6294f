"""benchmarks/run.py at a tiny size: it runs and prints every table (its targets are not
checked here: the benchmark is run by hand, on a quiet machine)."""
import json
import os
import subprocess
import sys

from conftest import REPO


def test_tiny_benchmark_prints_every_table(tmp_path):
    out = tmp_path / 'runs.json'
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, 'benchmarks', 'run.py'),
         '--lrfs-model', 'smallcnn', '--lrfs-images', '8', '--lrfs-batch-size', '4',
         '--image-size', '64', '--crop-size', '56', '--repeats', '2', '--memory-repeats', '1',
         '--hdf5-repeats', '1', '--hrvs-images-per-class', '1', '--pixel-budget', '2k',
         '--sections', 'input,hrvs,real',
         '--epochs', '2', '--peak-gflops', '100', '--real-images', '2', '--real-max-mpx', '1',
         '--real-budgets', '4k', '--real-repeats', '1', '--json', str(out)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for heading in ('### 1. Input pipeline', '### 2. HR&VS strategies', '### 3. Fidelity',
                    '### 4. Spread over 2 repeats', '### 5. Real resolution'):
        assert heading in proc.stdout
    assert 'JPEG files / in memory throughput' in proc.stdout
    assert 'HDF5 file / in memory throughput' in proc.stdout
    for strategy in ('single', 'padded', 'bucketed'):
        assert f'| {strategy} |' in proc.stdout
    runs = json.loads(out.read_text())
    assert [len(runs[k]) for k in ('jpeg', 'memory', 'hdf5', 'hrvs', 'real')] == [2, 1, 1, 3, 2]
    assert '| ratio 8 (DCT scaling) |' in proc.stdout
    assert '- 4k: prepared / on the fly throughput' in proc.stdout
    prepared = [r['summary'] for r in runs['real'] if '--prepare' in r['args']]
    assert prepared[0]['prepare_s'] > 0 and prepared[0]['stage_gb_per_s'] > 0
    assert runs['hdf5'][0]['summary']['data_format'] == 'hdf5'
    assert runs['memory'][0]['summary']['input'] == 'memory'
    for run in (r for rs in runs.values() for r in rs):
        assert len(run['arrivals']) == 2            # one arrival time per epoch line


def test_tiny_reference_and_threads_sections_print_their_tables(tmp_path):
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, 'benchmarks', 'run.py'), '--sections',
         'reference,threads', '--threads', '0,1', '--threads-images', '4', '--threads-max-mpx',
         '0.5', '--threads-repeats', '1', '--ref-model', 'smallcnn', '--ref-images', '8',
         '--ref-batch-size', '4', '--ref-shapes', '2', '--ref-repeats', '1',
         '--pixel-budget', '4k', '--hrvs-scale', '0.05', '--lrfs-scale', '0.05'],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '### 6. Reference step: smallcnn' in proc.stdout
    for row in ('| payload, JPEG files | 1 |', '| reference, any input size | 1 |',
                '| payload, split step | 1 |', '| payload, fused step | 1 |',
                '| reference (fused) | 1 |'):
        assert row in proc.stdout
    assert '- payload, JPEG files / reference, any input size: **' in proc.stdout
    assert '- split / fused: **' in proc.stdout
    assert '### 7. Threads: 4 JPEGs' in proc.stdout
    assert '| HR&VS smallcnn 65k | 0 (tf.data default) | 1 |' in proc.stdout
    assert '| LR&FS smallcnn batch 4 | 1 | 1 |' in proc.stdout
