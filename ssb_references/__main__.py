import sys

from ssb_references.cli.references import main

sys.exit(main())
