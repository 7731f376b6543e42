from vtopo.cli import main

raise SystemExit(main())
