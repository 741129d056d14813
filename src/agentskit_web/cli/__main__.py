"""`python -m agentskit_web.cli`: the same commands as the `agentskit-web` script."""

from . import main

raise SystemExit(main())
