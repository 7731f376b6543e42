import os
import sys

from vtopo.cli import main

try:
    code = main()
    sys.stdout.flush()
except BrokenPipeError:  # the reader went away (`vtopo status | head`): stop quietly, as other tools do
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that the flush at exit fails no more
    code = 141  # 128 + SIGPIPE, as a shell reports a tool ended by it
raise SystemExit(code)
