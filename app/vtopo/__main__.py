from vtopo.cli import run

run()
