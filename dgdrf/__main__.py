import sys

from dgdrf.cli import main

sys.exit(main())
