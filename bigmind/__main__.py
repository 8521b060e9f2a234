import sys

from bigmind.cli.main import main

sys.exit(main())
