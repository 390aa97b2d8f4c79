"""How long a large BF.RESERVE blocks the server: the time to map and zero
its bit array, with the module's allocator (docs/REDIS.md, Memory).

Usage: /usr/bin/python3 bench/redis_reserve.py build/redis/amq.so [runs]

Prints, for RedisBloom's largest capacity (2^30) at four error rates, the
filter's bytes and the median, lowest and highest wall time of `runs`
reserves (3 by default), each followed by a DEL.
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "redis"))
from server import Server  # noqa: E402


def main():
    module = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    server = Server(module)
    try:
        r = server.client()
        print("| error rate | bytes | median s | min s | max s |")
        print("|---|---:|---:|---:|---:|")
        for rate in (0.01, 0.0001, 0.00001, 0.000001):
            times, size = [], 0
            for _ in range(runs):
                start = time.perf_counter()
                r.execute_command("BF.RESERVE", "k", rate, 1 << 30, "NONSCALING")
                times.append(time.perf_counter() - start)
                size = r.memory_usage("k")
                r.delete("k")
            print("| %g | %d | %.2f | %.2f | %.2f |" % (rate, size, statistics.median(times),
                                                      min(times), max(times)))
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
