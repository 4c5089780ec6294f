"""What the payload, the ReFrame tests, ssb-references and the benchmarks agree on, with no
TensorFlow or ReFrame import (the payload's output tags and worker files are in
payload/protocol.py, beside the code that writes them):

- options.py: the workload options, one declaration each (name, payload flag, type, default,
  choices, bounds, variant, identity), and the choices of the payload;
- checks.py: what each option may be, and the combinations the payload refuses;
- flags.py: the options as the payload's command line;
- perf.py: every performance variable the tests log, its unit, summary key and floors.
"""
