"""`python -m numpile`: the numpile command."""

from .cli import main

raise SystemExit(main())
