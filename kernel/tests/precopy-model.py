#!/usr/bin/env python3
"""Model of the v3 adaptive COW pre-copy heuristic (patch 0003), in user space.

Replays the exact decisions of cow_precopy_adaptive(), __cow_precopy_after_reuse()
and cow_precopy_stream() for one VMA (a page is a candidate while it is still
shared; batches stop at the 2 MiB page-table boundary, 512 pages) and prints
traps, copy faults, pages copied ahead and wasted for seq/burst/stride/hotset/
random/single writers and B = 4, 8, 16, 32.  A model of the algorithm, not a
measurement of the kernel: the guest tests (cow_stats_check, run-kernel-tests.sh
cap) and cowbench matrix measure the real thing.

    kernel/tests/precopy-model.py
"""
# Simulation of the v3 adaptive heuristic (patch 3) on one VMA: exact logic of
# cow_precopy_adaptive/__cow_precopy_after_reuse/cow_precopy_stream, with the
# candidate filter reduced to "page still shared" and the PMD limit (512 pages).
import random
CONF=20
def run(order, npages, B):
    private=[False]*npages; marker=[False]*npages
    nxt=None; mk=None; confirmed=0; pending=0
    copyf=markf=pre=0; maxp=0
    def ahead(page, nr):
        nonlocal pre
        limit=min((page//512+1)*512, npages); a=page+1
        room=max(0,limit-a); n=min(nr,room); done=0
        while done<n and not private[a+done]:
            private[a+done]=True; done+=1
        stop_excl = done<n and private[a+done] if a+done<npages else False
        pre+=done
        if done: marker[a+done-1]=True
        return done, stop_excl, done>0
    def stream(page, conf, cap):
        nonlocal nxt, mk, confirmed, pending
        nr=min(conf//CONF, cap); nx=page+1; done=0; marked=False
        if nr:
            done, excl, marked = ahead(page, nr); nx+=done
            if done<nr and excl: nx+=1
        confirmed=conf; pending=done; nxt=nx; mk=(page+done) if marked else None
        return done
    written=set()
    for p in order:
        written.add(p)
        if not private[p]:
            private[p]=True; copyf+=1
            conf = min(confirmed+1, 1<<20) if p==nxt else 1
            d=stream(p, conf, B-1); maxp=max(maxp,1+d)
        elif marker[p]:
            marker[p]=False
            if mk==p:
                mk=None; markf+=1
                d=stream(p, min(confirmed+pending,1<<20), B); maxp=max(maxp,d)
    wasted=copyf+pre-len(written)
    return dict(copy=copyf, marker=markf, traps=copyf+markf, pre=pre, written=len(written), wasted=wasted, maxp=maxp)
def seq(n): return list(range(n))
def burst(n,L=16,pct=10,seed=1):
    r=random.Random(seed); slots=list(range(n//L)); r.shuffle(slots); k=n//L*pct//100
    return [s*L+i for s in slots[:k] for i in range(L)]
def hot(n,pct=10,seed=2):
    r=random.Random(seed); h=n*pct//100; b=(n-h)//2; return [b+r.randrange(h) for _ in range(n)]
def rnd(n,seed=3):
    o=list(range(n)); random.Random(seed).shuffle(o); return o
print("B | seq16M traps (vs 4096) | copy faults | seq64M traps (vs 16384) | max pages/fault")
for B in (4,8,16,32):
    a=run(seq(4096),4096,B); b=run(seq(16384),16384,B)
    print(f"{B} | {a['traps']} ({100*(a['traps']-4096)/4096:+.1f} %) | {a['copy']} ({100*(a['copy']-4096)/4096:+.1f} %) | {b['traps']} ({100*(b['traps']-16384)/16384:+.1f} %) | {max(a['maxp'],b['maxp'])}")
n=4096
for name,o in (("burst16",burst(n)),("burst64",burst(n,64)),("burst256",burst(n,256)),("stride2",list(range(0,n,2))),("hotset10",hot(n)),("random",rnd(n)),("single",[n//2])):
    r=run(o,n,16); print(name, r, f"wasted {100*r['wasted']/r['written']:.2f} %")
