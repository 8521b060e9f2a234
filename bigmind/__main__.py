import sys

from bigmind.cli import main

sys.exit(main())
