"""Download the real datasets into the user cache (sha256-checked). Same as `tssdpa download`.

Usage: python datasets/download.py [--names ett/ETTh1.csv.gz ...] [--cache-dir DIR] [--force]
"""

import sys

from tssdpa.cli import main

if __name__ == "__main__":
    sys.exit(main(["download", *sys.argv[1:]]))
