import sys

from checker.mutate.cli import main

sys.exit(main())
