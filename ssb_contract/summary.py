"""Every key of the payload's ``SSB-SUMMARY`` line (docs/payload.md, "Output contract"), by
what it describes, and the settings it echoes, so that a log says what produced it."""
from ssb_contract.options import OPTIONS

# The workload options the summary echoes under their names (those of the other variant's
# runs: None), and the payload's own settings: the batch each device trained at, where the
# input came from, the seed.
ECHOED_OPTIONS = tuple(o.name for o in OPTIONS if o.echoed)
PAYLOAD_SETTINGS = ('batch_size', 'input', 'seed')
SUMMARY_KEYS = frozenset(ECHOED_OPTIONS + PAYLOAD_SETTINGS + (
    # steady state and its spread (summarise.steady_state)
    'epochs', 'steps_per_epoch', 'images_per_epoch', 'first_epoch_s', 'steady_epoch_s',
    'first_epoch_overhead_s', 'steady_epochs', 'steady_epoch_cv', 'images_per_s',
    'images_per_s_cv', 'mpx_per_s', 'mpx_per_s_cv', 'padded_fraction', 'gflops_per_epoch',
    'gflops_per_s', 'first_loss', 'final_loss',
    # shapes and tracing
    'distinct_shapes', 'traced_graphs', 'trace_seconds_per_shape',
    'graph_build_seconds_per_shape', 'compile_seconds',
    # input
    'input_wait_s', 'input_wait_fraction', 'input_images_per_s', 'input_bound',
    'input_bound_fraction', 'memory_input_s', 'mean_pixels_per_image', 'max_pixels_per_image',
    # memory
    'device_peak_bytes', 'host_peak_rss_bytes', 'memory_limit_bytes', 'device_memory',
    # energy
    'energy_per_epoch_j', 'energy_per_image_j', 'mean_power_w', 'energy_source', 'energy_note',
    # peak and FLOPs
    'peak_gflops', 'peak_source', 'peak_fraction', 'flops_convention', 'flops_count_s',
    'peak_measure_s', 'setup_s',
    # validation and time to accuracy
    'validate', 'val_subset', 'val_images', 'val_images_left_out', 'val_loss', 'val_accuracy',
    'val_seconds', 'val_traced_graphs', 'target_accuracy', 'target_reached', 'epochs_to_target',
    'seconds_to_target', 'best_val_accuracy', 'best_val_epoch',
    # staging and preparing (local_data)
    'stage_dir', 'stage_s', 'stage_bytes', 'stage_gb_per_s', 'prepare_s', 'prepare_bytes',
    'prepare_images_per_s',
    # the timed window (hostlock)
    'timing_lock', 'timing_lock_wait_s', 'timed_start_unix', 'timed_end_unix',
    # placement and threads
    'worker', 'workers', 'host', 'replicas', 'strategy', 'global_batch_size', 'intra_op_threads',
    'inter_op_threads', 'cpus_available', 'devices',
    # data and provenance
    'classes', 'dataset', 'dataset_fingerprint', 'dataset_images', 'images_left_out',
    'data_format', 'git_revision', 'versions',
))
