import sys

from collcert.cli import main

sys.exit(main())
