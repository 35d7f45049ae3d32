#!/usr/bin/env python3
"""Login storms against the stock krb5kdc and the protected KDC: `compare`, `soak` and `plot`
(tests/mpctest/storm.py says what each measures).

    PYTHONPATH=tests /usr/bin/python3 tests/load/storm.py compare --build-dir build --out docs/benchmarks
"""

from mpctest.storm import main

if __name__ == "__main__":
    main()
