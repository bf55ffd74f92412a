# Writes the same random 10 M-edge graph over 1 M vertices twice: integer ids and string keys
# of 20-40 bytes (user-<hex id>-<filler>).
import random, sys
n, m = 1_000_000, 10_000_000
random.seed(7)
def key(i):
    h = f"{(i * 2654435761) % (1 << 32):08x}"
    return f"user-{h}-{i:07d}" + "x" * (i % 21)   # 5+8+1+7 = 21 .. 41 bytes, less the last
with open(sys.argv[1], "w") as fi, open(sys.argv[2], "w") as fs:
    keys = [key(i)[:40] for i in range(n)]
    bi, bs = [], []
    for e in range(m):
        a = random.randrange(n); b = random.randrange(n)
        bi.append(f"{a} {b}\n"); bs.append(f"{keys[a]} {keys[b]}\n")
        if len(bi) == 100000:
            fi.write("".join(bi)); fs.write("".join(bs)); bi.clear(); bs.clear()
    fi.write("".join(bi)); fs.write("".join(bs))
