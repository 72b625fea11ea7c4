import sys,re,collections
cur=None; tbs={}; execs=collections.Counter(); ins_exec=collections.Counter()
lines=open(sys.argv[1],errors='replace')
pending=[]
for l in lines:
    if l.startswith('IN:'):
        pending=[]; cur='in'; continue
    if cur=='in':
        m=re.match(r'(0x[0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(.*)',l)
        if m: pending.append((int(m.group(1),16),m.group(3).strip())); continue
        if pending: tbs[pending[0][0]]=pending; cur=None
    if l.startswith('Trace'):
        m=re.search(r'\[[0-9a-f]+/([0-9a-f]+)/',l)
        pc=int(m.group(1),16)
        for a,i in tbs.get(pc,[]): ins_exec[(a,i)]+=1
tot=sum(ins_exec.values())
print("total",tot)
if len(sys.argv)>2:
    with open(sys.argv[2],'w') as f:
        for (a,i),n in sorted(ins_exec.items()): f.write(f"{a:x} {n:8d} {i}\n")
