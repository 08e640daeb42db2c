# Prints, for each flush-NNNN.pprof of a session folder, "NAME END_SECONDS INUSE_BYTES INUSE_OBJECTS MARGIN": when the
# flush ended (wall clock, time_nanos + duration_nanos), the totals of its inuse-space and inuse-objects samples, and
# the half-width of the in-use bytes' 95% sampling range its comment tells (-1 when none does). Reads
# the profile's protobuf itself (gzipped or not), for bench_inuse.sh, which runs where no protobuf module may be.
# Usage: python3 flush_inuse.py SESSION_FOLDER
import glob
import gzip
import os
import sys


def varint(data, i):
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def fields(data):
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 2:
            n, i = varint(data, i)
            value = data[i:i + n]
            i += n
        elif wire == 1:
            value = data[i:i + 8]
            i += 8
        elif wire == 5:
            value = data[i:i + 4]
            i += 4
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, value


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def totals(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    types, strings, sums = [], [], []
    time_ns = duration_ns = 0
    samples, comments = [], []
    for number, wire, value in fields(data):
        if number == 1:
            types.append(dict((n, v) for n, _, v in fields(value)).get(1, 0))
        elif number == 2:
            samples.append(value)
        elif number == 6:
            strings.append(value.decode())
        elif number == 9:
            time_ns = value
        elif number == 10:
            duration_ns = value
        elif number == 13:
            if wire == 2:  # packed
                j = 0
                while j < len(value):
                    c, j = varint(value, j)
                    comments.append(c)
            else:
                comments.append(value)
    sums = [0] * len(types)
    for s in samples:
        k = 0
        for n, wire, v in fields(s):
            if n != 2:
                continue
            if wire == 2:  # packed
                j = 0
                while j < len(v):
                    x, j = varint(v, j)
                    sums[k] += signed(x)
                    k += 1
            else:  # one value per field
                sums[k] += signed(v)
                k += 1
    names = [strings[t] for t in types]
    get = lambda name: sums[names.index(name)] if name in names else 0
    margin = -1
    prefix = "inuse-space sampling margin (95%): "  # engine/flush/flush.h, kInUseMarginComment
    for c in comments:
        if strings[c].startswith(prefix):
            margin = int(strings[c][len(prefix):].split()[0])
    return (time_ns + duration_ns) / 1e9, get("inuse-space"), get("inuse-objects"), margin


for path in sorted(glob.glob(os.path.join(sys.argv[1], "flush-*.pprof"))):
    end, space, objects, margin = totals(path)
    print("%s %.6f %d %d %d" % (os.path.basename(path), end, space, objects, margin))
