# A stand-in for one rank of a hung job (issue #44 tests): prints a line, then blocks in the
# function named by argv[1], so that its Python stack names that function. It ends when the file
# $DIAGNOSIS_TEST_SENTINEL is removed (the test is over) or after 10 minutes, so no test leaves it
# behind even when its daemon was killed.
import os
import sys
import time

SENTINEL = os.environ.get("DIAGNOSIS_TEST_SENTINEL")
DEADLINE = time.time() + 600


def alive():
    return time.time() < DEADLINE and (SENTINEL is None or os.path.exists(SENTINEL))


def barrier():
    while alive():
        time.sleep(0.2)


def all_gather_into_tensor():
    while alive():
        time.sleep(0.2)


print(f"rank {os.environ.get('RANK', '?')} entering {sys.argv[1]}", flush=True)
globals()[sys.argv[1]]()
