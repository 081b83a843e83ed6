#!/usr/bin/env python3
"""heapwalk2.py PID: glibc heaps of PID ([heap] and the 64 MiB arena heaps), walked chunk by chunk
through /proc/PID/mem, reading only resident pages (pagemap first: a read would map the zero page).
Reports per heap: resident, resident in pages that hold a live chunk, resident and free, and what
sizes the live chunks on sparsely used pages have."""
import sys, struct, collections
pid = int(sys.argv[1]); PAGE = 4096; HEAP_MAX = 64 << 20
mem = open(f'/proc/{pid}/mem', 'rb'); pm = open(f'/proc/{pid}/pagemap', 'rb')
def present(lo, hi):
    pm.seek(lo // PAGE * 8); raw = pm.read((hi - lo) // PAGE * 8)
    return [bool(v >> 63) for v in struct.unpack(f'<{len(raw)//8}Q', raw)]
regions = []
for l in open(f'/proc/{pid}/maps'):
    f = l.split(); lo, hi = [int(x, 16) for x in f[0].split('-')]
    name = f[5] if len(f) > 5 else ''
    if name == '[heap]' or (name == '' and lo % HEAP_MAX == 0 and f[1].startswith('rw')):
        regions.append((lo, hi, name or 'arena heap'))
def walk(lo, hi, start):
    p = start; out = []
    while p + 16 <= hi:
        hdr = rd(p, 16)
        size = struct.unpack_from('<Q', hdr, 8)[0] & ~7
        if size < 32 or p + size > hi: return out, p
        out.append([p, size, None]); p += size
    return out, p
cache = {}
def rd(a, n):
    b = b''
    while n > 0:
        pg = a // PAGE * PAGE
        if pg not in cache:
            cache[pg] = None
            if res.get(pg):
                mem.seek(pg); cache[pg] = mem.read(PAGE)
        chunk = cache[pg] or bytes(PAGE)
        k = min(n, pg + PAGE - a); b += chunk[a - pg:a - pg + k]; a += k; n -= k
    return b
tot = collections.Counter(); sizes = collections.Counter()
for lo, hi, name in regions:
    pr = present(lo, hi); res = {lo + i * PAGE: v for i, v in enumerate(pr)}
    nres = sum(pr)
    if nres < 256: continue
    end = hi
    if name != '[heap]':
        hsize = struct.unpack_from('<Q', rd(lo, 48), 16)[0]; end = lo + hsize
        best = None
        for off in range(48, 2600, 16):
            ch, stop = walk(lo, end, lo + off)
            if len(ch) > 3 and 0 <= end - stop <= 64: best = ch; break
        chunks = best or []
    else:
        chunks, _ = walk(lo, hi, lo)
    if not chunks: print(name, hex(lo), 'not walked'); continue
    for i in range(len(chunks) - 1):
        chunks[i][2] = bool(struct.unpack_from('<Q', rd(chunks[i + 1][0], 16), 8)[0] & 1)
    chunks[-1][2] = False
    live = collections.defaultdict(int); inuse = 0
    for a, s, u in chunks:
        if not u: continue
        inuse += s
        for pg in range(a // PAGE * PAGE, a + s, PAGE):
            live[pg] += min(a + s, pg + PAGE) - max(a, pg)
    respg = [pg for pg, v in res.items() if v]
    pinned = [pg for pg in respg if live.get(pg)]
    sparse = [pg for pg in pinned if live[pg] < 1024]
    for a, s, u in chunks:
        if u and any(live.get(pg, 0) < 1024 and res.get(pg) for pg in range(a // PAGE * PAGE, a + s, PAGE)):
            sizes[s] += 1
    print(f'{name} {hex(lo)}: {len(chunks)} chunks, in use {inuse>>20} MiB; resident {nres*4>>10} MiB, '
          f'with live {len(pinned)*4>>10} MiB (sparse <1 KiB: {len(sparse)*4>>10} MiB), free {(nres-len(pinned))*4>>10} MiB')
    tot['res'] += nres; tot['pinned'] += len(pinned); tot['sparse'] += len(sparse); tot['inuse'] += inuse
print(f"total resident {tot['res']*4>>10} MiB, pinned {tot['pinned']*4>>10}, sparse {tot['sparse']*4>>10}, in use {tot['inuse']>>20} MiB")
print('sizes of live chunks on sparse pages:', sizes.most_common(20))
