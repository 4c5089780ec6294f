import sys

from payload.cli import main

sys.exit(main())
