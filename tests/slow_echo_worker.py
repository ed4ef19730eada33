"""A stand-in worker program for tests/test_worker_process.py: answers each input line with itself, half a second later."""

import sys
import time

for line in sys.stdin:
    time.sleep(0.5)
    print(line.strip(), flush=True)
