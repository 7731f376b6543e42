"""The designer: a projection of the model plus commands on a QUndoStack. See app.py for the entry point."""
import os

# Qt's raster engine splits large fills among the threads of a pool and waits for them: on a loaded machine the GUI
# thread then stalls until those threads get a CPU. Painting on the GUI thread alone keeps it responsive (the
# designer capturing a 10 s flood: longest stall 63 ms with the pool, 36 ms without; tests/benchmarks/
# test_capture_gui_bench.py). Set before the first paint, which is after any import of this package.
os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")
